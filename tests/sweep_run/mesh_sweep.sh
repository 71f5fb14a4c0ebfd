#!/bin/sh
# configs/sweeps/sharded.yaml end to end on the CPU backend (docs/sweeps.md,
# "Meshes"): sum_sharded and softmax_seqsharded on meshes 1, 2 and 4; the
# points on 2 and 4 ranks run as `schedlab exec --mesh N` under mpirun. The
# table has one row per (fusion, mesh) with the mesh and the predicted
# communication (0 on one rank, more than 0 on more); every record is ok and
# carries mesh and comm_us.
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
    assert len(r["times_us"]) == (3 if r["mesh"] == 1 else 1), r
    assert r["max_abs_error"] is not None, r
PY
echo "mesh_sweep: ok"
