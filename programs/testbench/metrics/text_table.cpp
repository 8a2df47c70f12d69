#include "programs/testbench/metrics/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ks {

std::string fixed_text(double v, int decimals) {
    if (std::isnan(v)) return "-";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string compact_text(double v) {
    if (!std::isfinite(v)) return fixed_text(v, 0);
    const double a = std::fabs(v);
    return fixed_text(v, a < 10 ? 3 : a < 100 ? 2 : a < 1000 ? 1 : 0);
}

std::string render_text_table(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                              const std::string& indent) {
    std::vector<size_t> width(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
        width[c] = columns[c].name.size();
        for (const auto& row : rows) width[c] = std::max(width[c], c < row.size() ? row[c].size() : 0);
    }
    auto line = [&](auto cell_of) {
        std::string out = indent;
        for (size_t c = 0; c < columns.size(); ++c) {
            const std::string v = cell_of(c);
            const std::string pad(width[c] - v.size(), ' ');
            if (c) out += "  ";
            out += columns[c].left ? v + pad : pad + v;
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out + "\n";
    };
    std::string o = line([&](size_t c) { return columns[c].name; });
    for (const auto& row : rows) o += line([&](size_t c) { return c < row.size() ? row[c] : std::string(); });
    return o;
}

std::string wrap_words(const std::string& text, const std::string& first, const std::string& indent, size_t width) {
    std::string out, line;
    for (size_t b = 0; b < text.size();) {
        const size_t e = std::min(text.find(' ', b), text.size());
        const std::string word = text.substr(b, e - b);
        b = e + 1;
        if (word.empty()) continue;
        if (line.empty()) {
            line = (out.empty() ? first : indent) + word;
        } else if (line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = indent + word;
        } else {
            line += " " + word;
        }
    }
    return line.empty() ? out : out + line + "\n";
}

}  // namespace ks
