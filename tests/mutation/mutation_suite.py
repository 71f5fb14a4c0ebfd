#!/usr/bin/python3
"""The mutation suite (issue 33, docs/mutation.md): validation must reject wrong outputs.

Usage: mutation_suite.py --cli SCHEDLAB --configs CONFIG_DIR --cache-dir DIR
                         [--shard I/N] [--list] [--mutations zero,scale:0.99,one:0.01]

The cases: every standard fusion (CONFIG_DIR/fusions/*.yaml) at every size
that a sweep of CONFIG_DIR/sweeps binds for it (a fusion no sweep names, at
its file's default sizes), and the long rows, K = 65536 and 262144 at N = 2,
of the normalizations and the row reductions. Each case is one
`schedlab exec F --size S --backend cpu --mutate M1,M2,...`: the kernel runs
once, its own outputs are validated (each must print "output i (...): ok":
the unmutated run passes), then every mutation is applied to a copy and
validated again; each must print "wrong_result under mutation M" (killed),
and exec exits 1. --shard I/N runs the I-th of N shards, balanced by the
number of elements, so that ctest -j2 spreads them.

Exit 0 when every mutant of every case was killed and every unmutated run
validated; 1 otherwise, listing the survivors and the failures.
"""
import argparse
import glob
import itertools
import os
import re
import subprocess
import sys
import time

import yaml

DEFAULT_MUTATIONS = "zero,scale:0.99,one:0.01"
# Fusions whose rows are reduced along K: the long rows reach their
# multi-pass and grid-wide paths.
LONG_ROW_FUSIONS = ["softmax", "softmax_bf16", "log_softmax", "layernorm", "layernorm_bf16",
                    "rmsnorm", "rmsnorm_bf16", "var_mean", "row_sum", "row_max", "masked_row_sum",
                    "sum_all"]
LONG_ROWS = [{"N": 2, "K": 65536}, {"N": 2, "K": 262144}]


def sweep_sizes(entry):
    """The size bindings of one `fusions:` entry of a sweep file."""
    sizes = entry.get("sizes", {})
    if isinstance(sizes, list):  # a list of bindings
        return [dict(s) for s in sizes]
    names = list(sizes)
    values = [v if isinstance(v, list) else [v] for v in sizes.values()]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def cases(configs):
    """(fusion, sizes) pairs, each once, in a stable order."""
    fusions = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(configs, "fusions", "*.yaml")))
    bound = {f: [] for f in fusions}
    for path in sorted(glob.glob(os.path.join(configs, "sweeps", "*.yaml"))):
        with open(path) as f:
            spec = yaml.safe_load(f)
        for entry in spec.get("fusions", []):
            name = entry["fusion"]
            if name not in bound:
                continue  # a fusion outside configs/fusions
            for s in sweep_sizes(entry):
                if s not in bound[name]:
                    bound[name].append(s)
    for name in LONG_ROW_FUSIONS:
        if name in bound:
            bound[name] += [s for s in LONG_ROWS if s not in bound[name]]
    out = []
    for name in fusions:
        for s in bound[name] or [None]:  # None: the file's default sizes
            out.append((name, s))
    return out


def elements(case):
    sizes = case[1] or {}
    n = 1
    for v in sizes.values():
        n *= int(v)
    return n


def shard(all_cases, index, count):
    """Greedy longest-first: each case to the shard with the fewest elements so far."""
    load = [0] * count
    mine = []
    for case in sorted(all_cases, key=lambda c: (-elements(c), c[0], str(c[1]))):
        k = load.index(min(load))
        load[k] += elements(case) + 10000  # every exec has a fixed cost too
        if k == index:
            mine.append(case)
    return mine


def size_arg(sizes):
    return ",".join(f"{k}={v}" for k, v in sizes.items())


def run_case(cli, cache_dir, name, sizes, mutations):
    cmd = [cli, "exec", name, "--backend", "cpu", "--cache-dir", cache_dir, "--timeout", "0",
           "--mutate", mutations]
    if sizes:
        cmd[3:3] = ["--size", size_arg(sizes)]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return cmd, p, time.monotonic() - start


def judge(p, mutations):
    """(problems, killed, survived): what is wrong with one case's output."""
    out = p.stdout + p.stderr
    problems, killed, survived = [], [], []
    outputs = re.findall(r"^  output (\d+) \(.*?\): (\S+)", p.stdout, re.M)
    if not outputs:
        problems.append("no output lines")
    for i, verdict in outputs:
        if verdict != "ok":
            problems.append(f"the unmutated output {i} is {verdict}")
    if "not applied" in out:
        problems.append("the unmutated outputs failed validation")
    for m in mutations.split(","):
        if re.search(rf"^wrong_result under mutation {re.escape(m)}: ", p.stdout, re.M):
            killed.append(m)
        elif re.search(rf"^mutation {re.escape(m)} survived validation", p.stdout, re.M):
            survived.append(m)
        else:
            problems.append(f"no verdict for mutation {m}")
    if p.returncode != 1:
        problems.append(f"exit {p.returncode}, expected 1")
    return problems, killed, survived


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--mutations", default=DEFAULT_MUTATIONS)
    ap.add_argument("--list", action="store_true", help="print this shard's cases and exit")
    a = ap.parse_args()
    index, count = (int(x) for x in a.shard.split("/"))
    mine = shard(cases(a.configs), index, count)
    if a.list:
        for name, sizes in mine:
            print(name, size_arg(sizes) if sizes else "(default sizes)")
        return 0

    total_start = time.monotonic()
    n_killed, survivors, failures = 0, [], []
    for name, sizes in mine:
        cmd, p, seconds = run_case(a.cli, a.cache_dir, name, sizes, a.mutations)
        problems, killed, survived = judge(p, a.mutations)
        n_killed += len(killed)
        label = f"{name} {size_arg(sizes) if sizes else '(default sizes)'}"
        for m in survived:
            survivors.append(f"{label}: {m}")
        status = "ok" if not problems and not survived else "FAIL"
        print(f"{status:4} {label:40} {seconds:7.1f} s  killed {','.join(killed) or '-'}"
              f"{'  survived ' + ','.join(survived) if survived else ''}", flush=True)
        if problems:
            failures.append(f"{label}: {'; '.join(problems)}\n  command: {' '.join(cmd)}\n"
                            + "".join("  | " + l + "\n" for l in (p.stdout + p.stderr).splitlines()[-12:]))
    n_mutants = len(mine) * len(a.mutations.split(","))
    print(f"shard {index}/{count}: {len(mine)} cases, {n_mutants} mutants: {n_killed} killed, "
          f"{len(survivors)} survived; {len(failures)} cases failed otherwise; "
          f"{time.monotonic() - total_start:.0f} s")
    for s in survivors:
        print(f"survived: {s}")
    for f in failures:
        print(f"failed: {f}")
    return 0 if not survivors and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
