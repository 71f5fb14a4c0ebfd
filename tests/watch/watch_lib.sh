# Shared by the watch tests that follow a running `schedlab watch` (sourced
# after it is started in the background): $work/out.txt is its output and
# $pid its process.
#
# fail MESSAGE: print it and watch's output, stop watch, fail the test.
fail() { echo "$1"; cat "$work/out.txt"; kill $pid 2>/dev/null || true; exit 1; }
# wait_for REGEX: until out.txt has a matching line, or watch ended without
# one. No time limit of its own (a loaded machine is slow, not wrong): CTest's
# TIMEOUT is the failsafe for a watch that hangs.
wait_for() {
  until grep -Eq "$1" "$work/out.txt"; do
    kill -0 $pid 2>/dev/null || grep -Eq "$1" "$work/out.txt" || fail "no line matching /$1/"
    sleep 0.1
  done
}
