#!/bin/sh
# Issue 18's acceptance for tuned configurations: `schedlab tune` on a sweep
# with `objective: predicted` (deterministic), then `run --tuned` of a sweep
# whose heuristic row runs inside and outside the tuned buckets: inside, the
# row's configuration is the tuned one (and its record names the entry);
# outside, it is the plugin's own choice (the same as a run without
# --tuned). `exec --tuned` and `plugins --tuned` agree, and the sweep key
# `tuned:` does what --tuned does.
# usage: tune_cli.sh SCHEDLAB PYTHON WORKDIR
set -eu
schedlab=$1 python=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cat > "$work/tune.yaml" <<YAML
sweep: tune_accept
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [64], K: [256, 1024]}
schedulers:
  - name: blocks
    plugin: pointwise
    space:
      block: [64, 256]
      unroll: [1, 2]
strategy: {method: grid, objective: predicted}
buckets: {N: any, K: pow2}
measure: {repetitions: 1, warmup: 0}
validation: {sanitize: false}
backend: cpu
YAML
common="--cache-dir $work/cache --progress-interval 1000"
"$schedlab" tune "$work/tune.yaml" -o "$work/tuned.yaml" --results "$work/tune.jsonl" $common \
  > "$work/tune.txt" 2>&1 || { cat "$work/tune.txt"; exit 1; }
cat "$work/tune.txt"
grep -q "^2 entries in $work/tuned.yaml" "$work/tune.txt"
grep -q "^  pointwise_add_mul N=any K=\[256, 511\] | blocks (pointwise): block=" "$work/tune.txt"

# The heuristic row at K=256 and K=384 (bucket [256, 511]), K=1024 (tuned
# exactly) and K=4096 (no bucket).
cat > "$work/run.yaml" <<YAML
sweep: run_tuned
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [64], K: [256, 384, 1024, 4096]}
schedulers:
  - name: heuristic
    plugin: pointwise
measure: {repetitions: 1, warmup: 0}
validation: {sanitize: false}
backend: cpu
YAML
"$schedlab" run "$work/run.yaml" -o "$work/own.jsonl" $common > "$work/own.txt" 2>&1 \
  || { cat "$work/own.txt"; exit 1; }
"$schedlab" run "$work/run.yaml" --tuned "$work/tuned.yaml" -o "$work/tuned.jsonl" $common \
  > "$work/run.txt" 2>&1 || { cat "$work/run.txt"; exit 1; }
# The table marks the heuristic row's tuned configuration, in the buckets only.
grep -Eq "^pointwise_add_mul +N=64,K=384 +heuristic +block=64,vector=4,unroll=1,break_point=1 \(tuned\) " "$work/run.txt" \
  || { cat "$work/run.txt"; exit 1; }
if grep -E "K=4096 .*\(tuned\)" "$work/run.txt"; then exit 1; fi
# The sweep key does the same as the flag.
sed "s|^backend: cpu|backend: cpu\ntuned: tuned.yaml|" "$work/run.yaml" > "$work/run_key.yaml"
"$schedlab" run "$work/run_key.yaml" -o "$work/key.jsonl" $common > "$work/key.txt" 2>&1 \
  || { cat "$work/key.txt"; exit 1; }
"$python" - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def recs(name):
    return {r["size_label"]: r for r in (json.loads(l) for l in open(f"{w}/{name}.jsonl") if l.strip())}
own, tuned, key = recs("own"), recs("tuned"), recs("key")
# The tuned file's entries, by bucket, read back with the YAML the file is in.
import re
text = open(f"{w}/tuned.yaml").read()
configs = {}
for m in re.finditer(r"bucket: \{N: any, K: \[(\d+), (\d+)\]\}\n\s+config: \{([^}]*)\}", text):
    configs[(int(m.group(1)), int(m.group(2)))] = dict(kv.split(": ", 1) for kv in m.group(3).split(", "))
assert set(configs) == {(256, 511), (1024, 2047)}, configs
def as_config(r):
    return r["config"]
for size, bucket in (("N=64,K=256", (256, 511)), ("N=64,K=384", (256, 511)), ("N=64,K=1024", (1024, 2047))):
    r = tuned[size]
    assert r["status"] == "ok", r
    assert as_config(r) == configs[bucket], (size, as_config(r), configs[bucket])
    assert r.get("tuned", "").endswith(f"pointwise_add_mul N=any K=[{bucket[0]}, {bucket[1]}]"), r.get("tuned")
    assert as_config(key[size]) == configs[bucket], (size, "sweep key", as_config(key[size]))
# At K=256 the heuristic alone chooses otherwise: the check above can fail.
assert as_config(own["N=64,K=256"]) != configs[(256, 511)], as_config(own["N=64,K=256"])
# Outside the tuned buckets: the plugin's own choice, and no tuned entry named.
r = tuned["N=64,K=4096"]
assert "tuned" not in r, r
assert r["config"] == own["N=64,K=4096"]["config"], (r["config"], own["N=64,K=4096"]["config"])
print("run --tuned: the tuned configuration in the buckets, the plugin's own outside")
PY
# exec --tuned names the entry it served; outside a bucket there is none to name.
"$schedlab" exec pointwise_add_mul --size N=64,K=384 --plugin pointwise --tuned "$work/tuned.yaml" \
  --backend cpu --cache-dir "$work/cache" > "$work/exec.txt" 2>&1 || { cat "$work/exec.txt"; exit 1; }
grep -q "^  tuned: $work/tuned.yaml:[0-9]*: pointwise_add_mul N=any K=\[256, 511\]$" "$work/exec.txt" \
  || { cat "$work/exec.txt"; exit 1; }
"$schedlab" exec pointwise_add_mul --size N=64,K=4096 --tuned "$work/tuned.yaml" \
  --backend cpu --cache-dir "$work/cache" > "$work/exec_out.txt" 2>&1 || { cat "$work/exec_out.txt"; exit 1; }
if grep -q "tuned" "$work/exec_out.txt"; then cat "$work/exec_out.txt"; exit 1; fi
# plugins --tuned lists the buckets under the plugin that serves them.
"$schedlab" plugins --tuned "$work/tuned.yaml" > "$work/plugins.txt"
grep -q "^    pointwise_add_mul N=any K=\[256, 511\] (line [0-9]*, from blocks): block=" "$work/plugins.txt" \
  || { cat "$work/plugins.txt"; exit 1; }
grep -q "^    pointwise_add_mul N=any K=\[1024, 2047\] (line [0-9]*, from blocks): block=" "$work/plugins.txt"
echo "tune_cli: ok"
