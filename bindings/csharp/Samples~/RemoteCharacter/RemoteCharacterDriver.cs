using Kinesync;
using UnityEngine;

/// <summary>
/// Drives a rig's Transforms from a character a kinesync server streams. Put it on any GameObject,
/// list the rig's bones in the skeleton's joint order (joint 0, the root, moves in the world; the
/// others take local rotations), and press Play with a server running.
/// </summary>
public class RemoteCharacterDriver : MonoBehaviour
{
    [Tooltip("The kinesync server's address")] public string host = "127.0.0.1";
    [Tooltip("Its UDP port")] public int port = 40000;
    [Tooltip("The character's name on the server (empty: the first character)")] public string characterName = "";
    [Tooltip("The rig's bones in the skeleton's joint order")] public Transform[] bones = new Transform[0];
    [Tooltip("Move the bones' local positions too (the rig's own rest offsets otherwise)")] public bool drivePositions = false;

    private KinesyncClient client_;
    private int character_ = -1;
    private bool look_ = false;  // a character was added: look for ours
    private Kform[] pose_ = new Kform[0];
    private EngineKform[] unity_ = new EngineKform[0];
    private float metresPerUnit_ = 1f;

    void OnEnable()
    {
        if (port < 1 || port > 65535)
        {
            Debug.LogWarning("kinesync: port " + port + " is not a UDP port");
            return;
        }
        try
        {
            client_ = new KinesyncClient(new ClientConfig { Host = host, Port = (ushort)port });
            client_.Connect();
        }
        catch (KinesyncException e)
        {
            Debug.LogWarning("kinesync: " + e.Message);
            if (client_ != null) client_.Dispose();
            client_ = null;
        }
    }

    void OnDisable()
    {
        if (client_ == null) return;
        client_.Disconnect();
        client_.Dispose();
        client_ = null;
        character_ = -1;
    }

    void Update()
    {
        if (client_ == null) return;
        client_.Update();
        ClientEvent e;
        while (client_.TryGetEvent(out e))
        {
            if (e.Kind == ClientEventKind.Disconnected) Debug.LogWarning("kinesync: " + client_.DisconnectReason);
            if (e.Kind == ClientEventKind.CharacterAdded) look_ = true;
            if (e.Kind == ClientEventKind.CharacterRemoved && e.Character == character_) character_ = -1;
        }
        if (character_ < 0 && look_) Find();
        if (character_ < 0) return;
        client_.GetLocalPose((ushort)character_, pose_);
        Conventions.ToUnity(metresPerUnit_, pose_, unity_, pose_.Length);
        int n = Mathf.Min(bones.Length, unity_.Length);
        for (int j = 0; j < n; ++j)
        {
            if (bones[j] == null) continue;
            EngineKform k = unity_[j];
            var rotation = new Quaternion(k.Rotation.X, k.Rotation.Y, k.Rotation.Z, k.Rotation.W);
            var position = new Vector3(k.Position.X, k.Position.Y, k.Position.Z);
            if (j == 0)
            {
                bones[j].position = position;
                bones[j].rotation = rotation;
            }
            else
            {
                bones[j].localRotation = rotation;
                if (drivePositions) bones[j].localPosition = position;
            }
        }
    }

    // The character to show, among those added (reads names: only after a CharacterAdded, until
    // ours is found and ready).
    private void Find()
    {
        bool waiting = false;
        for (int i = 0; i < client_.CharacterCount; ++i)
        {
            RemoteCharacterInfo info = client_.GetCharacterAt(i);
            string name, skeleton;
            client_.GetCharacterName(i, out name, out skeleton);
            if (characterName.Length > 0 && name != characterName) continue;
            if (!info.Ready)
            {
                waiting = true;
                continue;
            }
            character_ = info.Id;
            metresPerUnit_ = info.MetresPerUnit;
            pose_ = new Kform[info.JointCount];
            unity_ = new EngineKform[info.JointCount];
            if (bones.Length != info.JointCount)
                Debug.LogWarning("kinesync: " + name + " has " + info.JointCount + " joints, the rig lists " + bones.Length + " bones");
            return;
        }
        look_ = waiting;  // ours is there but not ready yet: look again next frame
    }
}
