// kinesync-replay --view's data: the planes of docs/VIEWER.md decode back to what was captured
// (quantized), absent frames repeat, the window clips, and the viewer's files are written whole.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "programs/testbench/base64.h"
#include "programs/testbench/view_capture.h"

using namespace ks;

namespace {

template <class T>
std::vector<T> take(const std::vector<uint8_t>& raw, size_t& off, size_t n) {
    std::vector<T> v(n);
    std::memcpy(v.data(), raw.data() + off, n * sizeof(T));
    off += n * sizeof(T);
    return v;
}

// Running sums per channel, wrapping in T: what the page does.
template <class T>
void undelta(std::vector<T>& v, size_t width) {
    using U = std::make_unsigned_t<T>;
    for (size_t i = width; i < v.size(); ++i) v[i] = T(U(U(v[i]) + U(v[i - width])));
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST(ViewCapture, PlanesDecodeToTheCapturedPoses) {
    const int J = 3, F = 5;
    ViewCapture cap({"truth", "interp"}, {J}, 1.0, 10.0);
    EXPECT_FALSE(cap.begin_frame(0.5));  // before the window
    std::vector<std::vector<vec3>> truth(F);
    for (int f = 0; f < F; ++f) {
        ASSERT_TRUE(cap.begin_frame(1.0 + f / 60.0));
        // A root far from the origin (int32 mm) and joints within a metre of it; the rotation of
        // joint 2 given with w < 0 (stored as its w >= 0 twin).
        truth[size_t(f)] = {{100.0f + f, 0.9f, -250.0f}, {100.2f + f, 1.4f, -250.0f}, {99.5f + f, 0.1f, -249.3f}};
        const std::vector<quat> rot = {quat{}, quat_normalize(quat{0.8f, 0.6f, 0.0f, 0.0f}), quat{-0.6f, 0.0f, 0.8f, 0.0f}};
        cap.add(0, 0, truth[size_t(f)], rot, 0.0f);
        if (f % 2 == 1) {  // interp shows the character at odd frames only, 10 cm behind in x
            std::vector<vec3> shown = truth[size_t(f)];
            for (vec3& p : shown) p.x -= 0.1f;
            cap.add(1, 0, shown, rot, 10.0f);
        }
    }
    EXPECT_FALSE(cap.begin_frame(11.5));  // after it: left out, and said so
    EXPECT_TRUE(cap.clipped());
    EXPECT_EQ(cap.frames(), size_t(F));
    EXPECT_DOUBLE_EQ(cap.t0(), 1.0);

    const std::vector<uint8_t> raw = cap.planes();
    const size_t per_track = F * (1 + 4 + 12 + 6 * J + 4 * J);
    ASSERT_EQ(raw.size(), 2 * per_track);
    size_t off = 0;
    for (int s = 0; s < 2; ++s) {
        const auto present = take<uint8_t>(raw, off, F);
        const auto err = take<float>(raw, off, F);
        auto root = take<int32_t>(raw, off, 3 * F);
        auto pos = take<int16_t>(raw, off, 3 * F * J);
        auto rot = take<int8_t>(raw, off, 4 * F * J);
        undelta(root, 3), undelta(pos, 3 * J), undelta(rot, 4 * J);
        for (int f = 0; f < F; ++f) {
            const bool shown = s == 0 || f % 2 == 1;
            EXPECT_EQ(present[size_t(f)], shown ? 1 : 0) << s << " " << f;
            // An absent frame repeats the last one shown (zeros before any).
            const int g = shown ? f : f - 1;
            if (g < 0) {
                EXPECT_EQ(root[0], 0);
                EXPECT_EQ(rot[0], 127);  // identity
                continue;
            }
            const float dx = s == 0 ? 0.0f : -0.1f;
            const vec3 r = truth[size_t(g)][0];
            EXPECT_EQ(root[size_t(3 * f)], std::lround((r.x + dx) * 1000.0)) << s << " " << f;
            EXPECT_EQ(root[size_t(3 * f + 2)], std::lround(r.z * 1000.0));
            for (int j = 0; j < J; ++j)
                for (int k = 0; k < 3; ++k) {
                    const vec3 d = truth[size_t(g)][size_t(j)] - r;
                    const float want = k == 0 ? d.x : k == 1 ? d.y : d.z;
                    EXPECT_NEAR(pos[size_t((f * J + j) * 3 + k)] / 1000.0, want, 0.0006) << s << " " << f << " " << j;
                }
            EXPECT_EQ(err[size_t(f)], shown && s == 1 ? 10.0f : 0.0f);
            // Joint 2: (-0.6, 0, 0.8, 0) stored as (0.6, 0, -0.8, 0) * 127.
            const size_t q = size_t((f * J + 2) * 4);
            EXPECT_EQ(rot[q], 76);
            EXPECT_EQ(rot[q + 2], -102);
        }
    }
    EXPECT_EQ(off, raw.size());

    // view_roots: frame 0 only (every 60 frames), the truth alone (interp had not started).
    ASSERT_EQ(cap.root_samples().size(), 1u);
    EXPECT_EQ(cap.root_samples()[0].roots.size(), 1u);
    EXPECT_EQ(cap.root_samples()[0].roots[0].first, "truth");
}

TEST(ViewCapture, WritesTheViewerWholeOrNamesWhatIsMissing) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("ks-view-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    ViewCapture cap({"truth"}, {2}, 0.0, 1.0);
    ASSERT_TRUE(cap.begin_frame(0.0));
    const std::vector<vec3> p = {{1, 2, 3}, {1, 3, 3}};
    const std::vector<quat> r = {quat{}, quat{}};
    cap.add(0, 0, p, r, 0.0f);

    // No three.js where we look: a clear error naming the package.
    try {
        write_viewer((dir / "out").string(), cap, {"{}", (dir / "nothing").string()});
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("libjs-three"), std::string::npos) << e.what();
    }

    const fs::path three = dir / "three";
    fs::create_directories(three / "examples/js/controls");
    std::ofstream(three / "three.min.js") << "var THREE = {};";
    std::ofstream(three / "examples/js/controls/OrbitControls.js") << "THREE.OrbitControls = function () {};";
    const std::string meta = "{\"format\": \"kinesync-view\"}";
    const size_t bytes = write_viewer((dir / "out").string(), cap, {meta, three.string()});
    for (const char* f : {"index.html", "viewer.js", "viewer.css", "three.min.js", "OrbitControls.js", "replay.ksview", "replay.ksview.js"})
        EXPECT_TRUE(fs::exists(dir / "out" / f)) << f;
    EXPECT_GT(fs::file_size(dir / "out/index.html"), 100u);  // the page, not a placeholder

    const std::string bin = slurp(dir / "out/replay.ksview");
    ASSERT_EQ(bin.size(), bytes);
    ASSERT_EQ(bin.substr(0, 8), "KSVIEW01");
    uint32_t meta_len = 0, raw_len = 0, packed_len = 0;
    std::memcpy(&meta_len, bin.data() + 8, 4);
    EXPECT_EQ(bin.substr(12, meta_len), meta);
    std::memcpy(&raw_len, bin.data() + 12 + meta_len, 4);
    std::memcpy(&packed_len, bin.data() + 16 + meta_len, 4);
    ASSERT_EQ(bin.size(), 20 + meta_len + packed_len);
    std::vector<uint8_t> raw(raw_len);
    uLongf n = raw_len;
    ASSERT_EQ(uncompress(raw.data(), &n, reinterpret_cast<const Bytef*>(bin.data() + 20 + meta_len), packed_len), Z_OK);
    EXPECT_EQ(raw, cap.planes());

    // replay.ksview.js carries the same bytes in base64.
    const std::string js = slurp(dir / "out/replay.ksview.js");
    const size_t a = js.find('"') + 1, b = js.rfind('"');
    EXPECT_EQ(base64_decode(std::string_view(js).substr(a, b - a)), bin);
    fs::remove_all(dir);
}

// RFC 4648 §10's vectors, both ways, and text that is not base64.
TEST(Base64, MatchesRfc4648Vectors) {
    const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                           {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                           {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, text] : vectors) {
        EXPECT_EQ(base64_encode(plain), text);
        EXPECT_EQ(base64_decode(text), plain);
    }
    EXPECT_EQ(base64_decode("Zm9"), std::nullopt);
    EXPECT_EQ(base64_decode("Zm9*"), std::nullopt);
}
