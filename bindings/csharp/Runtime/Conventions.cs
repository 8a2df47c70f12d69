using System;

namespace Kinesync
{
    /// <summary>
    /// kinesync's conventions (right-handed, Y up, the skeleton's units, w x y z) to an engine's
    /// and back, values and velocities alike, by the C API's conversion. Local and global poses
    /// convert the same way. No allocation.
    /// </summary>
    public static class Conventions
    {
        /// <summary>The first <paramref name="count"/> kforms of a skeleton of
        /// <paramref name="metresPerUnit"/> into the engine's axes, units and handedness.</summary>
        public static void ToEngine(Engine engine, float metresPerUnit, Kform[] input, EngineKform[] output, int count)
        {
            CheckSizes(input == null ? -1 : input.Length, output == null ? -1 : output.Length, count);
            Native.Check(Native.ks_pose_to_engine((int)engine, metresPerUnit, input, output, count));
        }

        /// <summary>The inverse: an engine's kforms into kinesync's, in units of <paramref name="metresPerUnit"/>.</summary>
        public static void FromEngine(Engine engine, float metresPerUnit, EngineKform[] input, Kform[] output, int count)
        {
            CheckSizes(input == null ? -1 : input.Length, output == null ? -1 : output.Length, count);
            Native.Check(Native.ks_pose_from_engine((int)engine, metresPerUnit, input, output, count));
        }

        /// <summary>Unity: metres, Y up, Z forward, left-handed; Rotation is x y z w as in UnityEngine.Quaternion.</summary>
        public static void ToUnity(float metresPerUnit, Kform[] input, EngineKform[] output, int count)
        {
            ToEngine(Engine.Unity, metresPerUnit, input, output, count);
        }

        private static void CheckSizes(int input, int output, int count)
        {
            if (input < 0 || output < 0) throw new ArgumentNullException(input < 0 ? "input" : "output");
            if (count < 0 || count > input || count > output)
                throw new KinesyncArgumentException("Conventions: count " + count + " for arrays of " + input + " and " + output);
        }
    }
}
