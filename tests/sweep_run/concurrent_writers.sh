#!/bin/sh
# Two `schedlab run` on one results file at the same time, as two terminals
# would: the second (plain and --resume) fails at once with a clear message
# naming the first's pid, exit 2, and moves nothing; the first finishes with
# every point exactly once (0 duplicated, 0 lost). Then a garbage line in the
# file: --resume and report warn, skip it and keep it; and a third run keeps
# the previous file as .prev and the one before it as .prev.1.
# usage: concurrent_writers.sh SCHEDLAB PYTHON WORKDIR
set -eu
schedlab=$1 python=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cat > "$work/sweep.yaml" <<YAML
sweep: concurrent
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [16, 33], K: [64]}
schedulers:
  - name: blocks
    plugin: pointwise
    space:
      block: [32, 64, 128]
measure: {repetitions: 4, warmup: 1, min_time: 0.04}
backend: cpu
YAML
# 2 sizes x 3 blocks = 6 points.
"$schedlab" run "$work/sweep.yaml" -o "$work/r.jsonl" --cache-dir "$work/cache" -j 1 > "$work/first.txt" 2>&1 &
pid=$!
i=0
until [ -s "$work/r.jsonl.lock" ]; do
  i=$((i + 1)); [ $i -lt 1200 ] || { echo "the first run never took the lock"; cat "$work/first.txt"; kill $pid; exit 1; }
  sleep 0.05
done
for extra in "" "--resume"; do
  status=0
  "$schedlab" run "$work/sweep.yaml" -o "$work/r.jsonl" --cache-dir "$work/cache" $extra > "$work/second.txt" 2>&1 || status=$?
  cat "$work/second.txt"
  [ $status -eq 2 ] || { echo "the second writer ($extra) exited $status, expected 2"; kill $pid; exit 1; }
  grep -q "^error: results file '$work/r.jsonl' is being written by another schedlab process (pid $pid); expected one writer per results file" "$work/second.txt" ||
    { echo "no clear message"; kill $pid; exit 1; }
done
[ ! -e "$work/r.jsonl.prev" ] || { echo "the second writer moved the first's file"; kill $pid; exit 1; }
wait $pid || { echo "the first run failed"; cat "$work/first.txt"; exit 1; }
"$python" - "$work/r.jsonl" <<'PY'
import json, sys
keys = [(r["fusion"], json.dumps(r["sizes"], sort_keys=True), r["scheduler"], json.dumps(r["config"], sort_keys=True))
        for r in map(json.loads, open(sys.argv[1]))]
assert len(keys) == 6, f"expected 6 records, found {len(keys)}"
assert len(set(keys)) == 6, f"duplicated records: {len(keys) - len(set(keys))}"
PY
# A garbage line: skipped with a warning naming file:line, kept in the file.
cp "$work/r.jsonl" "$work/good.jsonl"
echo 'this is not a record' >> "$work/r.jsonl"
"$schedlab" report "$work/r.jsonl" > "$work/report.txt" 2>&1 || { cat "$work/report.txt"; echo "report failed on a garbage line"; exit 1; }
grep -q "^warning: $work/r.jsonl:7: skipped a line that is not a record (invalid JSON" "$work/report.txt" ||
  { cat "$work/report.txt"; echo "no warning for the garbage line"; exit 1; }
"$schedlab" run "$work/sweep.yaml" -o "$work/r.jsonl" --cache-dir "$work/cache" --resume > "$work/resume.txt" 2>&1 ||
  { cat "$work/resume.txt"; echo "--resume failed on a garbage line"; exit 1; }
grep -q '^6 points: 6 resumed' "$work/resume.txt" || { cat "$work/resume.txt"; echo "not all resumed"; exit 1; }
grep -qx 'this is not a record' "$work/r.jsonl" || { echo "the garbage line was deleted"; exit 1; }
# Runs without --resume keep every earlier file: .prev, then .prev.1.
"$schedlab" run "$work/sweep.yaml" -o "$work/r.jsonl" --cache-dir "$work/cache" > "$work/third.txt" 2>&1 || { cat "$work/third.txt"; exit 1; }
"$schedlab" run "$work/sweep.yaml" -o "$work/r.jsonl" --cache-dir "$work/cache" > "$work/fourth.txt" 2>&1 || { cat "$work/fourth.txt"; exit 1; }
grep -q "^note: the previous results are $work/r.jsonl.prev; the ones before them moved to $work/r.jsonl.prev.1$" "$work/fourth.txt" ||
  { cat "$work/fourth.txt"; echo "no note of the rotation"; exit 1; }
grep -qx 'this is not a record' "$work/r.jsonl.prev.1" || { echo "the garbage line was not kept in .prev.1"; exit 1; }
echo "concurrent writers: ok"
