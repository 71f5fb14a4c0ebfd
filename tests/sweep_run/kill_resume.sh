#!/bin/sh
# A sweep really killed with SIGKILL while it runs, then resumed: every point
# ends up in the JSONL file exactly once, and the records already written
# before the kill are kept byte for byte.
# usage: kill_resume.sh SCHEDLAB PYTHON WORKDIR
set -eu
schedlab=$1 python=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cat > "$work/sweep.yaml" <<YAML
sweep: kill_resume
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [16, 33], K: [64, 130]}
schedulers:
  - name: heuristic
    plugin: pointwise
  - name: blocks
    plugin: pointwise
    space:
      block: [32, 64, 128, 256]
      unroll: [1, 2]
measure: {repetitions: 4, warmup: 1, min_time: 0.04}  # >= 0.16 s a point: the kill lands mid-sweep
backend: cpu
YAML
# 4 sizes x (1 + 8) configs = 36 points.
"$schedlab" run "$work/sweep.yaml" -o "$work/r.jsonl" --cache-dir "$work/cache" -j 1 > "$work/run1.txt" 2>&1 &
pid=$!
i=0
while [ "$(cat "$work/r.jsonl" 2>/dev/null | wc -l)" -lt 3 ]; do
  i=$((i + 1)); [ $i -lt 1200 ] || { echo "no records appeared"; cat "$work/run1.txt"; kill -9 $pid; exit 1; }
  sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null || true
before=$(wc -l < "$work/r.jsonl")
cp "$work/r.jsonl" "$work/before.jsonl"
[ "$before" -lt 36 ] || { echo "the sweep finished before the kill ($before records); make it longer"; exit 1; }
"$schedlab" run "$work/sweep.yaml" -o "$work/r.jsonl" --cache-dir "$work/cache" --resume > "$work/run2.txt" 2>&1
cat "$work/run2.txt"
"$python" - "$work/r.jsonl" "$work/before.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
before = open(sys.argv[2]).read()
recs = [json.loads(l) for l in lines]
keys = [r["key"] for r in recs]
assert len(recs) == 36, f"expected 36 records, found {len(recs)}"
assert len(set(keys)) == 36, f"duplicated records: {len(keys) - len(set(keys))}"
complete = before[: before.rfind("\n") + 1]
assert open(sys.argv[1]).read().startswith(complete), "records written before the kill changed"
assert all(r["status"] == "ok" for r in recs), [r["status"] for r in recs]
print(f"kill/resume: {complete.count(chr(10))} records before the kill, 36 after, no duplicates")
PY
grep -q "resumed" "$work/run2.txt"
