# Sourced by the shell tests: wait for a state instead of sleeping a fixed time. A loaded machine
# or a sanitized build makes everything slower, so a script polls what it needs under a deadline
# generous enough that only a real failure reaches it.

KS_DEADLINE_S=${KS_DEADLINE_S:-60}

# wait_until SECONDS CMD...: true as soon as CMD succeeds (polled every 0.1 s), false once SECONDS
# have passed without it.
wait_until() {
  local end=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.1
  done
}

# wait_for_log FILE REGEX [PID]: true once FILE has a line matching REGEX (grep -E); false when
# the deadline passes first, or at once when process PID has ended without writing it. Empty FILE
# before starting the job that writes it: the job opens it a moment later, and an earlier run's
# lines would be read meanwhile.
wait_for_log() {
  wait_until "$KS_DEADLINE_S" _ks_line_or_gone "$@"
  grep -qE -- "$2" "$1" 2>/dev/null
}
_ks_line_or_gone() { grep -qE -- "$2" "$1" 2>/dev/null || { [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; }; }

# listening_port FILE: the UDP port of kinesync-server's "listening on 127.0.0.1:PORT" line.
listening_port() { sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$1" | head -1; }
