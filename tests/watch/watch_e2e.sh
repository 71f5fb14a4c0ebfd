#!/bin/sh
# The watch loop end to end: build a plugin from a copy of watch_plugin.cpp,
# start `schedlab watch` on a sweep that uses it, change the heuristic's one
# constant (block 64 -> 128), and expect watch to rebuild, reload, re-run and
# print the new best config with its change and the paired new/old verdict
# (both builds timed in the same rounds), the change column in the A/B
# line's own words; then break the source and
# expect the build failure to be reported while the old version serves.
# usage: watch_e2e.sh SCHEDLAB CXX PLUGIN_API_INCLUDE SOURCE WORKDIR
set -eu
schedlab=$1 cxx=$2 inc=$3 src=$4 work=$5
rm -rf "$work" && mkdir -p "$work/src"
cp "$src" "$work/src/watch_plugin.cpp"
build="$cxx -std=c++17 -shared -fPIC -O0 -fvisibility=hidden -I$inc $work/src/watch_plugin.cpp -o $work/tmp.so && mv $work/tmp.so $work/watch_plugin.so"
sh -c "$build"
cat > "$work/sweep.yaml" <<YAML
sweep: watch_e2e
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: [64], K: [256]}
schedulers:
  - name: mine
    plugin: $work/watch_plugin.so
measure: {repetitions: 3, warmup: 0}
backend: cpu
YAML
"$schedlab" watch "$work/sweep.yaml" -o "$work/results.jsonl" --build "$build" \
  --source "$work/src" --max-reruns 1 --cache-dir "$work/cache" > "$work/out.txt" 2>&1 &
pid=$!
# wait_for REGEX: until out.txt has a matching line. Only watch's exit ends the
# wait early; no time limit of its own (a loaded machine is slow, not wrong):
# CTest's TIMEOUT is the failsafe for a watch that hangs.
wait_for() {
  until grep -q "$1" "$work/out.txt"; do
    kill -0 $pid 2>/dev/null || grep -q "$1" "$work/out.txt" ||
      { echo "watch ended without a line matching /$1/"; cat "$work/out.txt"; exit 1; }
    sleep 0.1
  done
}
# Wait for the first table and the watch banner.
wait_for '^watching watch_plugin'
grep -q 'block=64' "$work/out.txt" || { echo "first table lacks block=64"; cat "$work/out.txt"; kill $pid; exit 1; }
# A broken edit first: the build fails, the old version keeps serving.
sleep 1.1  # a new mtime second for file systems with coarse stamps
echo 'this is not C++' >> "$work/src/watch_plugin.cpp"
wait_for '^build of watch_plugin failed'
# Now the one-constant change.
sleep 1.1
sed -e 's/#define WATCH_BLOCK 64/#define WATCH_BLOCK 128/' "$src" > "$work/src/watch_plugin.cpp"
wait $pid
status=$?
cat "$work/out.txt"
[ $status -eq 0 ] || { echo "watch exited with $status"; exit 1; }
grep -q '^reloaded watch_plugin (generation 2)' "$work/out.txt" || { echo "no reload"; exit 1; }
grep -q 'block=128' "$work/out.txt" || { echo "the new table lacks block=128"; exit 1; }
grep -q 'still serving generation 1' "$work/out.txt" || { echo "no 'still serving'"; exit 1; }
# The rerun timed both builds in the same rounds (A/B) and judged them.
grep -q '^pointwise_add_mul N=64,K=256 mine: new build .* than old, p=.*; block=128 instead of block=64$' "$work/out.txt" ||
  { echo "no A/B verdict of the new build against the old"; exit 1; }
# One verdict everywhere (issue 33): the table's change column prints the A/B
# line's own words and numbers ("1.23x slower [1.04, 1.27]* vs old build").
verdict=$(sed -n 's/^pointwise_add_mul N=64,K=256 mine: new build \(.*\) than old, p=.*/\1/p' "$work/out.txt")
echo "A/B verdict: $verdict"
grep -F -q "$verdict vs old build, was block=64" "$work/out.txt" ||
  { echo "the change column does not read the A/B verdict '$verdict'"; exit 1; }
if grep -E -q '[+-][0-9]+\.[0-9]%' "$work/out.txt"; then
  echo "a percent change beside the verdict"; exit 1
fi
# The same pair of builds through `run --ab`, `report` and `compare`: the
# A/B line, the table (new against old: --baseline mine@old) and compare of
# the run's two halves (one interleaved group, so paired) print one verdict.
# Without a GPU the table's own verdict is the ratio of predictions; the CPU
# column beside it is the measured one, and it is the A/B line's.
cp "$src" "$work/src/old_plugin.cpp"  # the old build: the constant as it was, block 64
sh -c "$cxx -std=c++17 -shared -fPIC -O0 -fvisibility=hidden -I$inc $work/src/old_plugin.cpp -o $work/old_plugin.so"
"$schedlab" run "$work/sweep.yaml" -o "$work/ab.jsonl" --ab "$work/old_plugin.so" > "$work/ab.txt" 2>&1 ||
  { cat "$work/ab.txt"; echo "run --ab failed"; exit 1; }
cat "$work/ab.txt"
ab=$(sed -n 's/^pointwise_add_mul N=64,K=256 mine: new build \(.*\) than old, p=.*/\1/p' "$work/ab.txt")
[ -n "$ab" ] || { echo "no A/B line in run --ab"; exit 1; }
NO_COLOR=1 "$schedlab" report "$work/ab.jsonl" --baseline mine@old > "$work/ab_table.txt"
cat "$work/ab_table.txt"
grep -E -q "  mine +block=128 .*  $(printf '%s' "$ab" | sed 's/[][*.]/\\&/g')$" "$work/ab_table.txt" ||
  { echo "the table's verdict for mine is not the A/B line's '$ab'"; exit 1; }
grep '"scheduler":"mine@old"' "$work/ab.jsonl" | sed 's/"scheduler":"mine@old"/"scheduler":"mine"/' > "$work/ab_old.jsonl"
grep '"scheduler":"mine"' "$work/ab.jsonl" > "$work/ab_new.jsonl"
"$schedlab" compare "$work/ab_old.jsonl" "$work/ab_new.jsonl" > "$work/ab_compare.txt" || [ $? -eq 1 ]
cat "$work/ab_compare.txt"
grep -F -q "  $ab  " "$work/ab_compare.txt" ||
  { echo "compare's new/base for mine is not the A/B line's '$ab'"; exit 1; }
echo "one verdict in watch, run --ab, report and compare: $ab"
echo "watch e2e: ok"
