using System;

namespace Kinesync
{
    /// <summary>The C API's result codes (ks_result).</summary>
    public enum ResultCode
    {
        Ok = 0, InvalidArgument = 1, Network = 2, Io = 3, State = 4, Internal = 5, InvalidSkeleton = 6,
        InvalidPose = 7, InvalidConfig = 8, UnknownId = 9, InvalidToken = 10, Unsupported = 11
    }

    /// <summary>
    /// A refusal or failure of the native library. The message names the function, the field and
    /// the value; <see cref="Code"/> says what kind. Subclasses let a caller catch one kind.
    /// </summary>
    public class KinesyncException : Exception
    {
        public ResultCode Code { get; private set; }
        public KinesyncException(ResultCode code, string message) : base(message) { Code = code; }

        internal static KinesyncException From(ResultCode code, string message)
        {
            switch (code)
            {
                case ResultCode.InvalidArgument: return new KinesyncArgumentException(message);
                case ResultCode.Network: return new KinesyncNetworkException(message);
                case ResultCode.Io: return new KinesyncIOException(message);
                case ResultCode.State: return new KinesyncStateException(message);
                case ResultCode.InvalidSkeleton: return new InvalidSkeletonException(message);
                case ResultCode.InvalidPose: return new InvalidPoseException(message);
                case ResultCode.InvalidConfig: return new InvalidConfigException(message);
                case ResultCode.UnknownId: return new UnknownIdException(message);
                case ResultCode.InvalidToken: return new InvalidTokenException(message);
                case ResultCode.Unsupported: return new KinesyncUnsupportedException(message);
                default: return new KinesyncException(code, message);
            }
        }
    }

    /// <summary>A null, a buffer too small, a value out of range.</summary>
    public class KinesyncArgumentException : KinesyncException { public KinesyncArgumentException(string m) : base(ResultCode.InvalidArgument, m) { } }
    /// <summary>Cannot bind, cannot resolve.</summary>
    public class KinesyncNetworkException : KinesyncException { public KinesyncNetworkException(string m) : base(ResultCode.Network, m) { } }
    /// <summary>A file (the recording).</summary>
    public class KinesyncIOException : KinesyncException { public KinesyncIOException(string m) : base(ResultCode.Io, m) { } }
    /// <summary>Not possible now (after close, before a pose).</summary>
    public class KinesyncStateException : KinesyncException { public KinesyncStateException(string m) : base(ResultCode.State, m) { } }
    /// <summary>No joints, not one root, a parent after its child, more than 1024 joints.</summary>
    public class InvalidSkeletonException : KinesyncException { public InvalidSkeletonException(string m) : base(ResultCode.InvalidSkeleton, m) { } }
    /// <summary>A wrong joint count, a value not finite, a rotation not unit, a scale not positive.</summary>
    public class InvalidPoseException : KinesyncException { public InvalidPoseException(string m) : base(ResultCode.InvalidPose, m) { } }
    /// <summary>A configuration field out of range (the message names it).</summary>
    public class InvalidConfigException : KinesyncException { public InvalidConfigException(string m) : base(ResultCode.InvalidConfig, m) { } }
    /// <summary>No such skeleton or character.</summary>
    public class UnknownIdException : KinesyncException { public UnknownIdException(string m) : base(ResultCode.UnknownId, m) { } }
    /// <summary>Not in this build of the native library (a server function in the client-only Windows build).</summary>
    public class KinesyncUnsupportedException : KinesyncException { public KinesyncUnsupportedException(string m) : base(ResultCode.Unsupported, m) { } }
    /// <summary>Not a connect token, or one that names another server.</summary>
    public class InvalidTokenException : KinesyncException { public InvalidTokenException(string m) : base(ResultCode.InvalidToken, m) { } }

    /// <summary>
    /// A connection that did not open or did not last: <see cref="Reason"/> says why (a wrong-key
    /// token gives TokenInvalid, a dead server NoAnswer).
    /// </summary>
    public class ConnectionFailedException : KinesyncException
    {
        public DisconnectCode Reason { get; private set; }
        public ConnectionFailedException(DisconnectCode reason, string message) : base(ResultCode.State, message) { Reason = reason; }
    }
}
