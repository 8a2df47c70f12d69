#!/usr/bin/env bash
# The public headers as a consumer includes them: each alone in its own translation unit (C++17,
# -Wall -Wextra -Werror; kinesync.h also as C99), and for each header, a handler for every exception
# type its comments say is thrown ("Throws ks::Error ...", "throws std::invalid_argument", "Throws
# BvhError"), with nothing but that header included.
# Usage: headers_test.sh WORK INCLUDE_DIR...   (the installed include/, or the source tree's
# */include/ folders, whose contents are what gets installed)
set -euo pipefail
work="$1"; shift
rm -rf "$work"; mkdir -p "$work"
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

# check_header N REL: REL alone (kinesync.h also as C99), then a handler for each exception it
# promises; its files are $work/N.*, its count of promised types $work/N.promises, and $work/N.ok
# says it passed.
check_header() {
  local n="$1" rel="$2" types
  if [ "$rel" = kinesync/kinesync.h ]; then
    echo "#include <$rel>" > "$work/$n.c"
    ${CC:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only "${includes[@]}" "$work/$n.c" || { echo "FAIL: $rel as C99"; return 1; }
  fi
  echo "#include <$rel>" > "$work/$n.cpp"
  cxx "$work/$n.cpp" || { echo "FAIL: $rel alone as C++17"; return 1; }
  types=$(promised_exceptions "$(for d in "${dirs[@]}"; do [ -f "$d/$rel" ] && echo "$d/$rel"; done | head -1)")
  grep -c . <<<"$types" > "$work/$n.promises" || true
  if [ -n "$types" ]; then
    {
      echo "#include <$rel>"
      echo "int main() {"
      for t in $types; do echo "    try { } catch (const $t& e) { return e.what() != nullptr; }"; done
      echo "    return 0;"
      echo "}"
    } > "$work/$n.catch.cpp"
    if ! cxx "$work/$n.catch.cpp" 2> "$work/$n.catch.log"; then
      cat "$work/$n.catch.cpp" "$work/$n.catch.log"
      echo "FAIL: $rel promises $(echo $types): a handler does not compile with only $rel included"
      return 1
    fi
    echo "$rel: catch $(echo $types)"
  fi
  touch "$work/$n.ok"
}

# One compiler per core at a time; the reports in header order.
dirs=("$@")
mapfile -t rels < <(for d in "$@"; do (cd "$d" && find kinesync -name '*.h'); done | sort)
[ "${#rels[@]}" -gt 0 ] || fail "no headers under $*"
par=$(nproc 2>/dev/null || echo 2)
for i in "${!rels[@]}"; do
  check_header "$i" "${rels[$i]}" > "$work/$i.log" 2>&1 &
  while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do wait -n || true; done
done
wait || true
headers=0 promises=0 broken=0
for i in "${!rels[@]}"; do
  cat "$work/$i.log"
  headers=$((headers + 1))
  [ -f "$work/$i.ok" ] || broken=$((broken + 1))
  promises=$((promises + $(cat "$work/$i.promises" 2>/dev/null || echo 0)))
done
[ "$broken" -eq 0 ] || fail "$broken of $headers headers fail (above)"
[ "$promises" -gt 0 ] || fail "no header's comments promise an exception: the extraction is broken"
echo "$headers public headers compile alone (C++17; kinesync.h also C99); $promises promised exception types caught with only their header"
