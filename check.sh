#!/usr/bin/env bash
# The one command: set up (Debian packages), build, and run the whole test suite, then the same
# suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
#   ./check.sh            everything
#   ./check.sh --no-setup skip the apt-get step (packages already installed)
#   ./check.sh --fast     skip the sanitizer build
# Real-clip tests read ../shared/mocap (or $KS_MOCAP_DIR) and skip with a message when absent.
set -euo pipefail
cd "$(dirname "$0")"
setup=1; sanitize=1
for arg in "$@"; do
  case "$arg" in
    --no-setup) setup=0 ;;
    --fast) sanitize=0 ;;
    *) echo "unknown option: $arg" >&2; exit 2 ;;
  esac
done
jobs=$(nproc 2>/dev/null || echo 2)

[ "$setup" = 1 ] && ./setup.sh

echo "== build (Release, -Wall -Wextra -Werror) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
echo "== tests =="
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "$sanitize" = 1 ]; then
  echo "== build (Debug + AddressSanitizer + UndefinedBehaviorSanitizer) =="
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKS_SANITIZE=ON -DKS_BUILD_BENCH=OFF
  cmake --build build-asan -j "$jobs"
  echo "== tests under sanitizers =="
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
echo "== all checks passed =="
