#!/bin/bash
# A real Slurm on this machine (issue 19): munged, slurmctld and slurmd from
# Debian's slurm-wlm and munge (scripts/install-deps), started here as root
# with a single-node slurm.conf in a temporary folder (its own ports, state
# and spool directories, so it meets no other Slurm), no systemd. Then:
#   1. the quickstart sweep on this machine, whole (`schedlab run`);
#   2. the same sweep as a 4-task array (`schedlab slurm --array 4 --submit
#      --wait`): the merged records hold exactly the single run's points;
#   3. while that array runs, one task that has written part of its shard is
#      requeued (killed and put back in the queue, as preemption or a node
#      failure would) and must resume: the records it wrote before stay as
#      they were, none is duplicated, and its second start says "resumed";
#   4. task 3, cancelled before it starts, is reported failed by its index;
#      the same script submitted again (every part resumes) completes it,
#      and the merged parts hold the single run's points;
#   5. given SHARDED_YAML, a sweep over meshes (configs/sweeps/sharded.yaml on
#      meshes 1 and 2, this node's CPUs): one array task holds 2 Slurm tasks
#      and its mesh-2 points start their ranks with srun inside it; every
#      record is ok.
# The sweep is configs/sweeps/quickstart.yaml on the CPU backend with fewer,
# longer samples (min_time), so that a task is still running when one of its
# groups has been written (the requeue lands mid-shard).
# If the daemons cannot start here, it says why and exits 77 (CTest skip).
# usage: slurm_test.sh SCHEDLAB PYTHON WORKDIR QUICKSTART_YAML [SHARDED_YAML]
set -euo pipefail
schedlab=$1 python=$2 work=$3 quickstart=$4 sharded=${5:-}
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "starting munged, slurmctld and slurmd here needs root"
for b in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd sbatch squeue scontrol sinfo; do
  command -v "$b" > /dev/null || skip "$b is missing (scripts/install-deps installs slurm-wlm and munge)"
done

rm -rf "$work" && mkdir -p "$work"
# The daemons' folder: short (a socket path has at most 107 bytes), root's only.
d=$(mktemp -d /tmp/schedlab-slurm.XXXXXX)
chmod 700 "$d"
mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log"
chmod 700 "$d/munge"

# The processes with a file open under $d: this test's daemons and job steps
# (a slurmstepd whose slurmd is gone lingers), never another Slurm's.
ours() {
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" != $$ ] && ls -l "$p/fd" 2> /dev/null | grep -q -- "$d/" && echo "${p#/proc/}"
  done
  return 0
}
stop_daemons() {
  # Jobs first, so that no job step outlives slurmd; then the daemons by
  # their pid files; then whatever of ours is left.
  if [ -s "$d/slurmctld.pid" ]; then
    scancel --user=root 2> /dev/null || true
    for _ in $(seq 100); do
      [ -z "$(squeue -h 2> /dev/null)" ] && break
      sleep 0.1
    done
  fi
  for f in "$d/slurmd.pid" "$d/slurmctld.pid" "$d/munge/munged.pid"; do
    [ -s "$f" ] && kill "$(cat "$f")" 2> /dev/null || true
  done
  for f in "$d/slurmd.pid" "$d/slurmctld.pid" "$d/munge/munged.pid"; do
    for _ in $(seq 50); do
      [ -s "$f" ] && kill -0 "$(cat "$f")" 2> /dev/null || break
      sleep 0.1
    done
    [ -s "$f" ] && kill -9 "$(cat "$f")" 2> /dev/null || true
  done
  for p in $(ours); do kill -9 "$p" 2> /dev/null || true; done
  rm -rf "$d"
}
trap stop_daemons EXIT

daemon_logs() { tail -n 20 "$d"/log/*.log "$d"/munge/munged.log 2> /dev/null || true; }

dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$d/munge/munge.key"
/usr/sbin/munged --force --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
  --pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" --seed-file="$d/munge/seed" \
  || { daemon_logs; skip "munged does not start here"; }

read -r ctld_port node_port < <("$python" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname)
export SLURM_CONF="$d/slurm.conf"
cat > "$SLURM_CONF" << CONF
ClusterName=schedlabtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=schedlab Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
/usr/sbin/slurmctld -c -f "$SLURM_CONF" || { daemon_logs; skip "slurmctld does not start here"; }
/usr/sbin/slurmd -f "$SLURM_CONF" || { daemon_logs; skip "slurmd does not start here"; }
# Wait for the node to register (bounded: 30 s).
for i in $(seq 300); do
  [ "$(sinfo -h -o %T 2> /dev/null)" = idle ] && break
  [ "$i" -lt 300 ] || { daemon_logs; skip "the node never became idle: $(sinfo 2>&1 || true)"; }
  sleep 0.1
done
echo "slurm: $(sinfo -h -o '%P %D %T %N') (controller port $ctld_port)"

# The quickstart sweep, on the CPU backend, with longer samples.
sed -e 's/^measure: .*/measure: {repetitions: 3, warmup: 1, min_time: 0.5}/' \
    -e 's/^backend: .*/backend: cpu/' "$quickstart" > "$work/quickstart.yaml"
grep -q 'min_time: 0.5' "$work/quickstart.yaml"
common=(--cache-dir "$work/cache" --progress-interval 1000)

start=$(date +%s)
"$schedlab" run "$work/quickstart.yaml" -o "$work/single.jsonl" "${common[@]}" > "$work/single.txt" 2>&1 \
  || { cat "$work/single.txt"; exit 1; }
echo "single run: $(wc -l < "$work/single.jsonl") records in $(($(date +%s) - start)) s"

start=$(date +%s)
parts="$work/slurm.parts"
timeout 900 "$schedlab" slurm "$work/quickstart.yaml" --array 4 --submit --wait -o "$work/slurm.jsonl" \
  "${common[@]}" > "$work/slurm.txt" 2>&1 &
waiter=$!

# Requeue the first task seen with part of its shard written (more than
# none, fewer than the points its log says it has), while it runs.
job="" victim=""
for i in $(seq 3000); do
  if [ -z "$job" ]; then
    job=$(sed -n 's/^submitted job \([0-9]*\) .*/\1/p' "$work/slurm.txt")
    # Task 3 waits for a CPU behind tasks 0 and 1: cancelled before it
    # starts, it is a failed task that --wait must report by its index.
    [ -z "$job" ] || scancel "${job}_3"
  fi
  if [ -n "$job" ]; then
    for t in $(squeue -h -r -j "$job" -t RUNNING -o %K 2> /dev/null || true); do
      # (Either file may not exist yet.)
      points=$(sed -n 's/^shard [0-9]*\/4: \([0-9]*\) of .*/\1/p' "$parts/slurm-${job}_$t.out" 2> /dev/null || true)
      points=${points%%$'\n'*}
      written=$( (cat "$parts/shard-$t.jsonl" 2> /dev/null || true) | wc -l)
      if [ -n "$points" ] && [ "$written" -gt 0 ] && [ "$written" -lt "$points" ]; then victim=$t; break; fi
    done
  fi
  [ -z "$victim" ] || break
  kill -0 "$waiter" 2> /dev/null || { cat "$work/slurm.txt" "$parts"/slurm-*.out; echo "the array ended before a task could be requeued mid-shard"; exit 1; }
  sleep 0.05
done
[ -n "$victim" ] || { cat "$work/slurm.txt"; echo "no task was seen with part of its shard written"; exit 1; }
scontrol requeue "${job}_${victim}"
cp "$parts/shard-$victim.jsonl" "$work/before-requeue.jsonl"
# Slurm holds a requeued job for two minutes (Reason=BeginTime, set once
# the killed instance has ended); let it start now. Bounded: 60 s.
updated=""
for i in $(seq 600); do
  st=$(squeue -h -j "${job}_${victim}" -o "%T %r" 2> /dev/null || true)
  if [ "$st" = "PENDING BeginTime" ]; then
    scontrol update JobId="${job}_${victim}" StartTime=now 2> /dev/null && updated=1
  elif [ -n "$updated" ] || { [ "$i" -gt 30 ] && [ "${st%% *}" = RUNNING ]; }; then
    break
  fi
  sleep 0.1
done
echo "requeued task $victim of job $job with $(wc -l < "$work/before-requeue.jsonl") records written"

status=0
wait "$waiter" || status=$?
cat "$work/slurm.txt"
[ "$status" -eq 1 ] || { daemon_logs; echo "schedlab slurm --submit --wait: exit $status, expected 1 (task 3 cancelled)"; exit 1; }
grep -q "^error: task 3: no record of its end (cancelled before it started" "$work/slurm.txt"
grep -q "^1 of 4 tasks failed; their parts resume where they stopped: resubmit with sbatch $parts/quickstart.sbatch" "$work/slurm.txt"
# As the message says: the same script again (every part resumes), then merge.
sbatch --wait "$parts/quickstart.sbatch" > /dev/null
"$schedlab" merge "$parts"/shard-*.jsonl -o "$work/slurm.jsonl"
echo "slurm run: $(($(date +%s) - start)) s"
log="$parts/slurm-${job}_${victim}.out"
cat "$log"

"$python" - "$work/single.jsonl" "$work/slurm.jsonl" "$parts/shard-$victim.jsonl" \
  "$work/before-requeue.jsonl" "$log" << 'PY'
import json, sys
single, merged, part, before, log = sys.argv[1:]
def points(path):
    recs = [json.loads(l) for l in open(path) if l.strip()]
    return recs, [(r["fusion"], r["size_label"], r["scheduler"], json.dumps(r["config"], sort_keys=True)) for r in recs]
_, want = points(single)
recs, got = points(merged)
assert len(set(got)) == len(got), f"duplicated points in the merged file: {len(got) - len(set(got))}"
assert sorted(got) == sorted(want), f"merged points differ from the single run's:\n{sorted(set(want) ^ set(got))}"
assert all(r["status"] == "ok" for r in recs), [r["status"] for r in recs]
part_recs, part_points = points(part)
assert len(set(r["key"] for r in part_recs)) == len(part_recs), "the requeued task duplicated a record"
text_before = open(before).read()
assert open(part).read().startswith(text_before[: text_before.rfind("\n") + 1]), \
    "records the requeued task wrote before the requeue changed"
n_before = text_before.count("\n")
assert 0 < n_before < len(part_recs), \
    f"the requeue did not land mid-shard ({n_before} of {len(part_recs)} records written); make the points longer"
import re
l = open(log).read()
assert "restart 1" in l, "the task's log shows no second start"
resumed = [int(n) for n in re.findall(r"^[0-9]+ points: ([0-9]+) resumed", l, re.M)]
# The first start was killed before its summary; the second resumed at least
# what was written before the requeue (a record may land while it dies).
assert len(resumed) == 1 and resumed[0] >= n_before, f"the second start did not resume the {n_before} records:\n{l}"
print(f"slurm: {len(got)} points merged from 4 tasks = the single run; task resumed {n_before} of {len(part_recs)} records after the requeue")
PY

[ -n "$sharded" ] || exit 0
# 5. A sweep over meshes: each task asks for as many Slurm tasks as the
# largest mesh, and a mesh point's exec starts its ranks with srun there.
sed -e 's/mesh: \[1, 2, 4\]/mesh: [1, 2]/' -e 's/^backend: .*/backend: cpu/' \
  "$sharded" > "$work/sharded.yaml"
[ "$(grep -c 'mesh: \[1, 2\]' "$work/sharded.yaml")" -ge 1 ]
start=$(date +%s)
timeout 600 "$schedlab" slurm "$work/sharded.yaml" --array 1 --submit --wait -o "$work/sharded.jsonl" \
  "${common[@]}" > "$work/sharded.txt" 2>&1 ||
  { cat "$work/sharded.txt" "$work/sharded.parts"/slurm-*.out; daemon_logs; exit 1; }
cat "$work/sharded.txt"
grep -q '^#SBATCH --ntasks=2$' "$work/sharded.parts/sharded.sbatch"
"$python" - "$work/sharded.jsonl" << 'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
got = sorted((r["fusion"], r.get("mesh"), r["status"]) for r in recs)
want = sorted((f, m, "ok") for f in ("sum_sharded", "softmax_seqsharded") for m in (1, 2))
assert got == want, f"{got}\n{[r.get('error') for r in recs]}"
print(f"slurm: {len(recs)} mesh points ok, the mesh-2 ones under srun")
PY
echo "slurm mesh run: $(($(date +%s) - start)) s"
