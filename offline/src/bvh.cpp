#include <kinesync/offline/bvh.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <system_error>
#include <unordered_map>

#include "offline/src/text.h"

namespace ks {

BvhError::BvhError(const std::string& name, int line, const std::string& message)
    : std::runtime_error(line > 0 ? name + ":" + std::to_string(line) + ": " + message : name + ": " + message),
      file_(name),
      line_(line),
      message_(message) {}

namespace {

constexpr bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
constexpr bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }  // not a line end

bool istarts_with(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// How a token is shown in a message: quoted, shortened if huge, or "end of file".
std::string show(std::string_view tok) {
    if (tok.empty()) return "end of file";
    // Appended, not "'" + std::string(...): GCC 12's -Wrestrict misfires on that for AArch64 (PR 105651).
    std::string out = "'";
    if (tok.size() > 40) out.append(tok.substr(0, 37)).append("...'");
    else out.append(tok).append("'");
    return out;
}

// Words that structure the HIERARCHY section (never joint names or channel names).
bool is_keyword(std::string_view s) {
    return s == "{" || s == "}" || iequals(s, "OFFSET") || iequals(s, "CHANNELS") || iequals(s, "JOINT") ||
           iequals(s, "End") || iequals(s, "ROOT") || iequals(s, "MOTION") || iequals(s, "HIERARCHY");
}

// Parses a whole token as a finite float. Returns false when it is not a number at all;
// sets `finite` false when it parses but is infinite/NaN/out of float range.
bool parse_float(std::string_view tok, float& out, bool& finite) {
    const char* b = tok.data();
    const char* e = tok.data() + tok.size();
    const bool plus = b != e && *b == '+';  // from_chars rejects a leading '+': skip one
    if (plus) ++b;
    if (b == e || (plus && (*b == '+' || *b == '-'))) return false;
    double v = 0.0;
    const auto r = std::from_chars(b, e, v);
    if (r.ptr != e) return false;
    if (r.ec == std::errc::invalid_argument) return false;
    if (r.ec == std::errc::result_out_of_range) {
        finite = false;
        return true;
    }
    finite = std::isfinite(v) && std::fabs(v) <= double(std::numeric_limits<float>::max());
    out = float(v);
    return true;
}

bool parse_int(std::string_view tok, long long& out) {
    const char* b = tok.data();
    const char* e = tok.data() + tok.size();
    if (b != e && *b == '+') ++b;
    if (b == e) return false;
    const auto r = std::from_chars(b, e, out);
    return r.ec == std::errc() && r.ptr == e;
}

struct Token {
    std::string_view text;  // empty at end of file
    int line = 0;
    bool eof() const { return text.empty(); }
};

// Whitespace tokeniser with line tracking. '{' and '}' are always tokens of their own.
// Line ends: "\r\n", "\n" or a lone "\r" each count as one.
class Lexer {
public:
    explicit Lexer(std::string_view s) : s_(s) {}

    Token next() {
        skip_space();
        if (pos_ >= s_.size()) return {{}, last_line_};
        const size_t b = pos_;
        if (s_[pos_] == '{' || s_[pos_] == '}') {
            ++pos_;
        } else {
            while (pos_ < s_.size() && !is_space(s_[pos_]) && s_[pos_] != '{' && s_[pos_] != '}') ++pos_;
        }
        last_line_ = line_;
        return {s_.substr(b, pos_ - b), line_};
    }
    Token peek() {
        const size_t p = pos_;
        const int l = line_, ll = last_line_;
        const Token t = next();
        pos_ = p;
        line_ = l;
        last_line_ = ll;
        return t;
    }
    size_t pos() const { return pos_; }
    int line() const { return line_; }
    int last_line() const { return last_line_; }

private:
    void skip_space() {
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (c == '\n') {
                ++line_;
                ++pos_;
            } else if (c == '\r') {
                ++pos_;
                if (pos_ < s_.size() && s_[pos_] == '\n') ++pos_;
                ++line_;
            } else if (is_blank(c)) {
                ++pos_;
            } else {
                break;
            }
        }
    }

    std::string_view s_;
    size_t pos_ = 0;
    int line_ = 1;
    int last_line_ = 1;  // line of the last token returned (where "end of file" is reported)
};

struct ParsedJoint {
    std::string name;
    int parent = -1;
    int line = 0;  // line of its ROOT/JOINT keyword
    vec3 offset;
    bool has_offset = false;
    bool has_channels = false;
    std::vector<std::string> channel_names;
    std::vector<std::uint8_t> kinds;
    int first_channel = 0;  // column of its first channel in a motion line
};

class Parser {
public:
    Parser(std::string_view text, const std::string& name, const BvhOptions& opts)
        : text_(text), name_(name), opts_(opts), lex_(text) {}

    BvhFile run() {
        if (opts_.skip_frames < 0)
            throw BvhError(name_, 0, "BvhOptions::skip_frames must not be negative, got " +
                                         std::to_string(opts_.skip_frames));
        if (!(opts_.metres_per_unit >= 0.0f) || !std::isfinite(opts_.metres_per_unit))
            throw BvhError(name_, 0, "BvhOptions::metres_per_unit must be 0 (detect) or positive");
        parse_hierarchy();
        parse_motion_header();
        build_clip();
        parse_motion_lines();

        out_.detected_metres_per_unit = detect_metres_per_unit(out_.clip);
        out_.clip.metres_per_unit =
            opts_.metres_per_unit > 0.0f ? opts_.metres_per_unit : out_.detected_metres_per_unit;
        return std::move(out_);
    }

private:
    [[noreturn]] void fail(int line, const std::string& msg) const { throw BvhError(name_, line, msg); }

    std::string joint_label(int j) const { return "joint '" + joints_[size_t(j)].name + "'"; }

    float read_number(const std::string& what) {
        const Token t = lex_.next();
        float v = 0.0f;
        bool finite = true;
        if (t.eof() || !parse_float(t.text, v, finite))
            fail(t.line, "expected a number for " + what + ", got " + show(t.text));
        if (!finite) fail(t.line, "value " + show(t.text) + " for " + what + " is not a finite number");
        return v;
    }

    // "ROOT name {" / "JOINT name {" after the keyword token: returns the new joint's index.
    int parse_joint_header(const Token& kw, int parent) {
        const std::string kind = parent < 0 ? "ROOT" : "JOINT";
        std::string name;
        // The name is the rest of the keyword's line up to '{' (names with spaces are joined by one space).
        // Its first word may look like a keyword: rigs do name joints "Root" or "End".
        for (Token t = lex_.peek(); !t.eof() && t.line == kw.line &&
                                    (name.empty() ? t.text != "{" && t.text != "}" : !is_keyword(t.text));
             t = lex_.peek()) {
            lex_.next();
            if (!name.empty()) name += ' ';
            name += t.text;
        }
        if (name.empty()) {
            const Token t = lex_.peek();
            fail(t.eof() ? kw.line : t.line, "expected a name after " + kind + ", got " + show(t.text));
        }
        const Token brace = lex_.next();
        if (brace.text != "{") fail(brace.line, "expected '{' after " + kind + " name, got " + show(brace.text));
        if (const auto it = index_.find(name); it != index_.end())
            fail(kw.line, "duplicate joint name '" + name + "' (first defined on line " +
                              std::to_string(joints_[size_t(it->second)].line) + ")");
        ParsedJoint j;
        j.name = name;
        j.parent = parent;
        j.line = kw.line;
        joints_.push_back(std::move(j));
        const int idx = int(joints_.size()) - 1;
        index_.emplace(name, idx);
        return idx;
    }

    void parse_channels(int j, const Token& kw) {
        ParsedJoint& pj = joints_[size_t(j)];
        if (pj.has_channels) fail(kw.line, joint_label(j) + " has a second CHANNELS line");
        pj.has_channels = true;
        const Token ct = lex_.next();
        long long n = 0;
        if (ct.eof() || !parse_int(ct.text, n) || n < 0 || n > 1024)
            fail(ct.line, "expected the channel count (0..1024) after CHANNELS of " + joint_label(j) + ", got " +
                              show(ct.text));
        for (long long i = 0; i < n; ++i) {
            const Token t = lex_.peek();
            const int kind = t.eof() ? -1 : bvh_channel_kind(t.text);
            if (kind < 0) {
                if (t.eof() || is_keyword(t.text) || t.line != kw.line)
                    fail(kw.line, "CHANNELS of " + joint_label(j) + " declares " + std::to_string(n) +
                                      " channels but lists " + std::to_string(i));
                fail(t.line, "unknown channel name " + show(t.text) + " for " + joint_label(j) +
                                 " (expected Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation)");
            }
            lex_.next();
            pj.channel_names.emplace_back(t.text);
            pj.kinds.push_back(std::uint8_t(kind));
        }
        const Token extra = lex_.peek();
        if (!extra.eof() && extra.line == kw.line && !is_keyword(extra.text)) {
            if (bvh_channel_kind(extra.text) >= 0)
                fail(kw.line, "CHANNELS of " + joint_label(j) + " declares " + std::to_string(n) +
                                  " channels but lists more");
            fail(extra.line, "unexpected " + show(extra.text) + " after the channels of " + joint_label(j));
        }
    }

    void parse_end_site(int parent, const Token& kw) {
        const Token site = lex_.next();
        if (!iequals(site.text, "Site")) fail(site.eof() ? kw.line : site.line, "expected 'Site' after 'End', got " + show(site.text));
        // Some exporters put a name after "End Site"; ignore the rest of that line.
        for (Token t = lex_.peek(); !t.eof() && t.line == site.line && t.text != "{"; t = lex_.peek()) lex_.next();
        const Token open = lex_.next();
        if (open.text != "{") fail(open.line, "expected '{' after End Site, got " + show(open.text));
        const std::string what = "End Site of " + joint_label(parent);
        const Token off = lex_.next();
        if (!iequals(off.text, "OFFSET")) fail(off.line, "expected OFFSET in " + what + ", got " + show(off.text));
        vec3 o;
        o.x = read_number("OFFSET of " + what);
        o.y = read_number("OFFSET of " + what);
        o.z = read_number("OFFSET of " + what);
        const Token close = lex_.next();
        if (close.text != "}")
            fail(close.line, close.eof() ? "unexpected end of file: " + what + " (line " + std::to_string(kw.line) +
                                               ") is missing its closing '}'"
                                         : "expected '}' to close " + what + ", got " + show(close.text));
        out_.end_sites.push_back(o);
        out_.end_site_parents.push_back(parent);
    }

    void parse_hierarchy() {
        const Token h = lex_.next();
        if (!iequals(h.text, "HIERARCHY")) fail(h.line, "expected 'HIERARCHY' at the start of the file, got " + show(h.text));
        for (;;) {
            const Token t = lex_.next();
            if (iequals(t.text, "MOTION")) {
                if (joints_.empty()) fail(t.line, "expected 'ROOT' before 'MOTION': the file defines no joints");
                motion_line_ = t.line;
                return;
            }
            if (t.text == "}") fail(t.line, "unbalanced '}': no joint is open");
            if (!iequals(t.text, "ROOT"))
                fail(t.line, joints_.empty() ? "expected 'ROOT', got " + show(t.text)
                                             : "expected 'ROOT' or 'MOTION', got " + show(t.text));
            parse_joint_tree(t);
        }
    }

    // Parses one ROOT block and everything inside it, iteratively (deep files cannot overflow the stack).
    void parse_joint_tree(const Token& root_kw) {
        std::vector<int> open{parse_joint_header(root_kw, -1)};
        while (!open.empty()) {
            const int j = open.back();
            const Token t = lex_.next();
            if (t.eof()) {
                fail(t.line, "unexpected end of file: " + joint_label(j) + " (line " +
                                 std::to_string(joints_[size_t(j)].line) + ") is missing its closing '}'");
            } else if (iequals(t.text, "OFFSET")) {
                ParsedJoint& pj = joints_[size_t(j)];
                if (pj.has_offset) fail(t.line, joint_label(j) + " has a second OFFSET");
                const std::string what = "OFFSET of " + joint_label(j);
                vec3 o;
                o.x = read_number(what);
                o.y = read_number(what);
                o.z = read_number(what);
                pj.offset = o;
                pj.has_offset = true;
            } else if (iequals(t.text, "CHANNELS")) {
                parse_channels(j, t);
            } else if (iequals(t.text, "JOINT")) {
                open.push_back(parse_joint_header(t, j));
            } else if (iequals(t.text, "End")) {
                parse_end_site(j, t);
            } else if (t.text == "}") {
                const ParsedJoint& pj = joints_[size_t(j)];
                if (!pj.has_offset) fail(t.line, joint_label(j) + " (line " + std::to_string(pj.line) + ") has no OFFSET");
                if (!pj.has_channels)
                    fail(t.line, joint_label(j) + " (line " + std::to_string(pj.line) + ") has no CHANNELS");
                open.pop_back();
            } else {
                fail(t.line, "expected OFFSET, CHANNELS, JOINT, End Site or '}' in " + joint_label(j) + ", got " +
                                 show(t.text));
            }
        }
    }

    void parse_motion_header() {
        // "Frames: N" (also "Frames:N").
        const Token f = lex_.next();
        std::string_view count_text;
        if (iequals(f.text, "Frames:")) {
            const Token n = lex_.next();
            count_text = n.text;
            frames_line_ = n.eof() ? f.line : n.line;
        } else if (istarts_with(f.text, "Frames:")) {
            count_text = f.text.substr(7);
            frames_line_ = f.line;
        } else {
            fail(f.eof() ? motion_line_ : f.line, "expected 'Frames:' after MOTION, got " + show(f.text));
        }
        long long n = 0;
        if (!parse_int(count_text, n) || n < 0 || n > 100000000)
            fail(frames_line_, "expected a frame count after 'Frames:', got " + show(count_text));
        if (n < 1) fail(frames_line_, "'Frames:' is 0: the file has no motion");
        frames_ = int(n);
        if (opts_.skip_frames >= frames_)
            fail(frames_line_, "skip_frames=" + std::to_string(opts_.skip_frames) + " leaves no frames: 'Frames:' is " +
                                   std::to_string(frames_));

        // "Frame Time: dt" (also "Frame Time:dt").
        const Token a = lex_.next();
        if (!iequals(a.text, "Frame")) fail(a.eof() ? frames_line_ : a.line, "expected 'Frame Time:' after the frame count, got " + show(a.text));
        const Token b = lex_.next();
        std::string_view dt_text;
        int dt_line = b.line;
        if (iequals(b.text, "Time:")) {
            const Token d = lex_.next();
            dt_text = d.text;
            dt_line = d.eof() ? b.line : d.line;
        } else if (istarts_with(b.text, "Time:")) {
            dt_text = b.text.substr(5);
        } else {
            fail(b.eof() ? a.line : b.line, "expected 'Frame Time:' after the frame count, got " + show(b.text));
        }
        float dt = 0.0f;
        bool finite = true;
        if (!parse_float(dt_text, dt, finite) || !finite || !(dt > 0.0f))
            fail(dt_line, "expected a positive frame time after 'Frame Time:', got " + show(dt_text));
        frame_dt_ = dt;
        frame_time_line_ = dt_line;
    }

    void build_clip() {
        Clip& c = out_.clip;
        c.name = name_;
        c.frame_dt = frame_dt_;
        int column = 0;
        out_.layout.reserve(joints_.size());
        for (ParsedJoint& j : joints_) {
            c.skeleton.names.push_back(j.name);
            c.skeleton.parents.push_back(j.parent);
            c.skeleton.offsets.push_back(j.offset);
            j.first_channel = column;
            column += int(j.kinds.size());
            out_.layout.push_back({j.name, j.channel_names});
        }
        channels_ = column;
        if (const std::string err = c.skeleton.validate(); !err.empty()) fail(motion_line_, "bad skeleton: " + err);
        out_.frames_in_file = frames_;
        c.resize(frames_ - opts_.skip_frames);
    }

    void store_frame(int f, const float* row) {
        Clip& c = out_.clip;
        constexpr float deg = kPi / 180.0f;
        static const vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        for (int j = 0; j < int(joints_.size()); ++j) {
            const ParsedJoint& pj = joints_[size_t(j)];
            vec3 p = pj.offset;
            quat q;
            bool rotated = false;
            for (size_t k = 0; k < pj.kinds.size(); ++k) {
                const float v = row[pj.first_channel + int(k)];
                const int kind = pj.kinds[k];
                if (kind < 3) {
                    (kind == 0 ? p.x : kind == 1 ? p.y : p.z) += v;
                } else {
                    q = quat_mul(q, quat_from_angle_axis(v * deg, axes[kind - 3]));
                    rotated = true;
                }
            }
            c.pos(f, j) = p;
            c.rot(f, j) = rotated ? quat_normalize(q, 0.0f) : q;
        }
    }

    // The motion lines: one frame per non-blank line, exactly channels_ values each.
    void parse_motion_lines() {
        const std::string_view s = text_;
        size_t pos = lex_.pos();
        int line = lex_.line();
        // Line ends: "\r\n", "\n" or a lone "\r", counted as the Lexer counts them.
        auto line_end_of = [&](size_t from) {
            size_t e = from;
            while (e < s.size() && s[e] != '\n' && s[e] != '\r') ++e;
            return e;
        };
        auto next_line_start = [&](size_t e) {  // e is at '\r' or '\n'
            return (s[e] == '\r' && e + 1 < s.size() && s[e + 1] == '\n') ? e + 2 : e + 1;
        };

        // Nothing else may follow the frame time on its line.
        {
            const size_t e = line_end_of(pos);
            for (size_t i = pos; i < e; ++i)
                if (!is_blank(s[i])) {
                    size_t k = i;
                    while (k < e && !is_blank(s[k])) ++k;
                    fail(line, "unexpected " + show(s.substr(i, k - i)) + " after the 'Frame Time:' value");
                }
            if (e >= s.size()) {
                pos = s.size();
            } else {
                pos = next_line_start(e);
                ++line;
            }
        }

        std::vector<float> row(size_t(std::max(channels_, 1)));
        int frame = 0;
        int last_motion_line = frame_time_line_;
        while (pos < s.size()) {
            const size_t e = line_end_of(pos);
            size_t i = pos;
            while (i < e && is_blank(s[i])) ++i;
            if (i < e) {  // a non-blank line
                if (frame == frames_)
                    fail(line, "'Frames:' (line " + std::to_string(frames_line_) + ") says " + std::to_string(frames_) +
                                   " but more motion lines follow");
                int count = 0;
                while (i < e) {
                    size_t k = i;
                    while (k < e && !is_blank(s[k])) ++k;
                    const std::string_view tok = s.substr(i, k - i);
                    if (count == channels_)
                        fail(line, "motion line for frame " + std::to_string(frame) + " has more than the " +
                                       std::to_string(channels_) + " values the HIERARCHY declares");
                    float v = 0.0f;
                    bool finite = true;
                    if (!parse_float(tok, v, finite))
                        fail(line, "expected a number in the motion line for frame " + std::to_string(frame) + ", got " +
                                       show(tok));
                    if (!finite)
                        fail(line, "value " + show(tok) + " in the motion line for frame " + std::to_string(frame) +
                                       " is not a finite number");
                    row[size_t(count++)] = v;
                    i = k;
                    while (i < e && is_blank(s[i])) ++i;
                }
                if (count != channels_)
                    fail(line, "motion line for frame " + std::to_string(frame) + " has " + std::to_string(count) +
                                   " values, expected " + std::to_string(channels_));
                if (frame >= opts_.skip_frames) store_frame(frame - opts_.skip_frames, row.data());
                ++frame;
                last_motion_line = line;
            }
            if (e >= s.size()) break;
            pos = next_line_start(e);
            ++line;
        }
        if (frame < frames_)
            fail(last_motion_line, "the file ends after " + std::to_string(frame) + " motion lines but 'Frames:' (line " +
                                       std::to_string(frames_line_) + ") says " + std::to_string(frames_));
    }

    std::string_view text_;
    const std::string& name_;
    BvhOptions opts_;
    Lexer lex_;
    std::vector<ParsedJoint> joints_;
    std::unordered_map<std::string, int> index_;
    BvhFile out_;
    int motion_line_ = 0, frames_line_ = 0, frame_time_line_ = 0;
    int frames_ = 0, channels_ = 0;
    float frame_dt_ = 0.0f;
};

}  // namespace

int bvh_channel_kind(std::string_view s) {
    static constexpr std::string_view names[6] = {"Xposition", "Yposition", "Zposition",
                                                  "Xrotation", "Yrotation", "Zrotation"};
    for (int k = 0; k < 6; ++k)
        if (iequals(s, names[k])) return k;
    return -1;
}

BvhFile parse_bvh(std::string_view text, const std::string& name_for_errors, const BvhOptions& opts) {
    return Parser(text, name_for_errors, opts).run();
}

BvhFile load_bvh(const std::string& path, const BvhOptions& opts) {
    std::FILE* fp = std::fopen(path.c_str(), "rb");
    if (!fp) throw BvhError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
    std::string text;
    char buf[1 << 16];
    for (;;) {
        const size_t n = std::fread(buf, 1, sizeof buf, fp);
        text.append(buf, n);
        if (n < sizeof buf) break;
    }
    const bool bad = std::ferror(fp) != 0;
    const int err = errno;
    std::fclose(fp);
    if (bad) throw BvhError(path, 0, std::string("cannot read file: ") + std::strerror(err));
    return parse_bvh(text, path, opts);
}

float detect_metres_per_unit(const Clip& clip) {
    const int nj = clip.joints();
    if (clip.frames < 1 || nj < 1) return 1.0f;
    const int n = std::min(16, clip.frames);
    std::vector<float> extents;
    extents.reserve(size_t(n));
    std::vector<vec3> gp(static_cast<size_t>(nj));
    std::vector<quat> gr(static_cast<size_t>(nj));
    for (int i = 0; i < n; ++i) {
        const int f = n == 1 ? 0 : int(std::lround(double(i) * double(clip.frames - 1) / double(n - 1)));
        float lo = std::numeric_limits<float>::infinity(), hi = -lo;
        for (int j = 0; j < nj; ++j) {
            const int p = clip.skeleton.parents[size_t(j)];
            if (p < 0) {
                gp[size_t(j)] = clip.pos(f, j);
                gr[size_t(j)] = clip.rot(f, j);
            } else {
                gp[size_t(j)] = gp[size_t(p)] + quat_mul_vec3(gr[size_t(p)], clip.pos(f, j));
                gr[size_t(j)] = quat_mul(gr[size_t(p)], clip.rot(f, j));
            }
            lo = std::min(lo, gp[size_t(j)].y);
            hi = std::max(hi, gp[size_t(j)].y);
        }
        extents.push_back(hi - lo);
    }
    std::sort(extents.begin(), extents.end());
    const size_t m = extents.size() / 2;
    const float extent = extents.size() % 2 ? extents[m] : 0.5f * (extents[m - 1] + extents[m]);
    if (!(extent > 0.0f) || !std::isfinite(extent)) return 1.0f;

    static constexpr float candidates[] = {1.0f, 0.0254f / 0.45f, 0.0254f, 0.01f, 0.001f};
    constexpr float target_height_m = 1.6f;
    float best = 1.0f, best_d = std::numeric_limits<float>::infinity();
    for (const float u : candidates) {
        const float d = std::fabs(std::log(extent * u / target_height_m));
        if (d < best_d) {
            best_d = d;
            best = u;
        }
    }
    return best;
}

}  // namespace ks
