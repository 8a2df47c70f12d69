// The C# binding's tests, run under Mono by tests/csharp_test.sh (which starts the servers and the
// C++ reference client and compares the outputs). Each mode exits 0 on success, 1 on a failed
// check (printed), so the script can tell.
//   client HOST PORT SECONDS OUT EXPECTED [TOKEN_FILE]  connect, log snap poses, count characters, allocations
//   badtoken HOST PORT TOKEN_FILE                      a token of another key: ConnectionFailedException
//   dead PORT                                          nobody there: ConnectionFailedException(NoAnswer)
//   unit                                               lifecycle, errors, conventions round trip
//   server SECONDS PORT_FILE                           a managed server streaming "managed-arm"
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Reflection;
using System.Threading;
using Kinesync;

static class BindingTests
{
    static int failures = 0;

    static void Check(bool ok, string what)
    {
        if (ok) return;
        ++failures;
        Console.WriteLine("FAIL: " + what);
    }

    static T Expect<T>(Action action, string what) where T : Exception
    {
        try
        {
            action();
        }
        catch (T e)
        {
            return e;
        }
        catch (Exception e)
        {
            Check(false, what + ": threw " + e.GetType().Name + ": " + e.Message);
            return null;
        }
        Check(false, what + ": did not throw " + typeof(T).Name);
        return null;
    }

    static int Main(string[] args)
    {
        try
        {
            switch (args.Length > 0 ? args[0] : "")
            {
                case "client": Client(args[1], ushort.Parse(args[2]), double.Parse(args[3]), args[4], int.Parse(args[5]),
                                      args.Length > 6 ? args[6] : null); break;
                case "badtoken": BadToken(args[1], ushort.Parse(args[2]), args[3]); break;
                case "dead": Dead(ushort.Parse(args[1])); break;
                case "unit": Unit(); break;
                case "server": Server(double.Parse(args[1]), args[2]); break;
                default: Console.WriteLine("usage: see the head of BindingTests.cs"); return 2;
            }
        }
        catch (Exception e)
        {
            Console.WriteLine("FAIL: " + e);
            return 1;
        }
        return failures == 0 ? 0 : 1;
    }

    static void Client(string host, ushort port, double seconds, string outPath, int expected, string tokenFile)
    {
        var cfg = new ClientConfig { Host = host, Port = port, Strategy = Strategy.Snap };
        if (tokenFile != null) cfg.ConnectToken = File.ReadAllBytes(tokenFile);
        var client = new KinesyncClient(cfg);
        client.Connect();
        client.WaitUntilConnected(5);
        var buffers = new Dictionary<ushort, Kform[]>();
        var lastTick = new Dictionary<ushort, uint>();
        int added = 0;
        using (var log = new StreamWriter(outPath))
        {
            var clock = Stopwatch.StartNew();
            while (clock.Elapsed.TotalSeconds < seconds)
            {
                client.Update();
                ClientEvent e;
                while (client.TryGetEvent(out e)) added += e.Kind == ClientEventKind.CharacterAdded ? 1 : 0;
                for (int i = 0; i < client.CharacterCount; ++i)
                {
                    RemoteCharacterInfo info = client.GetCharacterAt(i);
                    uint last;
                    if (!info.Ready || (lastTick.TryGetValue(info.Id, out last) && last == info.NewestTick)) continue;
                    lastTick[info.Id] = info.NewestTick;
                    Kform[] pose;
                    if (!buffers.TryGetValue(info.Id, out pose)) buffers[info.Id] = pose = new Kform[info.JointCount];
                    client.GetGlobalPose(info.Id, pose);
                    var line = new System.Text.StringBuilder();
                    line.Append(info.NewestTick).Append(' ').Append(info.Id);
                    foreach (Kform k in pose)
                        line.AppendFormat(System.Globalization.CultureInfo.InvariantCulture, " {0:F6} {1:F6} {2:F6}", k.Position.X * info.MetresPerUnit,
                                          k.Position.Y * info.MetresPerUnit, k.Position.Z * info.MetresPerUnit);
                    log.WriteLine(line.ToString());
                }
                Thread.Sleep(4);
            }
        }
        Check(lastTick.Count == expected, "characters shown: " + lastTick.Count + ", the server has " + expected);
        Check(added >= expected, "CharacterAdded events: " + added);
        for (int i = 0; i < client.CharacterCount; ++i)
        {
            string name, skeleton;
            client.GetCharacterName(i, out name, out skeleton);
            RemoteCharacterInfo info = client.GetCharacterAt(i);
            var parents = new int[info.JointCount];
            var offsets = new float[3 * info.JointCount];
            client.GetSkeleton(info.Id, parents, offsets);
            Check(parents[0] == -1 && name.Length > 0 && skeleton.Length > 0, "character " + info.Id + ": root parent " + parents[0] + ", name '" + name + "'");
        }
        ClientStats stats = client.GetStats();
        Check(stats.SnapshotsReceived > 0 && stats.BytesIn > 0 && stats.Malformed == 0,
              "stats: " + stats.SnapshotsReceived + " snapshots, " + stats.BytesIn + " bytes, " + stats.Malformed + " malformed");
        // The last fields: the struct's layout matches the C one to its end.
        Check(stats.ConnectRequests >= 1 && stats.Challenges >= 1 && stats.Challenges <= stats.ConnectRequests && stats.ChallengesForged == 0,
              "handshake: " + stats.ConnectRequests + " requests, " + stats.Challenges + " challenges, " + stats.ChallengesForged + " forged");
        Check(stats.DatagramsLost <= stats.DatagramsIn && stats.DatagramsLate <= stats.DatagramsIn,
              "datagrams: " + stats.DatagramsLost + " lost, " + stats.DatagramsLate + " late, " + stats.DatagramsIn + " in");
        SkeletonStats sk = client.GetSkeletonStats();
        Check(sk.InFull >= 1 && sk.Offered == 0 && sk.ByReference == 0 && sk.Errors == 0 && sk.CacheRefused == 0 && sk.CacheSaveFailures == 0,
              "skeletons: " + sk.InFull + " in full, " + sk.Offered + " offered, " + sk.Errors + " errors");
        Console.WriteLine("client: " + lastTick.Count + " characters, " + stats.SnapshotsReceived + " snapshots, rtt " +
                          stats.RttMs.ToString("F2") + " ms");
        AllocationFreeFrames(client, buffers);
        client.Disconnect();
        client.Dispose();
        client.Dispose();  // twice: nothing happens
        Expect<ObjectDisposedException>(() => client.Update(), "Update after Dispose");
    }

    // 1,000 frames of what a game does each frame, after 60 to warm up: no managed allocation.
    static void AllocationFreeFrames(KinesyncClient client, Dictionary<ushort, Kform[]> buffers)
    {
        var local = new Kform[1024];
        var global = new Kform[1024];
        var unity = new EngineKform[1024];
        Func<long> allocated = AllocationCounter();
        long before = 0;
        double sum = 0;
        for (int frame = 0; frame < 1060; ++frame)
        {
            if (frame == 60) before = allocated();
            client.Update();
            ClientEvent e;
            while (client.TryGetEvent(out e)) sum += e.Tick;
            int n = client.CharacterCount;
            for (int i = 0; i < n; ++i)
            {
                RemoteCharacterInfo info = client.GetCharacterAt(i);
                if (!info.Ready) continue;
                client.GetLocalPose(info.Id, local);
                client.GetGlobalPose(info.Id, global);
                Conventions.ToUnity(info.MetresPerUnit, local, unity, info.JointCount);
                sum += unity[0].Position.X + global[info.JointCount - 1].Velocity.Y;
            }
            sum += client.RenderTime + client.GetStats().RttMs + (int)client.State;
            Thread.Sleep(1);
        }
        long bytes = allocated() - before;
        Console.WriteLine("allocations: " + bytes + " bytes over 1000 frames (checksum " + (sum != 0) + ")");
        Check(bytes == 0, "the per-frame loop allocated " + bytes + " bytes over 1000 frames");
        Check(buffers.Count > 0, "no character to read");
    }

    // GC.GetAllocatedBytesForCurrentThread (Mono 6, .NET Core 3, .NET Framework 4.8): without it
    // the check cannot be made, and says so.
    static Func<long> AllocationCounter()
    {
        MethodInfo m = typeof(GC).GetMethod("GetAllocatedBytesForCurrentThread", BindingFlags.Public | BindingFlags.Static);
        if (m == null) throw new NotSupportedException("this runtime has no GC.GetAllocatedBytesForCurrentThread: allocations cannot be counted");
        return (Func<long>)Delegate.CreateDelegate(typeof(Func<long>), m);
    }

    static void BadToken(string host, ushort port, string tokenFile)
    {
        var client = new KinesyncClient(new ClientConfig { Host = host, Port = port, ConnectToken = File.ReadAllBytes(tokenFile), TimeoutSeconds = 2 });
        client.Connect();
        var e = Expect<ConnectionFailedException>(() => client.WaitUntilConnected(6), "a token of another key");
        if (e != null)
        {
            Console.WriteLine("bad token: " + e.Reason + ": " + e.Message);
            Check(e.Reason == DisconnectCode.TokenInvalid, "reason " + e.Reason);
        }
        Check(client.DisconnectCode == DisconnectCode.TokenInvalid, "the client's code " + client.DisconnectCode);
        client.Dispose();
    }

    static void Dead(ushort port)
    {
        var client = new KinesyncClient(new ClientConfig { Host = "127.0.0.1", Port = port, TimeoutSeconds = 1 });
        client.Connect();
        var clock = Stopwatch.StartNew();
        var e = Expect<ConnectionFailedException>(() => client.WaitUntilConnected(5), "a dead server");
        if (e != null)
        {
            Console.WriteLine("dead server: " + e.Reason + " after " + clock.Elapsed.TotalSeconds.ToString("F2") + " s: " + e.Message);
            Check(e.Reason == DisconnectCode.NoAnswer, "reason " + e.Reason);
        }
        // The library's own verdict, not the wait's: disconnected, no answer.
        Check(client.State == ClientState.Disconnected && client.DisconnectCode == DisconnectCode.NoAnswer,
              "state " + client.State + ", code " + client.DisconnectCode);
        client.Disconnect();  // after the failure: safe
        client.Dispose();
    }

    static void Unit()
    {
        Check(Library.Version.Length > 0, "version");
        // Configuration refused naming the field; a token that is not one.
        var bad = Expect<InvalidConfigException>(() => new KinesyncClient(new ClientConfig { TimeoutSeconds = -1 }), "timeout -1");
        if (bad != null) Check(bad.Message.Contains("timeout_s"), "message names the field: " + bad.Message);
        Expect<InvalidTokenException>(() => new KinesyncClient(new ClientConfig { ConnectToken = new byte[] { 1, 2, 3 } }), "a 3-byte token");
        Expect<KinesyncException>(() => Tokens.Issue("not hex", new[] { "127.0.0.1:40000" }, 1, 60), "a key that is not hex");
        byte[] token = Tokens.Issue(new string('a', 64), new[] { "127.0.0.1:40000" }, 7, 60);
        Check(token.Length > 100, "token size " + token.Length);
        // Dispose twice, after a disconnect, and use after dispose.
        var client = new KinesyncClient(new ClientConfig { Port = 1 });
        var cache = Expect<InvalidConfigException>(() => client.SetSkeletonCache("/dev/null/skeletons"), "a cache under a device");
        if (cache != null) Check(cache.Message.Contains("skeleton_cache_dir"), "message names the field: " + cache.Message);
        client.SetSkeletonCache(null);
        client.Disconnect();
        client.Dispose();
        client.Dispose();
        Expect<ObjectDisposedException>(() => client.Connect(), "Connect after Dispose");
        client.Disconnect();  // a no-op once disposed
        // A server refuses a bad skeleton and a bad pose with their types and messages.
        var server = new KinesyncServer(new ServerConfig { Network = false });
        Expect<InvalidSkeletonException>(() => server.AddSkeleton("bad", new[] { -1, 2, 0 }, null, new float[9], 1), "parent after child");
        ushort sk = server.AddSkeleton("arm", new[] { -1, 0, 1 }, new[] { "root", "shoulder", "hand" }, new float[] { 0, 0, 0, 0, 150, 0, 0, 60, 0 }, 0.01f);
        ushort c = server.AddCharacter(sk, "arm");
        var pose = ArmPose(0);
        pose[1].Position.Y = float.NaN;
        var e = Expect<InvalidPoseException>(() => server.SetPose(c, pose), "a NaN");
        if (e != null) Check(e.Message.Contains("joint 1"), "message names the joint: " + e.Message);
        Expect<UnknownIdException>(() => server.SetPose(99, ArmPose(0)), "unknown character");
        server.SetPose(c, ArmPose(0));
        Expect<KinesyncArgumentException>(() => server.SetLookAhead(c, ArmPose(3), 3.0f, 0), "a 3 s look-ahead");
        server.Close();
        server.Dispose();
        server.Dispose();
        ConventionsRoundTrip();
    }

    // kinesync -> Unity -> kinesync gives the pose back; Unity's axes are as documented.
    static void ConventionsRoundTrip()
    {
        var pose = ArmPose(0.37);
        var unity = new EngineKform[3];
        var back = new Kform[3];
        Conventions.ToUnity(0.01f, pose, unity, 3);
        Conventions.FromEngine(Engine.Unity, 0.01f, unity, back, 3);
        float worstPos = 0, worstRot = 0, worstVel = 0;
        for (int j = 0; j < 3; ++j)
        {
            worstPos = Math.Max(worstPos, Diff(pose[j].Position, back[j].Position));
            worstVel = Math.Max(worstVel, Math.Max(Diff(pose[j].Velocity, back[j].Velocity), Diff(pose[j].AngularVelocity, back[j].AngularVelocity)));
            QuatWxyz a = pose[j].Rotation, b = back[j].Rotation;
            float dot = Math.Abs(a.W * b.W + a.X * b.X + a.Y * b.Y + a.Z * b.Z);
            worstRot = Math.Max(worstRot, 1 - dot);
        }
        Console.WriteLine("conventions round trip (Unity): position " + worstPos + " units, velocity " + worstVel + ", 1 - |q.q'| " + worstRot);
        Check(worstPos < 1e-3f && worstVel < 1e-3f && worstRot < 1e-6f, "round trip");
        // Metres, Y up, mirrored: kinesync +X (left) is Unity -X (Unity's +X is right).
        Check(Math.Abs(unity[0].Position.X + pose[0].Position.X * 0.01f) < 1e-5f, "Unity x = -kinesync x in metres: " + unity[0].Position.X);
        Check(Math.Abs(unity[1].Position.Y - 1.5f) < 1e-5f, "shoulder 1.5 m up: " + unity[1].Position.Y);
        Expect<KinesyncArgumentException>(() => Conventions.ToUnity(0.01f, pose, unity, 4), "count beyond the arrays");
    }

    static float Diff(Vec3 a, Vec3 b) { return Math.Max(Math.Abs(a.X - b.X), Math.Max(Math.Abs(a.Y - b.Y), Math.Abs(a.Z - b.Z))); }

    // A 3-joint arm in centimetres: the root walks along x at 100 cm/s, the shoulder swings.
    static Kform[] ArmPose(double t)
    {
        var p = new Kform[3];
        p[0] = Kform.Rest(new Vec3((float)(100 * t), 0, 0));
        p[0].Velocity = new Vec3(100, 0, 0);
        p[1] = Kform.Rest(new Vec3(0, 150, 0));
        double a = 0.6 * Math.Sin(2 * t), da = 1.2 * Math.Cos(2 * t);
        p[1].Rotation = new QuatWxyz((float)Math.Cos(a / 2), 0, 0, (float)Math.Sin(a / 2));
        p[1].AngularVelocity = new Vec3(0, 0, (float)da);
        p[2] = Kform.Rest(new Vec3(0, 60, 0));
        return p;
    }

    static void Server(double seconds, string portFile)
    {
        using (var server = new KinesyncServer(new ServerConfig { Port = 0, Io = IoMode.Pumped }))
        {
            ushort sk = server.AddSkeleton("arm", new[] { -1, 0, 1 }, new[] { "root", "shoulder", "hand" },
                                           new float[] { 0, 0, 0, 0, 150, 0, 0, 60, 0 }, 0.01f);
            ushort c = server.AddCharacter(sk, "managed-arm");
            server.SetPose(c, ArmPose(0));
            File.WriteAllText(portFile, server.Port.ToString());
            var clock = Stopwatch.StartNew();
            for (int tick = 1; tick <= (int)(seconds * 60); ++tick)
            {
                while (clock.Elapsed.TotalSeconds < tick / 60.0)
                {
                    server.Poll();
                    Thread.Sleep(1);
                }
                server.SetPose(c, ArmPose(tick / 60.0));
                server.EndTick();
            }
            Console.WriteLine("managed server: " + (int)(seconds * 60) + " ticks, " + server.ClientCount + " clients at the end");
            server.Close();
        }
    }
}
