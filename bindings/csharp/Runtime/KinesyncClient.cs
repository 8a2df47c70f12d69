using System;
using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Kinesync
{
    /// <summary>What a <see cref="KinesyncClient"/> connects to and how it shows characters.</summary>
    public sealed class ClientConfig
    {
        public string Host = "127.0.0.1";
        public ushort Port = 40000;
        public Strategy Strategy = Strategy.DeadBlendSod;
        /// <summary>Pumped (the default): <see cref="KinesyncClient.Update"/> does the network I/O.</summary>
        public IoMode Io = IoMode.Pumped;
        /// <summary>Seconds without a word from the server before the session ends.</summary>
        public double TimeoutSeconds = 5;
        /// <summary>Negative: never reconnect on its own (a token opens one session).</summary>
        public double ReconnectAfterSeconds = -1;
        /// <summary>A connect token as the game's backend issued it; null for a dev-mode server.
        /// With one, the client connects to the token's first server (Host and Port are not used).</summary>
        public byte[] ConnectToken;
    }

    /// <summary>
    /// Shows a kinesync server's characters: connect, call <see cref="Update"/> once per frame,
    /// read events and poses. Poses are copied into arrays the caller owns; after set-up nothing
    /// on the per-frame path allocates on the managed heap. Use from one thread (the game's).
    /// </summary>
    public sealed class KinesyncClient : IDisposable
    {
        private readonly ClientHandle handle_;

        /// <summary>Checks the configuration, resolves the host and opens a socket.</summary>
        /// <exception cref="InvalidConfigException">a field out of range (named)</exception>
        /// <exception cref="InvalidTokenException">ConnectToken is not a token</exception>
        /// <exception cref="KinesyncNetworkException">the host does not resolve</exception>
        public KinesyncClient(ClientConfig config)
        {
            if (config == null) throw new ArgumentNullException("config");
            var c = new Native.ClientConfig();
            Native.ks_client_config_init(ref c);
            string strategyName = StrategyNames.Of(config.Strategy);  // before anything is allocated: it may throw
            IntPtr host = Marshal.StringToHGlobalAnsi(config.Host ?? "");
            IntPtr strategy = Marshal.StringToHGlobalAnsi(strategyName);
            GCHandle token = default(GCHandle);
            try
            {
                c.host = host;
                c.port = config.Port;
                c.strategy = strategy;
                c.io = (int)config.Io;
                c.timeout_s = config.TimeoutSeconds;
                c.reconnect_after_s = config.ReconnectAfterSeconds;
                if (config.ConnectToken != null)
                {
                    token = GCHandle.Alloc(config.ConnectToken, GCHandleType.Pinned);
                    c.connect_token = token.AddrOfPinnedObject();
                    c.connect_token_size = (UIntPtr)config.ConnectToken.Length;
                }
                Native.Check(Native.ks_client_create(ref c, out handle_));
            }
            finally
            {
                if (token.IsAllocated) token.Free();
                Marshal.FreeHGlobal(host);
                Marshal.FreeHGlobal(strategy);
            }
        }

        /// <summary>Starts the handshake (with the configured token, if any).</summary>
        public void Connect() { Native.Check(Native.ks_client_connect(Live())); }

        /// <summary>Connects again with a fresh token (a token opens one session).</summary>
        public void Connect(byte[] token)
        {
            if (token == null) throw new ArgumentNullException("token");
            Native.Check(Native.ks_client_connect_token(Live(), token, (UIntPtr)token.Length));
        }

        /// <summary>
        /// Pumps <see cref="Update"/> until connected, sleeping a frame between calls.
        /// </summary>
        /// <exception cref="ConnectionFailedException">the handshake failed or the session ended (its reason)</exception>
        /// <exception cref="TimeoutException"><paramref name="timeoutSeconds"/> passed first (the handshake goes on)</exception>
        public void WaitUntilConnected(double timeoutSeconds)
        {
            var clock = Stopwatch.StartNew();
            while (true)
            {
                Update();
                ClientState s = State;
                if (s == ClientState.Connected) return;
                if (s == ClientState.Disconnected || s == ClientState.Idle)
                    throw new ConnectionFailedException(DisconnectCode, "kinesync: connection failed: " + DisconnectReason);
                if (clock.Elapsed.TotalSeconds > timeoutSeconds)
                    throw new TimeoutException("kinesync: not connected after " + timeoutSeconds + " s (still " + s + ")");
                System.Threading.Thread.Sleep(5);
            }
        }

        /// <summary>Once per render frame: network (when pumped), characters in and out, every character rendered.</summary>
        public void Update() { Native.Check(Native.ks_client_update(Live())); }

        /// <summary>Network I/O without rendering (pumped mode).</summary>
        public void Poll() { Native.Check(Native.ks_client_poll(Live())); }

        public ClientState State { get { return (ClientState)Native.ks_client_get_state(Live()); } }

        /// <summary>Why the last session ended or the handshake failed (None while none did).</summary>
        public DisconnectCode DisconnectCode { get { return (DisconnectCode)Native.ks_client_disconnect_code(Live()); } }
        public string DisconnectReason { get { return Native.Str(Native.ks_client_disconnect_reason(Live())); } }

        /// <summary>The next event since the last Update; false when none is left.</summary>
        public bool TryGetEvent(out ClientEvent e)
        {
            Native.Event n;
            bool got = Native.ks_client_next_event(Live(), out n) == 1;
            e = got ? new ClientEvent { Kind = (ClientEventKind)n.kind, Character = n.character, Epoch = n.epoch, Tick = n.tick }
                    : default(ClientEvent);
            return got;
        }

        /// <summary>Characters known after the last Update (indices 0 .. CharacterCount - 1, by id).</summary>
        public int CharacterCount { get { return Native.ks_client_character_count(Live()); } }

        public RemoteCharacterInfo GetCharacterAt(int index)
        {
            Native.CharacterInfo n;
            Native.Check(Native.ks_client_character_at(Live(), index, out n));
            return new RemoteCharacterInfo
            {
                Id = n.id, SkeletonId = n.skeleton_id, JointCount = n.joint_count, Ready = n.ready != 0, Epoch = n.epoch,
                MetresPerUnit = n.metres_per_unit, NewestTick = n.newest_tick, Snapshots = n.snapshots, LookAhead = n.look_ahead != 0
            };
        }

        /// <summary>The character's name and its skeleton's (allocates: read them once, at CharacterAdded).</summary>
        public void GetCharacterName(int index, out string name, out string skeletonName)
        {
            Native.CharacterInfo n;
            Native.Check(Native.ks_client_character_at(Live(), index, out n));
            name = Native.Str(n.name);
            skeletonName = Native.Str(n.skeleton_name);
        }

        /// <summary>The character's skeleton: parents (-1 for the root) and rest offsets, 3 floats per joint.</summary>
        public void GetSkeleton(ushort character, int[] parents, float[] offsets)
        {
            if (parents == null) throw new ArgumentNullException("parents");
            if (offsets == null || offsets.Length < 3 * parents.Length)
                throw new KinesyncArgumentException("GetSkeleton: offsets must hold 3 floats per joint (" + 3 * parents.Length + ")");
            Native.Check(Native.ks_client_skeleton(Live(), character, parents, offsets, parents.Length));
        }

        /// <summary>The rendered pose, joint 0 in the world and the others relative to their parent.</summary>
        public void GetLocalPose(ushort character, Kform[] joints)
        {
            if (joints == null) throw new ArgumentNullException("joints");
            Native.Check(Native.ks_client_local_pose(Live(), character, joints, joints.Length));
        }

        /// <summary>The rendered pose with every joint in the world (velocities too).</summary>
        public void GetGlobalPose(ushort character, Kform[] joints)
        {
            if (joints == null) throw new ArgumentNullException("joints");
            Native.Check(Native.ks_client_global_pose(Live(), character, joints, joints.Length));
        }

        /// <summary>Where the player watches from (metres): the nearest characters come first.</summary>
        public void SetViewpoint(float x, float y, float z) { Native.Check(Native.ks_client_set_viewpoint(Live(), x, y, z)); }

        /// <summary>A directory (created when missing) where the client keeps the skeletons it receives,
        /// offering them to the server from the next Connect on, so joining again is quicker; null or
        /// "" for none. Throws (InvalidConfig) when the directory cannot be made.</summary>
        public void SetSkeletonCache(string dir)
        {
            // UTF-8 and NUL-terminated: a profile folder may hold any character.
            byte[] utf8 = System.Text.Encoding.UTF8.GetBytes((dir ?? "") + "\0");
            Native.Check(Native.ks_client_set_skeleton_cache(Live(), utf8));
        }

        public SkeletonStats GetSkeletonStats()
        {
            SkeletonStats s;
            Native.Check(Native.ks_client_get_skeleton_stats(Live(), out s));
            return s;
        }

        /// <summary>The server time (seconds) the last Update rendered at.</summary>
        public double RenderTime { get { return Native.ks_client_render_time(Live()); } }

        public ClientStats GetStats()
        {
            ClientStats s;
            Native.Check(Native.ks_client_get_stats(Live(), out s));
            return s;
        }

        /// <summary>Says goodbye: the server frees the slot at once. Safe when not connected.</summary>
        public void Disconnect()
        {
            if (!handle_.IsClosed) Native.Check(Native.ks_client_disconnect(handle_));
        }

        /// <summary>Frees the native client. Safe to call more than once.</summary>
        public void Dispose() { handle_.Dispose(); }

        private ClientHandle Live()
        {
            if (handle_.IsClosed) throw new ObjectDisposedException("KinesyncClient");
            return handle_;
        }
    }

    /// <summary>The names the C API and the command-line programs use for strategies.</summary>
    public static class StrategyNames
    {
        public static string Of(Strategy s)
        {
            switch (s)
            {
                case Strategy.Snap: return "snap";
                case Strategy.Interp: return "interp";
                case Strategy.Hermite: return "hermite";
                case Strategy.Extrap: return "extrap";
                case Strategy.DeadBlend: return "deadblend";
                case Strategy.DeadBlendSod: return "deadblend+sod";
                default: throw new ArgumentOutOfRangeException("s", s, "not a Strategy");
            }
        }
    }
}
