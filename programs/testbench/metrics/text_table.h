#pragma once
// Plain-text tables for the replay's stdout: every column as wide as its widest cell (its name
// included), prose wrapped to a width, and the numbers' cells.

#include <cstddef>
#include <string>
#include <vector>

namespace ks {

// v with `decimals` decimals; "-" for NaN, "inf" / "-inf".
std::string fixed_text(double v, int decimals);
// At most 6 characters below 1e6: three decimals below 10, two below 100, one below 1000, none above.
std::string compact_text(double v);

struct TextColumn {
    std::string name;
    bool left = false;  // left-aligned (names, labels); numbers are right-aligned
};

// The header line and one line per row (a row has a cell per column), columns two spaces apart,
// `indent` before each line, trailing spaces removed; every line newline-terminated.
std::string render_text_table(const std::vector<TextColumn>& columns, const std::vector<std::vector<std::string>>& rows,
                              const std::string& indent = "");

// The words of `text` (split at spaces) in lines of at most `width` characters (a word longer
// than that has a line of its own), the first line starting with `first`, the others with
// `indent`; every line newline-terminated. Nothing for no words.
std::string wrap_words(const std::string& text, const std::string& first, const std::string& indent, size_t width);

}  // namespace ks
