#!/usr/bin/env bash
# The C# binding (bindings/csharp/) under Mono.
# usage: tests/csharp_test.sh BUILD_DIR WORK_DIR   (from the repository root; exit 77 = skipped)
#
# 1. Compiles the binding, the Unity sample (against tests/csharp/UnityStubs.cs) and the tests with
#    mcs -warnaserror, and checks the Unity package's layout.
# 2. Unit checks: lifecycle, typed errors, the Unity conventions round trip.
# 3. A managed client and the C++ reference client (tests/csharp/reference_client.cpp), both with
#    the snap strategy, on one dev-mode kinesync-server: the managed one sees every character, its
#    global poses equal the C++ client's at every snapshot both saw (within 0.5 mm), and 1,000
#    frames of its per-frame loop allocate 0 bytes. Then the same with a connect token.
# 4. A token of another key, and a port nobody serves: ConnectionFailedException.
# 5. A managed KinesyncServer streams a character the C++ reference client receives.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/support/wait.sh"

bin="${1:?usage: csharp_test.sh BUILD_DIR WORK_DIR}"
work="${2:?usage: csharp_test.sh BUILD_DIR WORK_DIR}"
source "$(dirname "${BASH_SOURCE[0]}")/support/mono.sh"
require_mono

fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$work"
work="$(cd "$work" && pwd)"
bin="$(cd "$bin" && pwd)"
pkg=bindings/csharp
export LD_LIBRARY_PATH="$bin/capi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done; }
trap cleanup EXIT

# 1. Compile; the package's layout.
mcs -target:library -warnaserror -out:"$work/Kinesync.Runtime.dll" "$pkg"/Runtime/*.cs
mcs -target:library -warnaserror -out:"$work/Sample.dll" -r:"$work/Kinesync.Runtime.dll" tests/csharp/UnityStubs.cs "$pkg"/Samples~/*/*.cs
mcs -warnaserror -out:"$work/KinesyncTests.exe" -r:"$work/Kinesync.Runtime.dll" tests/csharp/BindingTests.cs
python3 - "$pkg" <<'PY'
import json, os, sys
root = sys.argv[1]
pkg = json.load(open(os.path.join(root, 'package.json')))
problems = [f'package.json lacks "{k}"' for k in ('name', 'version', 'displayName', 'unity') if k not in pkg]
if not pkg.get('name', '').startswith('com.'):
    problems.append('package name %r is not reverse-domain' % pkg.get('name'))
asmdefs = [f for f in os.listdir(os.path.join(root, 'Runtime')) if f.endswith('.asmdef')]
if len(asmdefs) != 1:
    problems.append('Runtime/ has %d assembly definitions' % len(asmdefs))
else:
    asm = json.load(open(os.path.join(root, 'Runtime', asmdefs[0])))
    if asm.get('name') + '.asmdef' != asmdefs[0]:
        problems.append('the assembly definition is not named for its assembly')
for s in pkg.get('samples', []):
    if not os.path.isdir(os.path.join(root, s['path'])):
        problems.append('sample path %s is missing' % s['path'])
for d in ('Runtime', 'Plugins', 'Samples~'):
    if not os.path.isdir(os.path.join(root, d)):
        problems.append(d + '/ is missing')
if problems:
    sys.exit('package layout: ' + '; '.join(problems))
print('package layout ok: %s %s, %s' % (pkg['name'], pkg['version'], asmdefs[0]))
PY
tests() { (cd "$work" && exec mono KinesyncTests.exe "$@"); }

# 2. Unit checks.
tests unit || fail "unit checks"

server_pid=""
start_server() {  # start_server LOG ARGS...: starts kinesync-server, sets server_pid and port
  local log="$1"; shift
  : > "$log"  # emptied here: the background job opens it a moment later, an earlier run's lines meanwhile
  ${KS_RUN-} "$bin/kinesync-server" --bind 127.0.0.1 --port 0 --characters 3 --duration 40 "$@" > "$log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  wait_for_log "$log" "listening on" "$server_pid" || true
  port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  [ -n "$port" ] || fail "kinesync-server did not start: $(cat "$log")"
}
compare() {  # compare MANAGED CPP: the worst joint difference of the snapshots both saw
  python3 tests/support/compare_poses.py "$1" "$2" 5e-4 "managed client" "C++ client"
}

# 3. Dev mode, then with a token.
start_server "$work/server-dev.log"
tests client 127.0.0.1 "$port" 4 "$work/managed-dev.txt" 3 > "$work/managed-dev.log" 2>&1 &
managed=$!
pids+=("$managed")
${KS_RUN-} "$bin/kinesync-csharp-reference" 127.0.0.1 "$port" 4 "$work/cpp-dev.txt" > "$work/cpp-dev.log" 2>&1 || fail "C++ client: $(cat "$work/cpp-dev.log")"
wait "$managed" || fail "managed client (dev mode): $(cat "$work/managed-dev.log")"
cat "$work/managed-dev.log"
compare "$work/managed-dev.txt" "$work/cpp-dev.txt" || fail "dev mode"
kill "$server_pid" 2> /dev/null || true

${KS_RUN-} "$bin/kinesync-token" keygen --out "$work/k.key" > /dev/null
${KS_RUN-} "$bin/kinesync-token" keygen --out "$work/other.key" > /dev/null
start_server "$work/server-token.log" --key-file "$work/k.key"
${KS_RUN-} "$bin/kinesync-token" issue --key-file "$work/k.key" --server "127.0.0.1:$port" --client-id 7 --out "$work/t.kstoken" > /dev/null
tests client 127.0.0.1 "$port" 3 "$work/managed-token.txt" 3 "$work/t.kstoken" > "$work/managed-token.log" 2>&1 \
  || fail "managed client (token): $(cat "$work/managed-token.log")"
grep -q "allocations: 0 bytes" "$work/managed-token.log" || fail "allocations with a token: $(cat "$work/managed-token.log")"
echo "with a token: $(head -1 "$work/managed-token.log")"

# 4. A token of another key (to the keyed server); a port nobody serves.
${KS_RUN-} "$bin/kinesync-token" issue --key-file "$work/other.key" --server "127.0.0.1:$port" --client-id 8 --out "$work/bad.kstoken" > /dev/null
tests badtoken 127.0.0.1 "$port" "$work/bad.kstoken" || fail "a token of another key"
dead=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
tests dead "$dead" || fail "a dead server"
kill "$server_pid" 2> /dev/null || true

# 5. A managed server, a C++ client.
rm -f "$work/managed-server.port"
tests server 4 "$work/managed-server.port" > "$work/managed-server.log" 2>&1 &
managed_server=$!
pids+=("$managed_server")
wait_until "$KS_DEADLINE_S" test -s "$work/managed-server.port" || true
[ -s "$work/managed-server.port" ] || fail "the managed server did not start: $(cat "$work/managed-server.log")"
${KS_RUN-} "$bin/kinesync-csharp-reference" 127.0.0.1 "$(cat "$work/managed-server.port")" 2 "$work/cpp-managed.txt" > "$work/cpp-managed.log" 2>&1 \
  || fail "C++ client of the managed server: $(cat "$work/cpp-managed.log")"
grep -q "managed-arm joints 3" "$work/cpp-managed.log" || fail "the C++ client did not receive managed-arm: $(cat "$work/cpp-managed.log")"
python3 - "$work/cpp-managed.txt" <<'PY'
import sys
rows = [[float(x) for x in l.split()] for l in open(sys.argv[1])]
# tick, character, then root, shoulder, hand in metres: the shoulder 1.5 m above the root.
worst = max(abs(r[6] - r[3] - 1.5) for r in rows)
if len(rows) < 20 or worst > 1e-3:
    sys.exit('managed server: %d snapshots, shoulder height error %.3g m' % (len(rows), worst))
print('managed server -> C++ client: %d snapshots, shoulder 1.5 m above the root within %.2g m' % (len(rows), worst))
PY
wait "$managed_server" || fail "the managed server: $(cat "$work/managed-server.log")"
cat "$work/managed-server.log"
echo "csharp ok"
