using System.Runtime.InteropServices;

namespace Kinesync
{
    /// <summary>Three floats, laid out as in the C API.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Vec3
    {
        public float X, Y, Z;
        public Vec3(float x, float y, float z) { X = x; Y = y; Z = z; }
        public override string ToString() { return "(" + X + ", " + Y + ", " + Z + ")"; }
    }

    /// <summary>A rotation in kinesync's order: w first.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct QuatWxyz
    {
        public float W, X, Y, Z;
        public QuatWxyz(float w, float x, float y, float z) { W = w; X = x; Y = y; Z = z; }
        public static readonly QuatWxyz Identity = new QuatWxyz(1, 0, 0, 0);
    }

    /// <summary>A rotation in the engines' order (Unity, Unreal, Godot): w last.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct QuatXyzw
    {
        public float X, Y, Z, W;
        public QuatXyzw(float x, float y, float z, float w) { X = x; Y = y; Z = z; W = w; }
    }

    /// <summary>
    /// One joint's kineform in kinesync's conventions (right-handed, Y up, the skeleton's units):
    /// value and velocity of position, rotation and scale. Joint 0 is the root in the world; the
    /// others are relative to their parent, except in a global pose. Angular velocity is in the
    /// parent's frame (rad/s); scale velocity is d(log scale)/dt. Same layout as ks_kform.
    /// </summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Kform
    {
        public Vec3 Position;
        public QuatWxyz Rotation;
        public Vec3 Scale;
        public Vec3 Velocity;
        public Vec3 AngularVelocity;
        public Vec3 ScaleVelocity;

        /// <summary>At rest: identity rotation, unit scale, no velocity.</summary>
        public static Kform Rest(Vec3 position)
        {
            return new Kform { Position = position, Rotation = QuatWxyz.Identity, Scale = new Vec3(1, 1, 1) };
        }
    }

    /// <summary>
    /// A kineform in an engine's conventions (<see cref="Conventions"/>): axes, units and
    /// handedness of the engine, the rotation with w last. Same layout as ks_kform.
    /// </summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct EngineKform
    {
        public Vec3 Position;
        public QuatXyzw Rotation;
        public Vec3 Scale;
        public Vec3 Velocity;
        public Vec3 AngularVelocity;
        public Vec3 ScaleVelocity;
    }

    /// <summary>How the library does its network I/O.</summary>
    public enum IoMode
    {
        /// <summary>The library runs its own network thread.</summary>
        OwnThread = 0,
        /// <summary>The caller's Update/Poll does the I/O (one thread, the game's).</summary>
        Pumped = 1
    }

    /// <summary>How a client turns late, lossy snapshots into the pose shown now (docs/FIDELITY.md).</summary>
    public enum Strategy
    {
        /// <summary>The newest snapshot as it arrived.</summary>
        Snap,
        /// <summary>Linear interpolation 100 ms in the past.</summary>
        Interp,
        /// <summary>Cubic Hermite interpolation with the snapshots' velocities, 100 ms in the past.</summary>
        Hermite,
        /// <summary>Dead reckoning from the newest snapshot with its velocities.</summary>
        Extrap,
        /// <summary>Extrapolation dead-blended into each newer snapshot.</summary>
        DeadBlend,
        /// <summary>The default: extrapolation plus a second-order-dynamics correction (smooth, C1).</summary>
        DeadBlendSod
    }

    /// <summary>A client's connection state.</summary>
    public enum ClientState { Idle = 0, Connecting = 1, Challenged = 2, Connected = 3, Disconnected = 4 }

    /// <summary>What a client event reports.</summary>
    public enum ClientEventKind { Connected = 0, Disconnected = 1, CharacterAdded = 2, CharacterRemoved = 3, Teleport = 4, Reset = 5 }

    /// <summary>Why a session ended or a handshake failed.</summary>
    public enum DisconnectCode
    {
        None = 0, Unspecified = 1, ClientClosed = 2, ServerShutdown = 3, TimedOut = 4,
        /// <summary>Server down, wrong address or port, UDP blocked.</summary>
        NoAnswer = 5,
        ServerFull = 6, TooManyFromAddress = 7, TokenExpired = 8,
        /// <summary>Issued with another key, or damaged.</summary>
        TokenInvalid = 9,
        TokenWrongServer = 10, TokenUsed = 11, TokenRequired = 12, VersionMismatch = 13, NotAcknowledging = 14,
        NoToken = 15,
        /// <summary>A session from this address (or player) is live: retry once it ends.</summary>
        SessionInUse = 16
    }

    /// <summary>Engines whose conventions <see cref="Conventions"/> converts to and from.</summary>
    public enum Engine
    {
        /// <summary>Metres, Y up, Z forward, X left, right-handed, w x y z.</summary>
        Kinesync = 0,
        /// <summary>Centimetres, Z up, X forward, left-handed, x y z w.</summary>
        Unreal = 1,
        /// <summary>Metres, Y up, Z forward, left-handed, x y z w.</summary>
        Unity = 2,
        /// <summary>Metres, Y up, right-handed, x y z w.</summary>
        Godot = 3
    }

    /// <summary>A client event (no allocation to read).</summary>
    public struct ClientEvent
    {
        public ClientEventKind Kind;
        /// <summary>The character, for character events.</summary>
        public ushort Character;
        /// <summary>Teleport / Reset: the epoch that starts.</summary>
        public ushort Epoch;
        /// <summary>Teleport / Reset: the server tick it takes effect at.</summary>
        public uint Tick;
    }

    /// <summary>A character a client knows (names: <see cref="KinesyncClient.GetCharacterName"/>).</summary>
    public struct RemoteCharacterInfo
    {
        public ushort Id;
        public ushort SkeletonId;
        public int JointCount;
        /// <summary>A snapshot has arrived: its poses are meaningful.</summary>
        public bool Ready;
        /// <summary>Epoch of the motion shown (it changes at each teleport or reset).</summary>
        public ushort Epoch;
        /// <summary>The skeleton's units in metres (0.01 for centimetres).</summary>
        public float MetresPerUnit;
        /// <summary>Server tick of the newest snapshot.</summary>
        public uint NewestTick;
        public ulong Snapshots;
        /// <summary>The server sends its look-ahead; the strategy's "+ahead" form shows it.</summary>
        public bool LookAhead;
    }

    /// <summary>A client's counters since it was created.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct ClientStats
    {
        public double RttMs;
        public ulong BytesIn, BytesOut, DatagramsIn, DatagramsOut;
        public ulong SnapshotsReceived, SnapshotsLost, SnapshotsLate;
        /// <summary>Datagrams that were not kinesync's, or damaged.</summary>
        public ulong Malformed;
        /// <summary>Snapshot entries refused alone (and resynchronised).</summary>
        public ulong EntriesRefused;
        public ulong Reconnects;
        /// <summary>Handshakes, every attempt: ConnectRequests sent, Challenges taken
        /// (Challenges / ConnectRequests is the share answered), forged Challenges refused.</summary>
        public ulong ConnectRequests, Challenges, ChallengesForged;
        /// <summary>Snapshot entries of characters whose skeleton the client does not hold yet
        /// (expected while joining: snapshots travel right behind the definitions).</summary>
        public ulong EntriesEarly;
        /// <summary>The server's datagrams lost on the way (gaps in their sequence, less late
        /// ones), and late (reordered).</summary>
        public ulong DatagramsLost, DatagramsLate;
    }

    /// <summary>Skeletons, over every connection: offered as already held (the skeleton cache),
    /// taken by reference, received in full, refused; cache files refused and skeletons it failed to keep.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct SkeletonStats
    {
        public ulong Offered, ByReference, InFull, Errors;
        public ulong CacheRefused, CacheSaveFailures;
    }
}
