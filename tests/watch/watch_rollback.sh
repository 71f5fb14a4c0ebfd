#!/bin/sh
# Rollback in the manner of cr.h: `schedlab watch` serves a good build of
# rollback_plugin, then is handed three bad builds one after another (a
# segfault, a hang, a wrong result). Each fails a point the good build passed,
# so each is rolled back to generation 1 (version 1.0) with one line saying
# so, the loop goes on (watch isolates by default), and the points are re-run
# with the good build: the results file's last record of the scheduler is
# the good build's, ok.
# usage: watch_rollback.sh SCHEDLAB PLUGIN_DIR WORKDIR
set -eu
schedlab=$1 plugins=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cp "$plugins/rollback_good.so" "$work/rollback_plugin.so"
# atol: far above the block reduction's rounding error over a row of 16384
# and far below the serial sum's (the wrong build).
cat > "$work/sweep.yaml" <<YAML
sweep: watch_rollback
fusions:
  - fusion: row_sum
    sizes: {N: [2], K: [16384]}
schedulers:
  - name: mine
    plugin: $work/rollback_plugin.so
validation: {rtol: 0, atol: 1e-4}
measure: {repetitions: 2, warmup: 0}
backend: cpu
YAML
# Warm the kernel cache with the kernels of the good and the wrong builds
# (default time limit): under --timeout 20 below, a cold compile on a loaded
# machine could otherwise turn the good build's point, or the wrong build's
# wrong_result, into a timeout (as isolate_cli_run_warm_cache does).
for warm in good wrong; do
  cp "$plugins/rollback_$warm.so" "$work/warm.so"
  sed "s|$work/rollback_plugin.so|$work/warm.so|" "$work/sweep.yaml" > "$work/warm.yaml"
  "$schedlab" run "$work/warm.yaml" -o "$work/warm.jsonl" --cache-dir "$work/cache" \
    > "$work/warm_$warm.txt" 2>&1 || true
  grep -q "mine" "$work/warm_$warm.txt" || { cat "$work/warm_$warm.txt"; exit 1; }
done
: > "$work/out.txt"
"$schedlab" watch "$work/sweep.yaml" -o "$work/results.jsonl" --max-reruns 3 --timeout 20 \
  --cache-dir "$work/cache" > "$work/out.txt" 2>&1 &
pid=$!
. "$(dirname "$0")/watch_lib.sh"  # fail, wait_for
wait_for '^watching rollback_plugin'
grep -Eq '^row_sum +N=2,K=16384 +mine ' "$work/out.txt" || fail "the first table lacks the good build's row"
generation=2
for bad in segv:crashed hang:timeout wrong:wrong_result; do
  build=${bad%%:*} why=${bad#*:}
  sleep 1.1  # a new mtime second for file systems with coarse stamps
  cp "$plugins/rollback_$build.so" "$work/next.so" && mv "$work/next.so" "$work/rollback_plugin.so"
  wait_for "^rolled back rollback_plugin to generation 1 \(version 1\.0\): generation $generation $why.* on row_sum N=2,K=16384 \(mine\), where generation 1 passed. generation 1 serves until rollback_plugin\.so changes again$"
  wait_for "^[0-9]+ points re-run with generation 1$"
  generation=$((generation + 1))
done
status=0
wait $pid || status=$?
cat "$work/out.txt"
[ $status -eq 0 ] || { echo "watch exited with $status"; exit 1; }
# The last record of `mine` (not the A/B twin mine@old) is the good build's.
last=$(grep '"scheduler":"mine"' "$work/results.jsonl" | tail -n 1)
echo "$last" | grep -q '"plugin":{"name":"rollback_plugin","version":"1.0",' || { echo "last record not from 1.0: $last"; exit 1; }
echo "$last" | grep -q '"status":"ok"' || { echo "last record not ok: $last"; exit 1; }
echo "watch rollback: ok"
