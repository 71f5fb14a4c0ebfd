#!/bin/sh
# expect_speed.sh <min-percent> -- schedlab show FUSION --size ... --stage profile
#
# Issue 15's acceptance for one kernel, from one profile: ptxas reports 0
# bytes of stack and no spills, and the model predicts at least
# <min-percent> % of the device's bandwidth. Prints the profile on failure.
if [ $# -lt 3 ] || [ "$2" != "--" ]; then
  echo "usage: expect_speed.sh <min-percent> -- cmd [args...]" >&2
  exit 2
fi
min=$1
shift 2
out=$("$@" 2>&1)
got=$?
ok=1
[ "$got" -eq 0 ] || { echo "expect_speed: exit status $got"; ok=0; }
printf '%s\n' "$out" | grep -Eq "resources .* 0 B stack, 0 B spill stores, 0 B spill loads" ||
  { echo "expect_speed: stack or spills (expected 0 B of each)"; ok=0; }
pct=$(printf '%s\n' "$out" | sed -n 's/.*; \([0-9]*\) % of peak bandwidth$/\1/p' | head -1)
if [ -z "$pct" ] || [ "$pct" -lt "$min" ]; then
  echo "expect_speed: predicted ${pct:-?} % of peak bandwidth, expected at least $min %"
  ok=0
fi
if [ "$ok" -eq 0 ]; then
  echo "command: $*"
  echo "--- output ---"
  printf '%s\n' "$out"
  exit 1
fi
exit 0
