# Sourced by the C# tests: skips (exit 77) where Mono's compiler or runtime is missing.
require_mono() {
  local tool
  for tool in mcs mono; do
    if ! command -v "$tool" > /dev/null 2>&1; then
      echo "SKIP: '$tool' is not on PATH; the C# tests need Mono (Debian: apt-get install mono-devel; ./setup.sh installs it)"
      exit 77
    fi
  done
}
