#!/bin/sh
# Google Benchmark's own tools/compare.py reads the --benchmark_out JSON of
# `schedlab run`: two runs of a small sweep, compared benchmark by benchmark.
# Skips (exit 77) where compare.py (Debian: libbenchmark-tools) or SciPy
# (python3-scipy), which compare.py needs, is missing.
# usage: compare_py_test.sh SCHEDLAB PYTHON WORKDIR
set -eu
schedlab=$1 python=$2 work=$3
compare_py=
for c in /usr/share/benchmark/compare.py /usr/local/share/benchmark/compare.py; do
  [ -f "$c" ] && compare_py=$c && break
done
[ -n "$compare_py" ] || { echo "SKIP: no Google Benchmark compare.py (apt install libbenchmark-tools)"; exit 77; }
"$python" -c 'import scipy' 2>/dev/null || { echo "SKIP: compare.py needs SciPy (apt install python3-scipy)"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
sweep=$work/sweep.yaml
cat > "$sweep" <<YAML
sweep: compare_py
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [16], K: [64]}
schedulers:
  - name: heuristic
    plugin: pointwise
  - name: wide
    plugin: pointwise
    set: {block: 64}
measure: {repetitions: 9, warmup: 1}
backend: cpu
YAML
for run in a b; do
  "$schedlab" run "$sweep" -o "$work/$run.jsonl" --cache-dir "$work/cache" \
    --benchmark_out="$work/$run.json" --benchmark_out_format=json > "$work/$run.txt"
done
"$python" "$compare_py" --no-color benchmarks "$work/a.json" "$work/b.json" > "$work/compare.txt" 2>&1 || {
  cat "$work/compare.txt"; echo "compare.py failed"; exit 1; }
cat "$work/compare.txt"
# One row per point (the time columns) and the repetitions' U test.
grep -q 'pointwise_add_mul/N=16,K=64/heuristic/block=32,vector=4,unroll=1,break_point=0/iterations:1/repeats:9/manual_time ' "$work/compare.txt" ||
  { echo "no row for the heuristic's point"; exit 1; }
grep -q 'U Test' "$work/compare.txt" || { echo "no U test: repetitions not read"; exit 1; }
echo "compare.py: ok"
