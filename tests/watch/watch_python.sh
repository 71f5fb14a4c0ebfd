#!/bin/sh
# `schedlab watch` on a Python heuristic (issue 35): the .py file is the
# plugin's binary. A save that does not parse fails to reload (the first text
# keeps serving). A saved edit of its constant (PERSIST 8 -> 4) is reloaded
# with no build (no "building" line: nothing is compiled but the kernels),
# re-run as an A/B of the new text against the snapshot of the old, and
# printed as a new table. A saved edit that raises in schedule() is a
# plugin_error naming the file and line where the generation before passed,
# so it is rolled back, and the old text's points are re-run.
# usage: watch_python.sh SCHEDLAB HEURISTIC WORKDIR
set -eu
schedlab=$1 heuristic=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cp "$heuristic" "$work/mine.py"
cp "$(dirname "$0")/fixtures/watch_python.yaml" "$work/sweep.yaml"  # file: mine.py
"$schedlab" watch "$work/sweep.yaml" -o "$work/results.jsonl" --max-reruns 2 \
  --cache-dir "$work/cache" > "$work/out.txt" 2>&1 &
pid=$!
. "$(dirname "$0")/watch_lib.sh"  # fail, wait_for
wait_for "^watching py_persist: Python heuristic $work/mine.py \(a save reloads it, no build\)$"
grep -Eq ' py_persist +persist=8 ' "$work/out.txt" || fail "the first table lacks py_persist persist=8"
if grep -q 'no sources known' "$work/out.txt"; then fail "a 'no sources known' hint for a .py"; fi
# A save that does not parse: the reload fails, naming the file and line,
# and generation 1 keeps serving (no re-run).
sleep 1.1  # a new mtime second for file systems with coarse stamps
sed 's/^def compute_params(segment):$/def compute_params(segment:/' "$heuristic" > "$work/next.py" &&
  mv "$work/next.py" "$work/mine.py"
wait_for "^reload of py_persist failed; still serving generation 1: .*mine\.py:[0-9]+: SyntaxError"
# The one-constant edit: a new table, the A/B verdict, no build.
sleep 1.1
sed 's/^PERSIST = 8$/PERSIST = 4/' "$heuristic" > "$work/next.py" && mv "$work/next.py" "$work/mine.py"
grep -q '^PERSIST = 4$' "$work/mine.py" || fail "the fixture has no 'PERSIST = 8' line to edit"
wait_for '^reloaded py_persist \(generation 2\); re-running py_persist against generation 1$'
wait_for '^[0-9]+ points re-run, both builds$'
grep -Eq ' py_persist +persist=4 ' "$work/out.txt" || fail "the new table lacks py_persist persist=4"
grep -Eq '^softmax N=8,K=1024 py_persist: new build .*; persist=4 instead of persist=8$' "$work/out.txt" ||
  fail "no A/B verdict of the edit against the old text"
# A broken edit: schedule() raises. Generation 2 passed the same point.
sleep 1.1
sed -e 's/^PERSIST = 8$/PERSIST = 4/' -e 's/^    y = segment.outputs\[0\]$/    y = segment.outputs[0]\n    params["no_such_param"]/' \
  "$heuristic" > "$work/next.py" && mv "$work/next.py" "$work/mine.py"
grep -q 'no_such_param' "$work/mine.py" || fail "the fixture's schedule() has no line to break"
wait_for "^rolled back py_persist to generation 2 \(version 1\.0\): generation 3 plugin_error: .*mine\.py:[0-9]+: in schedule: KeyError: 'no_such_param' on softmax N=8,K=1024 \(py_persist\), where generation 2 passed. generation 2 serves until mine\.py changes again$"
wait_for '^[0-9]+ points re-run with generation 2$'
status=0
wait $pid || status=$?
cat "$work/out.txt"
[ $status -eq 0 ] || { echo "watch exited with $status"; exit 1; }
# No compiler ran for the heuristic: watch printed no build.
if grep -q 'building' "$work/out.txt"; then echo "watch built something for a .py edit"; exit 1; fi
# The last record of py_persist (not its A/B twin) is generation 2's text, ok.
last=$(grep '"scheduler":"py_persist"' "$work/results.jsonl" | tail -n 1)
echo "$last" | grep -q '"config":{"persist":"4"}' || { echo "last record not persist=4: $last"; exit 1; }
echo "$last" | grep -q '"status":"ok"' || { echo "last record not ok: $last"; exit 1; }
echo "watch python: ok"
