#!/usr/bin/env python3
"""The fault matrix under `run --isolate` (issue 16).

Usage: fault_matrix.py SCHEDLAB FAULTY_DIR GOOD_PLUGIN_DIR WORK_DIR

Writes a sweep with a good plugin (isolate_pointwise) and every
faulty_<kind>_<call>.so of FAULTY_DIR (tests/isolate/plugins/faulty.cpp) as
schedulers, runs it with --isolate, and checks that:
  * the run ends (exit 1: some points failed), and says why for each;
  * the good scheduler's records are complete: every point validated and
    timed;
  * every faulty scheduler has one record per point, with the status its
    fault calls for (a thread left running is no fault: ok).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

cli, faulty_dir, good_dir, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
cache = os.path.join(work, "cache")  # shared: the kernel cache takes concurrent writers
# The sweep and its records in a folder of this run's own: two test runs of
# one build tree at once (two ctest invocations) must not remove or append
# to each other's records.
work = tempfile.mkdtemp(prefix="run-", dir=work)
faulty = sorted(f[:-3] for f in os.listdir(faulty_dir) if f.startswith("faulty_") and f.endswith(".so"))
assert len(faulty) == 33, f"expected 33 faulty plugins in {faulty_dir}, found {len(faulty)}"

sizes = [16, 1000]
lines = ["sweep: fault_matrix",
         "fusions:",
         "  - fusion: pointwise_add_mul",
         f"    sizes: {{N: {sizes}, K: [64]}}",
         "schedulers:",
         "  - name: good",
         "    plugin: isolate_pointwise"]
for name in faulty:
    lines += [f"  - name: {name}", f"    plugin: {faulty_dir}/{name}.so"]
lines += ["baseline: good", "measure: {repetitions: 3, warmup: 0}", "backend: cpu", ""]
sweep = os.path.join(work, "fault_matrix.yaml")
with open(sweep, "w") as f:
    f.write("\n".join(lines))
out = os.path.join(work, "records.jsonl")

cmd = [cli, "run", sweep, "--isolate", "--timeout", "3", "-j", "2", "--plugin-dir", good_dir,
       "--cache-dir", cache, "-o", out]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
assert p.returncode == 1, f"expected exit 1 (failed points), got {p.returncode}"

records = [json.loads(l) for l in open(out) if l.strip()]
by_sched = {}
for r in records:
    by_sched.setdefault(r["scheduler"], []).append(r)

failures = []
good = by_sched.get("good", [])
if len(good) != len(sizes) or any(r["status"] != "ok" or not r.get("times_us") for r in good):
    failures.append(f"good: expected {len(sizes)} ok, timed records, found "
                    f"{[(r['status'], r.get('error', '')) for r in good]}")

# What each fault may be recorded as. A plugin's exception through the C ABI
# and a malformed entry are the plugin's errors; dying is crashed; hanging is
# timeout; leaving a thread running is harmless.
expect = {
    "segv": {"crashed"}, "abort": {"crashed"}, "hang": {"timeout"},
    "exit0": {"crashed"}, "quickexit": {"crashed"},
    "throw": {"plugin_error"}, "throw42": {"plugin_error"},
    "params": {"crashed", "plugin_error"}, "thread": {"ok"},
}
for name in faulty:
    kind, call = name.split("_")[1], name.split("_")[2]
    got = by_sched.get(name, [])
    statuses = [r["status"] for r in got]
    ok = len(got) == len(sizes) and all(s in expect[kind] for s in statuses)
    print(f"{name:28} {','.join(statuses):40} {'ok' if ok else 'UNEXPECTED'}")
    if not ok:
        failures.append(f"{name}: expected {len(sizes)} records of {sorted(expect[kind])}, found "
                        f"{[(r['status'], r.get('error', '')[:200]) for r in got]}")
    for r in got:
        if r["status"] != "ok" and not r.get("error"):
            failures.append(f"{name}: a {r['status']} record without a reason")

# One record per (scheduler, sizes). (Not by key: the faulty plugins are
# byte-identical copies, and a key names the binary, not the scheduler.)
points = [(r["scheduler"], json.dumps(r["sizes"], sort_keys=True)) for r in records]
if len(points) != len(set(points)):
    failures.append("duplicated records")
if failures:
    print("\n".join(["FAILED:"] + failures + [f"(records kept in {work})"]))
    sys.exit(1)
shutil.rmtree(work)
print(f"fault matrix: {len(faulty)} faulty plugins, {len(records)} records, good complete")
