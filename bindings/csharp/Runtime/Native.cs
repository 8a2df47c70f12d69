using System;
using System.Runtime.InteropServices;

namespace Kinesync
{
    /// <summary>Owns a ks_client: destroyed once, when released (Dispose or finalizer).</summary>
    internal sealed class ClientHandle : SafeHandle
    {
        public ClientHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.ks_client_destroy(handle); return true; }
    }

    /// <summary>Owns a ks_server.</summary>
    internal sealed class ServerHandle : SafeHandle
    {
        public ServerHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.ks_server_destroy(handle); return true; }
    }

    /// <summary>The C API (kinesync.h), one declaration per function. Strings are passed as IntPtr
    /// (ANSI, freed by the caller) so that no marshaller allocates on per-frame paths.</summary>
    internal static class Native
    {
        // libkinesync.so / kinesync.dll / libkinesync.dylib: Unity's Plugins folder, or the loader's path.
        private const string Lib = "kinesync";

        [StructLayout(LayoutKind.Sequential)]
        internal struct ServerConfig
        {
            public IntPtr bind;
            public ushort port;
            public int network;
            public float tick_hz, snapshot_hz, bandwidth_bps;
            public int max_clients;
            public double timeout_s;
            public int io;
            public IntPtr record_path, private_key_hex, public_address;
            public int insecure_dev, insecure_dev_public;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct ClientConfig
        {
            public IntPtr host;
            public ushort port;
            public IntPtr strategy;
            public int io;
            public double timeout_s, reconnect_after_s;
            public IntPtr connect_token;
            public UIntPtr connect_token_size;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct Event
        {
            public int kind;
            public ushort character, epoch;
            public uint tick;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct CharacterInfo
        {
            public ushort id, skeleton_id;
            public int joint_count, ready;
            public ushort epoch;
            public float metres_per_unit;
            public IntPtr name, skeleton_name;
            public uint newest_tick;
            public ulong snapshots;
            public int look_ahead;
        }

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr ks_last_error();
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr ks_version();
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr ks_result_name(int r);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void ks_server_config_init(ref ServerConfig cfg);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_token_issue(IntPtr key_hex, IntPtr[] servers, int server_count, ulong client_id,
                                                                    uint valid_for_s, [Out] byte[] output, UIntPtr capacity, out UIntPtr out_size);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_create(ref ServerConfig cfg, out ServerHandle server);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void ks_server_destroy(IntPtr server);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern ushort ks_server_port(ServerHandle s);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_add_skeleton(ServerHandle s, IntPtr name, int joint_count, int[] parents,
                                                                            IntPtr[] joint_names, float[] offsets, float metres_per_unit,
                                                                            out ushort id);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_add_character(ServerHandle s, ushort skeleton, IntPtr name, out ushort id);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_remove_character(ServerHandle s, ushort character);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_set_pose(ServerHandle s, ushort character, Kform[] joints, int count);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_set_look_ahead(ServerHandle s, ushort character, Kform[] joints, int count,
                                                                              float seconds, ushort plan);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_teleport(ServerHandle s, ushort character);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_reset(ServerHandle s, ushort character);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_end_tick(ServerHandle s, out uint tick);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_poll(ServerHandle s);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_server_close(ServerHandle s);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern uint ks_server_client_count(ServerHandle s);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void ks_client_config_init(ref ClientConfig cfg);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_create(ref ClientConfig cfg, out ClientHandle client);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern void ks_client_destroy(IntPtr client);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_connect(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_connect_token(ClientHandle c, byte[] token, UIntPtr size);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern IntPtr ks_client_disconnect_reason(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_disconnect_code(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_disconnect(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_update(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_poll(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_get_state(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_set_viewpoint(ClientHandle c, float x, float y, float z);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_set_skeleton_cache(ClientHandle c, byte[] utf8Dir);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_get_skeleton_stats(ClientHandle c, out SkeletonStats s);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_next_event(ClientHandle c, out Event e);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_character_count(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_character_at(ClientHandle c, int index, out CharacterInfo info);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_skeleton(ClientHandle c, ushort character, [Out] int[] parents, [Out] float[] offsets,
                                                                        int capacity);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_local_pose(ClientHandle c, ushort character, [Out] Kform[] joints, int capacity);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_global_pose(ClientHandle c, ushort character, [Out] Kform[] joints, int capacity);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern double ks_client_render_time(ClientHandle c);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_client_get_stats(ClientHandle c, out ClientStats stats);

        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_pose_to_engine(int engine, float metres_per_unit, Kform[] input,
                                                                       [Out] EngineKform[] output, int count);
        [DllImport(Lib, CallingConvention = CallingConvention.Cdecl)] internal static extern int ks_pose_from_engine(int engine, float metres_per_unit, EngineKform[] input,
                                                                         [Out] Kform[] output, int count);

        internal static string Str(IntPtr p) { return p == IntPtr.Zero ? "" : Marshal.PtrToStringAnsi(p); }

        /// <summary>Throws the typed exception for a failed call, with the library's message.</summary>
        internal static void Check(int result)
        {
            if (result != 0) throw KinesyncException.From((ResultCode)result, Str(ks_last_error()));
        }
    }
}
