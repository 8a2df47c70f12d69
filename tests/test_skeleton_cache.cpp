// Skeletons a client already holds: their canonical bytes and hash (the same on every platform and
// crypto backend), the cache directory that keeps them across sessions (damaged and foreign files
// refused by name), and a session that offers them in its handshake and takes a server's
// references from them, refusing a reference to anything it did not offer. Built into the
// client-side tests (tests/client_side) too, so the Windows client runs it under Wine.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <kinesync/common/errors.h>

#include "client/src/session.h"
#include "client/src/skeleton_cache.h"
#include "common/src/net/protocol.h"
#include "common/src/net/skeleton_hash.h"

using namespace ks;
namespace fs = std::filesystem;

namespace {

Skeleton arm() {
    Skeleton s;
    s.names = {"root", "shoulder", "hand"};
    s.parents = {-1, 0, 1};
    s.offsets = {{0, 0, 0}, {0, 150, 0}, {0, 60, -0.5f}};
    return s;
}

// A directory of this test's own, removed at the end.
struct TempDir {
    fs::path path;
    TempDir() {
        std::random_device rd;
        path = fs::temp_directory_path() / ("ks-skeleton-cache-" + std::to_string(rd()) + std::to_string(rd()));
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

bool same_offsets(const Skeleton& a, const Skeleton& b) {
    if (a.offsets.size() != b.offsets.size()) return false;
    for (size_t j = 0; j < a.offsets.size(); ++j)
        if (a.offsets[j].x != b.offsets[j].x || a.offsets[j].y != b.offsets[j].y || a.offsets[j].z != b.offsets[j].z) return false;
    return true;
}

std::string utf8(const fs::path& p) {
    const std::u8string u = p.u8string();
    return std::string(u.begin(), u.end());
}

std::vector<uint8_t> read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& p, const std::vector<uint8_t>& b) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

}  // namespace

// The hash is of explicit little-endian bytes, so x86-64, ARM64 and the Windows build (libgcrypt's
// BLAKE2b) agree. The value is Python's hashlib.blake2b(digest_size=32) of the bytes skeleton_hash.h
// describes, built by hand with struct.pack: the format is what the header says.
TEST(SkeletonHash, CanonicalBytesRoundTripAndTheHashIsTheSameOnEveryPlatform) {
    const std::vector<uint8_t> bytes = net::canonical_skeleton(arm(), 0.01f);
    EXPECT_EQ(bytes.size(), 11u + 3 * 15 + (4 + 8 + 4));
    EXPECT_EQ(net::to_hex(net::skeleton_hash(arm(), 0.01f)), "c5c045054bd38216be161c017dd4cd1bf118a265ea16e614ddcbce2c92cb9cdc");
    std::string why;
    const auto back = net::parse_canonical_skeleton(bytes, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->skeleton.names, arm().names);
    EXPECT_EQ(back->skeleton.parents, arm().parents);
    EXPECT_TRUE(same_offsets(back->skeleton, arm()));
    EXPECT_EQ(back->metres_per_unit, 0.01f);
    EXPECT_EQ(net::skeleton_hash_from_hex(net::to_hex(net::skeleton_hash(arm(), 0.01f))), net::skeleton_hash(arm(), 0.01f));
    EXPECT_FALSE(net::skeleton_hash_from_hex(std::string(64, 'G')));
    EXPECT_FALSE(net::skeleton_hash_from_hex(std::string(63, '0')));
    EXPECT_FALSE(net::skeleton_hash_from_hex(std::string(64, 'A'))) << "one spelling per name: lower case";
}

TEST(SkeletonHash, EveryFieldTheCodecAndFkUseChangesTheHash) {
    const net::SkeletonHash base = net::skeleton_hash(arm(), 0.01f);
    Skeleton s = arm();
    s.names[2] = "hand_r";
    EXPECT_NE(net::skeleton_hash(s, 0.01f), base) << "a joint name";
    s = arm();
    s.parents[2] = 0;
    EXPECT_NE(net::skeleton_hash(s, 0.01f), base) << "a parent";
    s = arm();
    s.offsets[2].z = std::nextafter(s.offsets[2].z, 0.0f);
    EXPECT_NE(net::skeleton_hash(s, 0.01f), base) << "one float step of an offset";
    EXPECT_NE(net::skeleton_hash(arm(), 0.0100001f), base) << "metres per unit";
    s = arm();
    s.names.push_back("finger");
    s.parents.push_back(2);
    s.offsets.push_back({0, 1, 0});
    EXPECT_NE(net::skeleton_hash(s, 0.01f), base) << "a joint more";
    EXPECT_THROW(net::skeleton_hash(arm(), 0.0f), Error);
    s = arm();
    s.names[1] = std::string(65, 'n');
    EXPECT_THROW(net::skeleton_hash(s, 0.01f), Error);
}

TEST(SkeletonHash, EveryTruncationAndEachBadFieldIsRefusedNamingTheByte) {
    const std::vector<uint8_t> good = net::canonical_skeleton(arm(), 0.01f);
    for (size_t n = 0; n < good.size(); ++n) {
        std::string why;
        EXPECT_FALSE(net::parse_canonical_skeleton(std::span(good).first(n), &why)) << n;
        EXPECT_EQ(why.rfind("byte ", 0), 0u) << why;
    }
    auto refused = [&](std::vector<uint8_t> b, const std::string& expect) {
        std::string why;
        EXPECT_FALSE(net::parse_canonical_skeleton(b, &why)) << expect;
        EXPECT_NE(why.find(expect), std::string::npos) << why;
    };
    std::vector<uint8_t> b = good;
    b[0] = 'X';
    refused(b, "byte 0: not a kinesync skeleton");
    b = good;
    b[4] = 2;
    refused(b, "byte 4: format 2");
    b = good;
    b[5] = 0;
    b[6] = 0;
    refused(b, "0 joints");
    b = good;
    const size_t joint1 = 11 + 15 + 4;  // header, joint 0 (15 bytes and "root")
    b[joint1] = 1;                      // joint 1's parent: itself
    refused(b, "joint 1 has parent 1");
    b = good;
    b[joint1 + 2 + 3] = 0xFF;  // joint 1's x offset: a NaN (0xFF in the top byte of a float)
    b[joint1 + 2 + 2] = 0xFF;
    refused(b, "joint 1's offset is not finite");
    b = good;
    b[joint1 + 14] = 65;
    refused(b, "joint 1's name has 65 bytes");
    b = good;
    b.push_back(0);
    refused(b, "1 bytes after the last joint");
}

TEST(SkeletonCache, KeepsWhatItReceivesAndRefusesDamagedOrForeignFilesByName) {
    TempDir dir;
    // A UTF-8 path with a character beyond ASCII, as a player's profile folder may have.
    SkeletonCache cache(utf8(dir.path / "nested") + "/sk\xc3\xa9lettes");
    EXPECT_TRUE(fs::is_directory(cache.dir())) << "created";
    EXPECT_EQ(utf8(cache.dir().filename()), "sk\xc3\xa9lettes");
    EXPECT_TRUE(cache.load(24).empty());
    ASSERT_TRUE(cache.save({3, "arm", arm(), 0.01f}));
    const net::SkeletonHash h = net::skeleton_hash(arm(), 0.01f);
    ASSERT_TRUE(fs::exists(cache.file_of(h)));
    EXPECT_EQ(cache.file_of(h).filename().string(), net::to_hex(h) + ".kskel");
    std::vector<std::string> problems;
    std::vector<KnownSkeleton> known = cache.load(24, &problems);
    ASSERT_EQ(known.size(), 1u);
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(known[0].hash, h);
    EXPECT_EQ(known[0].skeleton.names, arm().names);
    EXPECT_EQ(known[0].metres_per_unit, 0.01f);

    // One byte changed: its name no longer matches; the file is named in the problem and not offered.
    std::vector<uint8_t> bytes = read_all(cache.file_of(h));
    bytes[20] ^= 1;
    write_all(cache.file_of(h), bytes);
    problems.clear();
    EXPECT_TRUE(cache.load(24, &problems).empty());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find(net::to_hex(h) + ".kskel"), std::string::npos) << problems[0];
    EXPECT_NE(problems[0].find("do not hash to its name"), std::string::npos) << problems[0];
    // Another skeleton's bytes under this name: the same. Bytes whose hash matches but which are not a
    // skeleton cannot be made (that is the hash's job); a file of the right name but far too large is
    // refused before it is read.
    Skeleton other = arm();
    other.names[0] = "pelvis";
    write_all(cache.file_of(h), net::canonical_skeleton(other, 0.01f));
    problems.clear();
    EXPECT_TRUE(cache.load(24, &problems).empty());
    EXPECT_EQ(problems.size(), 1u);
    write_all(cache.file_of(h), std::vector<uint8_t>(200000, 0));
    problems.clear();
    EXPECT_TRUE(cache.load(24, &problems).empty());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("more than any skeleton"), std::string::npos) << problems[0];
    // A refused file is reported once and deleted (a copy received later replaces it); files that
    // are not the cache's are left alone.
    EXPECT_FALSE(fs::exists(cache.file_of(h)));
    write_all(cache.dir() / "notes.txt", {1, 2, 3});
    write_all(cache.dir() / "abc.kskel", {1, 2, 3});
    problems.clear();
    cache.load(24, &problems);
    EXPECT_TRUE(problems.empty());
    EXPECT_TRUE(fs::exists(cache.dir() / "notes.txt"));
    EXPECT_TRUE(fs::exists(cache.dir() / "abc.kskel"));
    // A temporary file a crash left an hour ago goes with the next save; a fresh one (another
    // process writing now) stays.
    write_all(cache.dir() / "x.kskel.tmp1", {1});
    write_all(cache.dir() / "x.kskel.tmp2", {1});
    fs::last_write_time(cache.dir() / "x.kskel.tmp1", fs::file_time_type::clock::now() - std::chrono::hours(2));
    ASSERT_TRUE(cache.save({3, "arm", arm(), 0.01f}));
    EXPECT_FALSE(fs::exists(cache.dir() / "x.kskel.tmp1"));
    EXPECT_TRUE(fs::exists(cache.dir() / "x.kskel.tmp2"));
}

TEST(SkeletonCache, OffersTheMostRecentlyUsedAndKeepsABoundedNumber) {
    TempDir dir;
    SkeletonCache cache(utf8(dir.path));
    std::vector<net::SkeletonHash> hashes;
    const auto now = fs::file_time_type::clock::now();
    for (int i = 0; i < 30; ++i) {
        Skeleton s = arm();
        s.offsets[1].y = 100.0f + float(i);
        ASSERT_TRUE(cache.save({0, "arm", s, 0.01f}));
        hashes.push_back(net::skeleton_hash(s, 0.01f));
        fs::last_write_time(cache.file_of(hashes.back()), now - std::chrono::hours(30 - i));  // i = 29 newest
    }
    std::vector<KnownSkeleton> known = cache.load(24);
    ASSERT_EQ(known.size(), 24u);
    for (size_t k = 0; k < known.size(); ++k) EXPECT_EQ(known[k].hash, hashes[29 - k]) << k;
    // Used by reference: the oldest comes first.
    fs::last_write_time(cache.file_of(hashes[0]), now + std::chrono::hours(1));
    EXPECT_EQ(cache.load(1).at(0).hash, hashes[0]);
    // At most kMaxFiles: saving more deletes the least recently used.
    for (int i = 0; i < int(SkeletonCache::kMaxFiles); ++i) {
        Skeleton s = arm();
        s.offsets[2].y = 1.0f + float(i);
        ASSERT_TRUE(cache.save({0, "arm", s, 0.01f}));
    }
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(cache.dir())) files += e.path().extension() == ".kskel";
    EXPECT_EQ(files, SkeletonCache::kMaxFiles);
    EXPECT_FALSE(fs::exists(cache.file_of(hashes[1]))) << "an old one went";
}

TEST(SkeletonCache, ADirectoryItCannotUseIsRefusedNamingTheField) {
    TempDir dir;
    fs::create_directories(dir.path);
    write_all(dir.path / "a-file", {1});
    try {
        SkeletonCache cache(utf8(dir.path / "a-file"));
        FAIL() << "a file is not a directory";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::InvalidConfig);
        EXPECT_EQ(e.field(), "skeleton_cache_dir");
        EXPECT_NE(std::string(e.what()).find("skeleton_cache_dir = " + utf8(dir.path / "a-file")), std::string::npos) << e.what();
    }
    EXPECT_THROW(SkeletonCache{std::string()}, Error);
}

namespace {

struct ScriptedServer {
    uint16_t seq = 1;
    uint32_t mid = 1;
    net::PacketHeader header() { return {seq++, 0, 0}; }
};

// Connects a session to a scripted server; returns the known skeletons its ChallengeResponse offered.
std::vector<net::SkeletonHash> handshake(ClientSession& session, ScriptedServer& server, double& t) {
    session.connect(t);
    uint64_t salt = 0;
    for (const auto& d : session.take_outgoing())
        if (const auto p = net::decode_packet(d); p && p->type == net::MessageType::ConnectRequest)
            salt = p->message<net::wire::ConnectRequest>()->client_salt();
    session.on_datagram(net::build_challenge(server.header(), salt, net::Cookie{1}), t);
    std::vector<net::SkeletonHash> offered;
    for (const auto& d : session.take_outgoing())
        if (const auto p = net::decode_packet(d); p && p->type == net::MessageType::ChallengeResponse)
            if (const auto* k = p->message<net::wire::ChallengeResponse>()->known_skeletons())
                for (size_t i = 0; i < k->size(); i += net::kSkeletonHashBytes) {
                    net::SkeletonHash h{};
                    std::copy_n(k->data() + i, h.size(), h.begin());
                    offered.push_back(h);
                }
    session.on_datagram(net::build_accept(server.header(), {7, 60, 30, 0, 0}), t += 0.01);
    return offered;
}

}  // namespace

TEST(SkeletonRefs, ASessionOffersWhatItHoldsTakesReferencesFromItAndRefusesOthers) {
    ClientSession session;
    ScriptedServer server;
    double t = 0;
    std::vector<KnownSkeleton> known;
    for (int i = 0; i < 30; ++i) {
        Skeleton s = arm();
        s.offsets[1].y = 100.0f + float(i);
        known.push_back({net::skeleton_hash(s, 0.01f), s, 0.01f});
    }
    session.set_known_skeletons(known);
    const std::vector<net::SkeletonHash> offered = handshake(session, server, t);
    ASSERT_EQ(session.state(), ClientSession::State::Connected);
    ASSERT_EQ(offered.size(), net::kMaxKnownSkeletons) << "the first 24 of 30";
    for (size_t i = 0; i < offered.size(); ++i) EXPECT_EQ(offered[i], known[i].hash);
    EXPECT_EQ(session.stats().skeletons_offered, net::kMaxKnownSkeletons);

    // Skeleton 4 by reference (known[5]), skeleton 5 by a hash the client holds but did not offer
    // (known[27]), skeleton 6 by a hash it never had.
    const net::SkeletonRefInput refs[] = {{4, "by ref", known[5].hash}, {5, "not offered", known[27].hash}, {6, "unknown", {}}};
    const net::CharacterInfoInput chars[] = {{10, 4, "a"}, {11, 5, "b"}, {12, 6, "c"}};
    for (const net::SkeletonDefsPlan& plan : net::plan_skeleton_defs({}, chars, net::kMaxDatagram, refs))
        session.on_datagram(net::build_skeleton_defs(server.header(), server.mid++, plan.defs, plan.characters, plan.refs), t);
    ASSERT_EQ(session.skeleton_of(10), 4);
    EXPECT_EQ(session.skeleton(4)->name, "by ref");
    EXPECT_TRUE(same_offsets(session.skeleton(4)->skeleton, known[5].skeleton));
    EXPECT_EQ(session.skeleton(4)->metres_per_unit, 0.01f);
    EXPECT_NE(session.precision(4), nullptr);
    EXPECT_EQ(session.skeleton_of(11), -1) << "a reference to a skeleton not offered is refused";
    EXPECT_EQ(session.skeleton_of(12), -1);
    EXPECT_EQ(session.stats().skeletons_by_reference, 1u);
    EXPECT_EQ(session.stats().skeleton_errors, 2u);
    EXPECT_NE(session.first_skeleton_error().find("skeleton 5"), std::string::npos) << session.first_skeleton_error();
    EXPECT_EQ(session.take_used_skeletons(), std::vector<net::SkeletonHash>{known[5].hash});
    EXPECT_TRUE(session.take_new_skeletons().empty()) << "nothing new to keep";
    // The refused ones stay announced and arriving, without a skeleton; the message is acknowledged.
    size_t without = 0;
    for (const ClientSession::Arriving& a : session.arriving()) without += !a.skeleton;
    EXPECT_EQ(without, 2u);
    session.update(t += 0.1);
    bool acked = false;
    for (const auto& d : session.take_outgoing())
        if (const auto p = net::decode_packet(d); p && p->type == net::MessageType::Ack) acked = true;
    EXPECT_TRUE(acked);

    // A definition received in full is handed over for keeping.
    const Skeleton full = arm();
    const net::SkeletonDefInput defs[] = {{7, "full", &full, 0.01f, 0, -1}};
    session.on_datagram(net::build_skeleton_defs(server.header(), server.mid++, defs, {}), t);
    const std::vector<net::ReceivedSkeleton> fresh = session.take_new_skeletons();
    ASSERT_EQ(fresh.size(), 1u);
    EXPECT_EQ(fresh[0].skeleton.names, full.names);
    EXPECT_EQ(session.stats().skeletons_in_full, 1u);
}

TEST(SkeletonRefs, APartThatContradictsAnotherIsCountedNotIgnored) {
    ClientSession session;
    ScriptedServer server;
    double t = 0;
    handshake(session, server, t);
    Skeleton a = arm(), b = arm();
    b.offsets[1].y = 1.0f;
    const net::SkeletonDefInput first[] = {{1, "x", &a, 0.01f, 0, 2}};
    const net::SkeletonDefInput second[] = {{1, "x", &b, 0.01f, 1, 2}};  // joint 1 again, other offset
    session.on_datagram(net::build_skeleton_defs(server.header(), server.mid++, first, {}), t);
    session.on_datagram(net::build_skeleton_defs(server.header(), server.mid++, second, {}), t);
    EXPECT_EQ(session.stats().skeleton_errors, 1u);
    EXPECT_NE(session.first_skeleton_error().find("differs from an earlier part"), std::string::npos) << session.first_skeleton_error();
}
