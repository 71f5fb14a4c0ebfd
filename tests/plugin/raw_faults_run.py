"""`schedlab run` on a sweep with a healthy scheduler and a raw_faults plugin.

usage: raw_faults_run.py SCHEDLAB WORKDIR GOOD_DIR RAW_DIR VARIANT MODE STATUS REGEX

MODE is `isolate` (--isolate) or `inprocess` (--no-isolate). STATUS is the faulty point's
record status: plugin_error or crashed; or `died` when the plugin ends the
process without isolation (no record for it). Checks: exit code 1 (never 0,
never 3), REGEX (Python re, multiline) in the output or the faulty record's
error, the faulty record's status, and that the healthy scheduler's records
are complete (ok and timed); when the process died, that every record
written before is whole and complete.
"""
import json
import os
import re
import shutil
import subprocess
import sys

schedlab, work, good_dir, raw_dir, variant, mode, want_status, regex = sys.argv[1:9]
work = os.path.join(work, f"{variant}-{mode}")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
sweep = os.path.join(work, "sweep.yaml")
with open(sweep, "w") as f:
    f.write(f"""sweep: raw_{variant}
fusions:
  - fusion: pointwise_add_mul
    sizes: {{N: [16], K: [64]}}
schedulers:
  - name: healthy
    plugin: test_pointwise
  - name: faulty
    plugin: raw_{variant}
measure: {{repetitions: 2, warmup: 0}}
backend: cpu
""")
results = os.path.join(work, "results.jsonl")
cmd = [schedlab, "run", sweep, "-o", results, "--plugin-dir", good_dir, "--plugin-dir", raw_dir,
       "--cache-dir", os.path.join(work, "cache"), "--jobs", "1"]
cmd += ["--isolate", "--timeout", "60"] if mode == "isolate" else ["--no-isolate"]
env = dict(os.environ, SCHEDLAB_PLUGIN_PATH="")
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
problems = []
if p.returncode != 1:
    problems.append(f"exit status {p.returncode}, expected 1")
records = []
if os.path.exists(results):
    with open(results) as f:
        text = f.read()
    if text and not text.endswith("\n"):
        problems.append("the results file ends in a partial line")
    for n, line in enumerate(text.splitlines(), 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            problems.append(f"results line {n} is not JSON: {e}")
healthy = [r for r in records if r["scheduler"] == "healthy"]
faulty = [r for r in records if r["scheduler"] == "faulty"]
for r in healthy:
    if r["status"] != "ok" or not r["times_us"]:
        problems.append(f"healthy record incomplete: status {r['status']}, {len(r['times_us'])} times")
if want_status == "died":
    if faulty:
        problems.append(f"a record for the faulty point of a process that died: {faulty}")
else:
    if len(healthy) != 1:
        problems.append(f"{len(healthy)} healthy records, expected 1")
    if len(faulty) != 1:
        problems.append(f"{len(faulty)} faulty records, expected 1")
    elif faulty[0]["status"] != want_status:
        problems.append(f"faulty record status {faulty[0]['status']}, expected {want_status}")
haystack = p.stdout + "\n" + "\n".join(r["error"] for r in faulty)
if not re.search(regex, haystack, re.M):
    problems.append(f"no match for /{regex}/ in the output or the faulty record's error")
if problems:
    print("command:", " ".join(cmd))
    print("--- output ---")
    print(p.stdout)
    print("--- records ---")
    for r in records:
        print(r["scheduler"], r["status"], r["error"][:300])
    print("--- problems ---")
    print("\n".join(problems))
    sys.exit(1)
print(f"{variant} {mode}: ok")
