// Stand-ins for the few UnityEngine types the package's sample uses, so that mcs can compile it
// here (Unity itself is not available). Only the members the sample touches.
namespace UnityEngine
{
    public class Object { }
    public class Component : Object { }
    public class Behaviour : Component { }
    public class MonoBehaviour : Behaviour { }

    public struct Vector3
    {
        public float x, y, z;
        public Vector3(float x, float y, float z) { this.x = x; this.y = y; this.z = z; }
    }

    public struct Quaternion
    {
        public float x, y, z, w;
        public Quaternion(float x, float y, float z, float w) { this.x = x; this.y = y; this.z = z; this.w = w; }
    }

    public class Transform : Component
    {
        public Vector3 position, localPosition;
        public Quaternion rotation, localRotation;
    }

    // Unity's font glyph struct: here so that a sample naming kinesync's character info without
    // its namespace fails to compile, as it would in Unity.
    public struct CharacterInfo
    {
        public int index;
    }

    public static class Debug
    {
        public static void LogWarning(object message) { System.Console.Error.WriteLine(message); }
    }

    public static class Mathf
    {
        public static int Min(int a, int b) { return a < b ? a : b; }
    }

    [System.AttributeUsage(System.AttributeTargets.Field)]
    public class TooltipAttribute : System.Attribute
    {
        public TooltipAttribute(string tooltip) { }
    }
}
