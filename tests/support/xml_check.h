#pragma once
// A small XML well-formedness check for the SVG files kinesync writes: one root element, every
// start tag closed in order, attributes quoted, only the five predefined entities, no stray '<'.
// Returns an empty string when well formed, otherwise what is wrong and where.

#include <string>
#include <vector>

namespace ks::test {

inline std::string xml_check(const std::string& s) {
    std::vector<std::string> stack;
    size_t i = 0;
    int roots = 0;
    auto err = [&](const std::string& what) { return what + " at byte " + std::to_string(i); };
    while (i < s.size()) {
        if (s[i] == '&') {
            static const char* ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            bool ok = false;
            for (const char* e : ents)
                if (s.compare(i, std::char_traits<char>::length(e), e) == 0) ok = true;
            if (!ok) return err("bad entity");
            ++i;
            continue;
        }
        if (s[i] != '<') {
            if (stack.empty() && !isspace(static_cast<unsigned char>(s[i]))) return err("text outside the root");
            ++i;
            continue;
        }
        if (s.compare(i, 5, "<?xml") == 0) {
            const size_t e = s.find("?>", i);
            if (e == std::string::npos) return err("unterminated declaration");
            i = e + 2;
            continue;
        }
        if (s.compare(i, 4, "<!--") == 0) {
            const size_t e = s.find("-->", i);
            if (e == std::string::npos) return err("unterminated comment");
            i = e + 3;
            continue;
        }
        const bool closing = i + 1 < s.size() && s[i + 1] == '/';
        size_t j = i + (closing ? 2 : 1);
        size_t n = j;
        while (n < s.size() && (isalnum(static_cast<unsigned char>(s[n])) || s[n] == '-' || s[n] == ':' || s[n] == '_')) ++n;
        const std::string name = s.substr(j, n - j);
        if (name.empty()) return err("empty tag name");
        // attributes
        bool self_closing = false;
        while (n < s.size() && s[n] != '>') {
            if (s[n] == '/' && n + 1 < s.size() && s[n + 1] == '>') {
                self_closing = true;
                ++n;
                break;
            }
            if (s[n] == '"' || s[n] == '\'') {
                const char q = s[n];
                const size_t e = s.find(q, n + 1);
                if (e == std::string::npos) return err("unterminated attribute");
                if (s.substr(n + 1, e - n - 1).find('<') != std::string::npos) return err("'<' inside an attribute");
                n = e + 1;
                continue;
            }
            if (s[n] == '<') return err("'<' inside a tag");
            if (s[n] == '=' && (n + 1 >= s.size() || (s[n + 1] != '"' && s[n + 1] != '\''))) return err("unquoted attribute");
            ++n;
        }
        if (n >= s.size()) return err("unterminated tag");
        i = n + 1;
        if (closing) {
            if (stack.empty() || stack.back() != name) return err("unexpected </" + name + ">");
            stack.pop_back();
        } else if (!self_closing) {
            if (stack.empty()) ++roots;
            stack.push_back(name);
        } else if (stack.empty()) {
            ++roots;
        }
    }
    if (!stack.empty()) return "unclosed <" + stack.back() + ">";
    if (roots != 1) return std::string("expected one root element, found ") + std::to_string(roots);
    return {};
}

}  // namespace ks::test
