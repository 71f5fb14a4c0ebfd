#!/usr/bin/env python3
"""verdict_agreement.py SCHEDLAB DATA_DIR WORK_DIR: a planted 1.3x slowdown
reads the same through the CLI (issue 33, "one verdict everywhere").

DATA_DIR/planted.jsonl holds a new build `mine` and its old build `mine@old`
timed in the same interleaved rounds, every round's ratio 1.3 within 2 %
(gen_fixtures.py); planted_old.jsonl and planted_new.jsonl hold one build
each under the name `mine`. `schedlab report planted.jsonl --baseline
mine@old` (console, CSV, JSON, HTML) and `schedlab compare planted_old.jsonl
planted_new.jsonl` (text, markdown, JSON) must print one verdict,
"1.30x slower [lo, hi]*", the same text everywhere, and no percent change."""
import json
import os
import re
import subprocess
import sys

VERDICT = re.compile(r"\d+\.\d\dx (?:slower|faster)(?: \[\d+\.\d\d, \d+\.\d\d\])?\*?")
PERCENT = re.compile(r"[+-]\d+(?:\.\d+)?\s?%")


def run(args, expect):
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
    if p.returncode != expect:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}")
    return p.stdout


def main():
    schedlab, data, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    out = {}
    csv, js, html = (os.path.join(work, f"table.{x}") for x in ("csv", "json", "html"))
    out["report"] = run([schedlab, "report", os.path.join(data, "planted.jsonl"), "--baseline",
                         "mine@old", "--csv", csv, "--json", js, "--html", html], 0)
    out["csv"] = open(csv).read()
    table = json.load(open(js))
    out["html"] = open(html).read()
    old, new = os.path.join(data, "planted_old.jsonl"), os.path.join(data, "planted_new.jsonl")
    out["compare"] = run([schedlab, "compare", old, new], 1)  # a regression: exit 1
    out["markdown"] = run([schedlab, "compare", old, new, "--format", "markdown"], 1)
    compare = json.loads(run([schedlab, "compare", old, new, "--format", "json"], 1))

    mine = [c for c in table["sections"][0]["rows"][0]["cells"] if c["scheduler"] == "mine"][0]
    verdict = mine["verdict"]
    errors = []
    if not re.fullmatch(r"1\.30x slower \[\d\.\d\d, \d\.\d\d\]\*", verdict):
        errors.append(f"the table's verdict is {verdict!r}, expected 1.30x slower [lo, hi]*")
    if compare["benchmarks"][0]["text"] != verdict:
        errors.append(f"compare's JSON says {compare['benchmarks'][0]['text']!r}")
    if compare["benchmarks"][0]["verdict"] != "regression":
        errors.append(f"compare's verdict is {compare['benchmarks'][0]['verdict']!r}")
    for name, text in out.items():
        found = set(VERDICT.findall(text))
        # The markdown headline words the geometric mean without an interval.
        found.discard("1.30x slower")
        if found != {verdict}:
            errors.append(f"{name}: verdicts {sorted(found)}, expected only {verdict!r}")
        if PERCENT.search(text):
            errors.append(f"{name}: a percent change {PERCENT.search(text).group()!r}")
    if errors:
        print("\n".join(errors))
        for name, text in out.items():
            if name != "html":
                print(f"--- {name} ---\n{text}")
        return 1
    print(f"one verdict everywhere: {verdict} (report: console, CSV, JSON, HTML; compare: text, "
          "markdown, JSON)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
