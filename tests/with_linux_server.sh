#!/usr/bin/env bash
# Runs a command with a Linux kinesync-server (dev mode, one character, loopback) for it to watch:
# KS_TIMING_SERVER=127.0.0.1:PORT in its environment. For another build's tests (the Windows
# pumped-client timing test under Wine).
# usage: with_linux_server.sh HOST_BUILD COMMAND...   (exit 77: no Linux build given)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"
host="$1"; shift
if [ -z "$host" ] || [ ! -x "$host/kinesync-server" ]; then
  echo "SKIP: no Linux build to serve (configure with -DKS_HOST_BUILD_DIR=<a Linux build folder>)"
  exit 77
fi
log=$(mktemp)
"$host/kinesync-server" --bind 127.0.0.1 --port 0 --characters 1 --duration 300 > "$log" 2>&1 &
server=$!
trap 'kill "$server" 2> /dev/null || true; rm -f "$log"' EXIT
wait_for_log "$log" "listening on" "$server" || { echo "FAIL: kinesync-server did not start: $(cat "$log")"; exit 1; }
export KS_TIMING_SERVER="127.0.0.1:$(listening_port "$log")" WINEDEBUG=${WINEDEBUG:--all}
"$@"
