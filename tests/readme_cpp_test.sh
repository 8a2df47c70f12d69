#!/usr/bin/env bash
# Every ```cpp and ```c block of the README compiles as a game would build it: each block its own
# translation unit, C++17 or C99, the public include roots only, warnings as errors. Usage: readme_cpp_test.sh SRC BUILD
set -euo pipefail
src="$1"; build="$2"
work="$build/readme-cpp"; rm -rf "$work"; mkdir -p "$work"
awk -v dir="$work" '/^```cpp$/ { n++; f = dir "/block" n ".cpp"; inside = 1; next }
                    /^```c$/ { n++; f = dir "/block" n ".c"; inside = 1; next }
                    /^```$/ { inside = 0; next }
                    inside { print > f }' "$src/README.md"
cpp=$(ls "$work"/block*.cpp 2>/dev/null | wc -l)
c=$(ls "$work"/block*.c 2>/dev/null | wc -l)
[ "$cpp" -gt 0 ] && [ "$c" -gt 0 ] || { echo "FAIL: expected C++ and C blocks in the README ($cpp, $c)"; exit 1; }
for f in "$work"/block*.cpp; do
  ${CXX:-c++} -std=c++17 -fsyntax-only -Wall -Wextra -Werror \
    -I"$src/common/include" -I"$src/server/include" -I"$src/client/include" -I"$src/offline/include" "$f" || { echo "FAIL: $f"; cat -n "$f"; exit 1; }
done
for f in "$work"/block*.c; do
  ${CC:-cc} -std=c99 -fsyntax-only -Wall -Wextra -Werror -I"$src/capi/include" "$f" || { echo "FAIL: $f"; cat -n "$f"; exit 1; }
done
echo "README: $cpp C++ and $c C block(s) compile"
