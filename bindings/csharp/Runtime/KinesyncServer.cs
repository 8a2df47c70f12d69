using System;
using System.Runtime.InteropServices;

namespace Kinesync
{
    /// <summary>How a <see cref="KinesyncServer"/> serves. Defaults as in ks_server_config_init.</summary>
    public sealed class ServerConfig
    {
        public string Bind = "127.0.0.1";
        /// <summary>0: any free port (read it back from <see cref="KinesyncServer.Port"/>).</summary>
        public ushort Port = 40000;
        /// <summary>False: no socket (an offline run that only records).</summary>
        public bool Network = true;
        public float TickHz = 60, SnapshotHz = 30;
        /// <summary>Per client, bits per second.</summary>
        public float BandwidthBps = 256000;
        public int MaxClients = 32;
        public double TimeoutSeconds = 5;
        public IoMode Io = IoMode.OwnThread;
        /// <summary>A recording to write (null: none).</summary>
        public string RecordPath;
        /// <summary>The key shared with the game's backend, 64 hex digits; null: dev mode, no authentication.</summary>
        public string PrivateKeyHex;
        /// <summary>"address:port" tokens must name; null: Bind and Port.</summary>
        public string PublicAddress;
    }

    /// <summary>
    /// Streams a game's own characters: add skeletons and characters, set each character's pose
    /// (with velocities) every tick, end the tick. Use from one thread (the game's).
    /// </summary>
    public sealed class KinesyncServer : IDisposable
    {
        private readonly ServerHandle handle_;

        /// <exception cref="InvalidConfigException">a field out of range (named)</exception>
        /// <exception cref="KinesyncNetworkException">cannot listen</exception>
        public KinesyncServer(ServerConfig config)
        {
            if (config == null) throw new ArgumentNullException("config");
            var c = new Native.ServerConfig();
            Native.ks_server_config_init(ref c);
            IntPtr bind = Ansi(config.Bind), record = Ansi(config.RecordPath), key = Ansi(config.PrivateKeyHex),
                   address = Ansi(config.PublicAddress);
            try
            {
                c.bind = bind;
                c.port = config.Port;
                c.network = config.Network ? 1 : 0;
                c.tick_hz = config.TickHz;
                c.snapshot_hz = config.SnapshotHz;
                c.bandwidth_bps = config.BandwidthBps;
                c.max_clients = config.MaxClients;
                c.timeout_s = config.TimeoutSeconds;
                c.io = (int)config.Io;
                c.record_path = record;
                c.private_key_hex = key;
                c.public_address = address;
                Native.Check(Native.ks_server_create(ref c, out handle_));
            }
            finally
            {
                foreach (IntPtr p in new[] { bind, record, key, address }) Marshal.FreeHGlobal(p);
            }
        }

        public ushort Port { get { return Native.ks_server_port(Live()); } }
        public uint ClientCount { get { return Native.ks_server_client_count(Live()); } }

        /// <summary>A skeleton: parents[j] &lt; j (-1 for the root), joint names (null: "j0", "j1", ...),
        /// rest offsets (3 floats per joint) in the skeleton's units.</summary>
        public ushort AddSkeleton(string name, int[] parents, string[] jointNames, float[] offsets, float metresPerUnit)
        {
            if (parents == null) throw new ArgumentNullException("parents");
            if (offsets == null || offsets.Length != 3 * parents.Length)
                throw new KinesyncArgumentException("AddSkeleton: offsets must hold 3 floats per joint (" + 3 * parents.Length + ")");
            if (jointNames != null && jointNames.Length != parents.Length)
                throw new KinesyncArgumentException("AddSkeleton: " + jointNames.Length + " joint names for " + parents.Length + " joints");
            IntPtr n = Ansi(name);
            IntPtr[] names = null;
            try
            {
                if (jointNames != null)
                {
                    names = new IntPtr[jointNames.Length];
                    for (int j = 0; j < names.Length; ++j) names[j] = Ansi(jointNames[j]);
                }
                ushort id;
                Native.Check(Native.ks_server_add_skeleton(Live(), n, parents.Length, parents, names, offsets, metresPerUnit, out id));
                return id;
            }
            finally
            {
                Marshal.FreeHGlobal(n);
                if (names != null) foreach (IntPtr p in names) Marshal.FreeHGlobal(p);
            }
        }

        public ushort AddCharacter(ushort skeleton, string name)
        {
            IntPtr n = Ansi(name);
            try
            {
                ushort id;
                Native.Check(Native.ks_server_add_character(Live(), skeleton, n, out id));
                return id;
            }
            finally { Marshal.FreeHGlobal(n); }
        }

        public void RemoveCharacter(ushort character) { Native.Check(Native.ks_server_remove_character(Live(), character)); }

        /// <summary>This tick's pose: joint 0 in the world, the others local, with velocities.</summary>
        /// <exception cref="InvalidPoseException">wrong joint count, a value not finite, a rotation not unit (named)</exception>
        public void SetPose(ushort character, Kform[] joints)
        {
            if (joints == null) throw new ArgumentNullException("joints");
            Native.Check(Native.ks_server_set_pose(Live(), character, joints, joints.Length));
        }

        /// <summary>Optional, after SetPose: the pose <paramref name="seconds"/> (0..2] ahead that the
        /// game's animation reaches if nothing is decided meanwhile; <paramref name="plan"/> goes up
        /// at each decision its earlier look-aheads could not know (docs/FIDELITY.md, "Look-ahead"). It must
        /// be computed from the game's state at this tick alone, never from a later decision
        /// (<c>kinesync-replay A.ksrec --honesty B.ksrec --decision-tick T</c> checks two recordings).</summary>
        public void SetLookAhead(ushort character, Kform[] joints, float seconds, ushort plan)
        {
            if (joints == null) throw new ArgumentNullException("joints");
            Native.Check(Native.ks_server_set_look_ahead(Live(), character, joints, joints.Length, seconds, plan));
        }

        /// <summary>A discontinuity clients must not blend across; returns nothing, the epoch moves on.</summary>
        public void Teleport(ushort character) { Native.Check(Native.ks_server_teleport(Live(), character)); }
        public void Reset(ushort character) { Native.Check(Native.ks_server_reset(Live(), character)); }

        /// <summary>Publishes the tick; returns its number.</summary>
        public uint EndTick()
        {
            uint tick;
            Native.Check(Native.ks_server_end_tick(Live(), out tick));
            return tick;
        }

        /// <summary>Network I/O (pumped mode).</summary>
        public void Poll() { Native.Check(Native.ks_server_poll(Live())); }

        /// <summary>Goodbye to clients, recording closed (its error thrown here).</summary>
        public void Close() { Native.Check(Native.ks_server_close(Live())); }

        /// <summary>Frees the native server. Safe to call more than once.</summary>
        public void Dispose() { handle_.Dispose(); }

        private ServerHandle Live()
        {
            if (handle_.IsClosed) throw new ObjectDisposedException("KinesyncServer");
            return handle_;
        }

        private static IntPtr Ansi(string s) { return s == null ? IntPtr.Zero : Marshal.StringToHGlobalAnsi(s); }
    }

    /// <summary>What a game's backend does: connect tokens for its players.</summary>
    public static class Tokens
    {
        /// <summary>A token for player <paramref name="clientId"/>, good for <paramref name="validForSeconds"/>
        /// on the servers named ("address:port", numeric; 1 to 8).</summary>
        public static byte[] Issue(string privateKeyHex, string[] servers, ulong clientId, uint validForSeconds)
        {
            if (privateKeyHex == null) throw new ArgumentNullException("privateKeyHex");
            if (servers == null) throw new ArgumentNullException("servers");
            IntPtr key = Marshal.StringToHGlobalAnsi(privateKeyHex);
            var names = new IntPtr[servers.Length];
            try
            {
                for (int i = 0; i < names.Length; ++i) names[i] = Marshal.StringToHGlobalAnsi(servers[i] ?? "");
                var buffer = new byte[2048];
                UIntPtr size;
                Native.Check(Native.ks_token_issue(key, names, names.Length, clientId, validForSeconds, buffer, (UIntPtr)buffer.Length, out size));
                var token = new byte[(int)size];
                Array.Copy(buffer, token, token.Length);
                return token;
            }
            finally
            {
                Marshal.FreeHGlobal(key);
                foreach (IntPtr p in names) Marshal.FreeHGlobal(p);
            }
        }
    }

    /// <summary>The library itself.</summary>
    public static class Library
    {
        /// <summary>"0.1.0"</summary>
        public static string Version { get { return Native.Str(Native.ks_version()); } }
    }
}
