#!/usr/bin/env bash
# The public headers as a consumer includes them: each alone in its own translation unit (C++17,
# -Wall -Wextra -Werror; kinesync.h also as C99), and for each header, a handler for every exception
# type its comments say is thrown ("Throws ks::Error ...", "throws std::invalid_argument", "Throws
# BvhError"), with nothing but that header included.
# Usage: headers_test.sh WORK INCLUDE_DIR...   (the installed include/, or the source tree's
# */include/ folders, whose contents are what gets installed)
set -euo pipefail
work="$1"; shift
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
includes=()
for d in "$@"; do includes+=(-I"$d"); done
cxx() { ${CXX:-c++} -std=c++17 -pedantic -Wall -Wextra -Werror -fsyntax-only "${includes[@]}" "$@"; }

# The exception types a header's // comments promise, one a line, qualified (BvhError is ks::).
promised_exceptions() {
  python3 - "$1" <<'PY'
import re, sys
comments = ' '.join(line.split('//', 1)[1] for line in open(sys.argv[1]) if '//' in line)
# "throws T", and any standard exception or ks:: error named ("..., std::invalid_argument for ...").
found = re.findall(r'\b[Tt]hrows?\s+\(?((?:ks|std)::\w+|[A-Z]\w*(?:Error|Exception))\b', comments)
found += re.findall(r'\b(std::\w*(?:_error|_argument|_range|exception)|ks::\w*Error)\b', comments)
for t in sorted(set(found)):
    print(t if '::' in t else 'ks::' + t)
PY
}

headers=0 promises=0 broken=0
while IFS= read -r rel; do
  if [ "$rel" = kinesync/kinesync.h ]; then
    echo "#include <$rel>" > "$work/alone.c"
    ${CC:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only "${includes[@]}" "$work/alone.c" || fail "$rel as C99"
  fi
  echo "#include <$rel>" > "$work/alone.cpp"
  cxx "$work/alone.cpp" || fail "$rel alone as C++17"
  headers=$((headers + 1))
  types=$(promised_exceptions "$(for d in "$@"; do [ -f "$d/$rel" ] && echo "$d/$rel"; done | head -1)")
  [ -n "$types" ] || continue
  {
    echo "#include <$rel>"
    echo "int main() {"
    for t in $types; do echo "    try { } catch (const $t& e) { return e.what() != nullptr; }"; done
    echo "    return 0;"
    echo "}"
  } > "$work/catch.cpp"
  if cxx "$work/catch.cpp" 2> "$work/catch.log"; then
    echo "$rel: catch $(echo $types)"
  else
    cat "$work/catch.cpp" "$work/catch.log"
    echo "FAIL: $rel promises $(echo $types): a handler does not compile with only $rel included"
    broken=$((broken + 1))
  fi
  promises=$((promises + $(echo "$types" | wc -l)))
done < <(for d in "$@"; do (cd "$d" && find kinesync -name '*.h'); done | sort)
[ "$headers" -gt 0 ] || fail "no headers under $*"
[ "$broken" -eq 0 ] || fail "$broken headers promise exceptions they do not declare"
[ "$promises" -gt 0 ] || fail "no header's comments promise an exception: the extraction is broken"
echo "$headers public headers compile alone (C++17; kinesync.h also C99); $promises promised exception types caught with only their header"
