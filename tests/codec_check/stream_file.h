#pragma once
// The file the cross-build decode check replays: skeletons (with their units), which skeleton each
// character has, then every snapshot payload in the order it reached the client (after loss and
// reordering). Written by kinesync-codec-stream, read by kinesync-codec-decode. Little-endian,
// floats as their bits, so a file means the same to every build.

#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <kinesync/common/anim/skeleton.h>

namespace ks::codec_check {

struct StreamFile {
    std::vector<Skeleton> skeletons;
    std::vector<float> metres_per_unit;
    std::vector<uint16_t> character_skeleton;  // by character id
    struct Record {
        uint32_t tick = 0;
        std::vector<uint8_t> payload;
    };
    std::vector<Record> records;
};

inline void put_u32(std::vector<uint8_t>& out, uint32_t v) {
    for (int b = 0; b < 4; ++b) out.push_back(uint8_t(v >> (8 * b)));
}
inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline void write_stream(const std::string& path, const StreamFile& s) {
    std::vector<uint8_t> out = {'K', 'S', 'C', 'S'};
    put_u32(out, uint32_t(s.skeletons.size()));
    for (size_t k = 0; k < s.skeletons.size(); ++k) {
        const Skeleton& sk = s.skeletons[k];
        put_u32(out, uint32_t(sk.size()));
        for (int j = 0; j < sk.size(); ++j) {
            put_u32(out, uint32_t(sk.parents[size_t(j)]));
            put_u32(out, float_bits(sk.offsets[size_t(j)].x));
            put_u32(out, float_bits(sk.offsets[size_t(j)].y));
            put_u32(out, float_bits(sk.offsets[size_t(j)].z));
        }
        put_u32(out, float_bits(s.metres_per_unit[k]));
    }
    put_u32(out, uint32_t(s.character_skeleton.size()));
    for (uint16_t k : s.character_skeleton) put_u32(out, k);
    put_u32(out, uint32_t(s.records.size()));
    for (const StreamFile::Record& r : s.records) {
        put_u32(out, r.tick);
        put_u32(out, uint32_t(r.payload.size()));
        out.insert(out.end(), r.payload.begin(), r.payload.end());
    }
    std::ofstream f(path, std::ios::binary);
    if (!f.write(reinterpret_cast<const char*>(out.data()), std::streamsize(out.size())))
        throw std::runtime_error(path + ": cannot write");
}

inline StreamFile read_stream(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    const std::vector<uint8_t> in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t pos = 0;
    auto u32 = [&]() {
        if (pos + 4 > in.size()) throw std::runtime_error(path + ": truncated at byte " + std::to_string(pos));
        uint32_t v = 0;
        for (int b = 0; b < 4; ++b) v |= uint32_t(in[pos++]) << (8 * b);
        return v;
    };
    auto f32 = [&]() {
        const uint32_t u = u32();
        float x;
        std::memcpy(&x, &u, 4);
        return x;
    };
    if (in.size() < 4 || std::memcmp(in.data(), "KSCS", 4) != 0) throw std::runtime_error(path + ": not a codec stream");
    pos = 4;
    StreamFile s;
    for (uint32_t n = u32(), k = 0; k < n; ++k) {
        Skeleton sk;
        for (uint32_t joints = u32(), j = 0; j < joints; ++j) {
            sk.names.push_back("j");
            sk.parents.push_back(int(int32_t(u32())));
            const float x = f32(), y = f32(), z = f32();
            sk.offsets.push_back({x, y, z});
        }
        s.skeletons.push_back(sk);
        s.metres_per_unit.push_back(f32());
    }
    for (uint32_t n = u32(), k = 0; k < n; ++k) s.character_skeleton.push_back(uint16_t(u32()));
    for (uint32_t n = u32(), k = 0; k < n; ++k) {
        StreamFile::Record r;
        r.tick = u32();
        const uint32_t len = u32();
        if (pos + len > in.size()) throw std::runtime_error(path + ": truncated payload at byte " + std::to_string(pos));
        r.payload.assign(in.begin() + std::ptrdiff_t(pos), in.begin() + std::ptrdiff_t(pos + len));
        pos += len;
        s.records.push_back(std::move(r));
    }
    return s;
}

}  // namespace ks::codec_check
