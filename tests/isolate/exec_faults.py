#!/usr/bin/python3
"""`exec --plugin` with every faulty plugin, isolated by default (issue 33, bullet 7).

Usage: exec_faults.py SCHEDLAB FAULTY_DIR WORK_DIR

For each faulty_<kind>_<call>.so of FAULTY_DIR (tests/isolate/plugins/faulty.cpp)
whose kind ends the process or hangs, runs
  schedlab exec pointwise_add_mul --backend cpu --plugin-dir FAULTY_DIR --plugin NAME
without --isolate (the default isolates) and checks that exec exits 1 and its
last line names the plugin and the call:
  error: exec: crashed (SIGSEGV) in plugin 'faulty_segv_schedule' schedule()
  error: exec: timeout after 2 s in plugin 'faulty_hang_can' can_schedule()
A plugin's exception through the C ABI is its own error (exit 1, naming it);
a thread left running is no fault (exit 0).
"""
import os
import re
import subprocess
import sys

cli, faulty_dir, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)

CALLS = {"entry": "schedlab_plugin_entry", "can": "can_schedule", "compute": "compute_params",
         "schedule": "schedule"}
# What each kind of fault must read as: a regex over exec's output and the exit code.
EXPECT = {
    "segv": (r"^error: exec: crashed \(SIGSEGV\) in plugin '{who}' {call}\(\)(;|$)", 1),
    "abort": (r"^error: exec: crashed \(SIGABRT\) in plugin '{who}' {call}\(\)(;|$)", 1),
    "hang": (r"^error: exec: timeout after 2 s in plugin '{who}' {call}\(\)(;|$)", 1),
    # exit() and _exit() inside a call: the host's hooks blame the plugin.
    "exit0": (r"^error: plugin '{who}' called exit\(\) inside its {call} call", 1),
    "quickexit": (r"^error: plugin '{who}' called _exit", 1),
    "throw": (r"^error: plugin '{who}' {call} let a C\+\+ exception escape through the C ABI", 1),
    "thread": (r"^  output 0 \(T[0-9]+ \(out\)\): ok", 0),
}

failures = []
for kind in EXPECT:
    for short, call in CALLS.items():
        name = f"faulty_{kind}_{short}"
        so = os.path.join(faulty_dir, name + ".so")
        if not os.path.exists(so):
            failures.append(f"{name}: {so} is missing")
            continue
        # The entry point runs before the plugin has a name: it is named by its file.
        who = re.escape(so if short == "entry" else name)
        regex, code = EXPECT[kind]
        regex = regex.format(who=who, call=re.escape(call))
        cmd = [cli, "exec", "pointwise_add_mul", "--backend", "cpu", "--size", "N=4,K=8",
               "--plugin-dir", faulty_dir, "--plugin", name, "--timeout", "2",
               "--cache-dir", os.path.join(work, "cache")]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        ok = p.returncode == code and re.search(regex, out, re.M) is not None
        print(f"{name:28} exit {p.returncode}  {'ok' if ok else 'UNEXPECTED'}")
        if not ok:
            failures.append(f"{name}: expected exit {code} and /{regex}/, got exit {p.returncode}:\n"
                            + "".join("  | " + l + "\n" for l in out.splitlines()[-8:]))
if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print(f"exec faults: {len(EXPECT) * len(CALLS)} runs as expected")
