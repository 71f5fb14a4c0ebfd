#!/bin/sh
# expect_exit.sh <code> <regex> -- cmd [args...]
#
# Runs cmd with stdout and stderr captured together. Passes when cmd exits
# with status <code> and its output matches the extended regex <regex>
# (grep -E); otherwise prints the command, what it got, and fails.
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
  echo "usage: expect_exit.sh <code> <regex> -- cmd [args...]" >&2
  exit 2
fi
want=$1
regex=$2
shift 3

out=$("$@" 2>&1)
got=$?

ok=1
if [ "$got" -ne "$want" ]; then
  echo "expect_exit: exit status $got, expected $want"
  ok=0
fi
if ! printf '%s\n' "$out" | grep -Eq -e "$regex"; then
  echo "expect_exit: output does not match /$regex/"
  ok=0
fi
if [ "$ok" -eq 0 ]; then
  echo "command: $*"
  echo "--- output ---"
  printf '%s\n' "$out"
  exit 1
fi
exit 0
