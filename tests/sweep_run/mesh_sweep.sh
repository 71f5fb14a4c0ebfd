#!/bin/sh
# configs/sweeps/sharded.yaml end to end on the CPU backend (docs/sweeps.md,
# "Meshes"): sum_sharded and softmax_seqsharded on meshes 1, 2 and 4; the
# points on 2 and 4 ranks run as `schedlab exec --mesh N` under mpirun. The
# table has one row per (fusion, mesh) with the mesh and the predicted
# communication (0 on one rank, more than 0 on more); every record is ok and
# carries mesh and comm_us, 3 times (measure:), config, bytes_moved,
# tolerance and a prediction above its comm_us.
# usage: mesh_sweep.sh SCHEDLAB PYTHON SWEEP OUTDIR
set -u
cli=$1 py=$2 sweep=$3 out=$4
rm -rf "$out" && mkdir -p "$out"
"$cli" run "$sweep" --backend cpu --cache-dir "$out/cache" -o "$out/sharded.jsonl" \
  > "$out/run.log" 2>&1
rc=$?
fail() { echo "mesh_sweep: $*"; cat "$out/run.log"; exit 1; }
[ $rc -eq 0 ] || fail "run exited with $rc, expected 0"
grep -Eq '^fusion +size +mesh +comm us +scheduler' "$out/run.log" || fail "no mesh and comm us columns"
for f in sum_sharded softmax_seqsharded; do
  grep -Eq "^$f +N=[0-9]+,K=[0-9]+ +1 +0\.00 +heuristic" "$out/run.log" || fail "$f: no mesh-1 row with comm 0"
  for m in 2 4; do
    grep -Eq "^$f +N=[0-9]+,K=[0-9]+ +$m +[0-9]*[1-9][0-9]*\.[0-9]+ +heuristic" "$out/run.log" ||
      fail "$f: no mesh-$m row with a predicted communication"
  done
done
rows=$(grep -Ec '^(sum_sharded|softmax_seqsharded) +N=' "$out/run.log")
[ "$rows" -eq 6 ] || fail "expected 6 rows (2 fusions x 3 meshes), found $rows"
"$py" - "$out/sharded.jsonl" <<'PY' || fail "records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
got = sorted((r["fusion"], r["mesh"], r["status"]) for r in recs)
want = sorted((f, m, "ok") for f in ("sum_sharded", "softmax_seqsharded") for m in (1, 2, 4))
assert got == want, got
for r in recs:
    assert (r["comm_us"] == 0) == (r["mesh"] == 1), r
    # Every point timed with the sweep's measure: (3 repetitions), a mesh
    # point's each the slowest rank's; and recorded as a one-device point is:
    # its plugins' parameters, bytes, tolerance and the model's prediction
    # (a mesh point's: its steps' kernels plus the communications).
    assert len(r["times_us"]) == 3, r
    assert r["max_abs_error"] is not None, r
    assert r["config"], r
    assert r["bytes_moved"] > 0, r
    assert r["tolerance"]["mode"] == "error_bound" and r["tolerance"]["factor"] > 0, r
    assert r["prediction"]["device"] == "h200", r
    assert r["prediction"]["predicted_us"] > r["comm_us"], r
    if r["mesh"] > 1:
        assert r["comm_measured_us"] >= 0, r
# softmax_seqsharded on 2 and 4 ranks is three kernels: each key names its plan step.
for r in recs:
    if r["fusion"] == "softmax_seqsharded" and r["mesh"] > 1:
        assert {k.split(".")[0] for k in r["config"]} == {"s0", "s2", "s4"}, r["config"]
PY
grep -q '(defaults)' "$out/run.log" && fail "a row without its config"
echo "mesh_sweep: ok"
