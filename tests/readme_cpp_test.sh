#!/usr/bin/env bash
# Every ```cpp block of the README compiles (as its own translation unit, with the project's
# include paths and warnings as errors). Usage: readme_cpp_test.sh SRC BUILD
set -euo pipefail
src="$1"; build="$2"
work="$build/readme-cpp"; rm -rf "$work"; mkdir -p "$work"
awk -v dir="$work" '/^```cpp$/ { n++; f = dir "/block" n ".cpp"; inside = 1; next }
                    /^```$/ { inside = 0; next }
                    inside { print > f }' "$src/README.md"
count=$(ls "$work"/block*.cpp 2>/dev/null | wc -l)
[ "$count" -gt 0 ] || { echo "FAIL: no cpp block in the README"; exit 1; }
for f in "$work"/block*.cpp; do
  ${CXX:-c++} -std=c++20 -fsyntax-only -Wall -Wextra -Werror -DASIO_STANDALONE -DASIO_NO_DEPRECATED \
    -I"$src" -I"$build/generated" "$f" || { echo "FAIL: $f"; cat -n "$f"; exit 1; }
done
echo "README: $count C++ block(s) compile"
