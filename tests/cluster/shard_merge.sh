#!/bin/sh
# Issue 19's acceptance: `run --shard 0/2` and `run --shard 1/2`, merged,
# hold exactly the points of one whole run, each once; the shards are
# disjoint and balanced; `report` and `compare` read the merged file as one
# run (compare matches every point, none only in one file).
# usage: shard_merge.sh SCHEDLAB PYTHON WORKDIR
set -eu
schedlab=$1 python=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cat > "$work/sweep.yaml" <<YAML
sweep: shard_merge
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [16, 33], K: [64]}
schedulers:
  - name: heuristic
    plugin: pointwise
  - name: blocks
    plugin: pointwise
    space:
      block: [32, 64, 128]
      unroll: [1, 2]
measure: {repetitions: 2, warmup: 1}
backend: cpu
YAML
# 2 sizes x (1 + 6) configs = 14 points.
common="--cache-dir $work/cache --progress-interval 1000"
"$schedlab" run "$work/sweep.yaml" -o "$work/whole.jsonl" $common > "$work/whole.txt" 2>&1 || { cat "$work/whole.txt"; exit 1; }
for i in 0 1; do
  "$schedlab" run "$work/sweep.yaml" --shard $i/2 -o "$work/shard$i.jsonl" $common > "$work/shard$i.txt" 2>&1 \
    || { cat "$work/shard$i.txt"; exit 1; }
  grep "^shard $i/2: 7 of the sweep's 14 points$" "$work/shard$i.txt"
done
"$schedlab" merge "$work/shard0.jsonl" "$work/shard1.jsonl" -o "$work/merged.jsonl" | tee "$work/merge.txt"
grep -q "^merged 14 records from 2 files into $work/merged.jsonl (0 exact duplicates dropped)$" "$work/merge.txt"
"$schedlab" report "$work/merged.jsonl" > "$work/report.txt"
grep -Eq "^pointwise_add_mul +N=33,K=64 +" "$work/report.txt"
"$schedlab" compare "$work/whole.jsonl" "$work/merged.jsonl" --format json > "$work/compare.json" || [ $? -eq 1 ]
"$python" - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def recs(name):
    return [json.loads(l) for l in open(f"{w}/{name}.jsonl") if l.strip()]
def point(r):
    return (r["fusion"], r["size_label"], r["scheduler"], json.dumps(r["config"], sort_keys=True))
whole, s0, s1, merged = (recs(n) for n in ("whole", "shard0", "shard1", "merged"))
p0, p1 = {point(r) for r in s0}, {point(r) for r in s1}
assert not p0 & p1, f"the shards overlap: {p0 & p1}"
assert abs(len(s0) - len(s1)) <= 1, (len(s0), len(s1))
got = [point(r) for r in merged]
assert len(got) == len(set(got)) == 14, f"{len(got)} merged records, {len(set(got))} points"
assert set(got) == {point(r) for r in whole}, "the merged points are not the whole run's"
assert all(r["host"] and r["sweep_hash"] == whole[0]["sweep_hash"] for r in merged)
c = json.load(open(f"{w}/compare.json"))
verdicts = [b["verdict"] for b in c["benchmarks"]]
assert verdicts and not any(v.startswith("only in") for v in verdicts), verdicts
print(f"shards of {len(s0)} and {len(s1)} points merged = the whole run's 14; compare matched {len(verdicts)}")
PY
