#!/usr/bin/env python3
"""readme_table.py check|write SCHEDLAB RECORDS README: keeps README.md's
quickstart table example ("Reading the quickstart table") what the table
renderer prints today, so the README cannot drift from the table again
(issue 33).

RECORDS is a real quickstart run's records (tests/report/data/quickstart.jsonl,
from `schedlab run configs/sweeps/quickstart.yaml -o ...`); the example is
`schedlab report RECORDS` as printed without colour. The README holds it in
a fenced block between the markers

    <!-- readme-table: begin (tests/report/readme_table.py write; do not edit) -->
    <!-- readme-table: end -->

check: exit 1 when the block differs from the rendering in anything but the
numbers and the column padding (the title, the legend lines, the header's
columns, each row's names, configurations and verdict words), printing both;
write: replaces the block with the rendering. Exit 2 on bad usage or a README
without the markers."""
import os
import re
import subprocess
import sys

BEGIN = "<!-- readme-table: begin (tests/report/readme_table.py write; do not edit) -->"
END = "<!-- readme-table: end -->"


def usage_error(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def render(schedlab, records):
    env = dict(os.environ, NO_COLOR="1")
    out = subprocess.run([schedlab, "report", records], check=True, capture_output=True, text=True,
                         env=env).stdout
    return out.rstrip("\n").split("\n")


def shape(line):
    """The line without its numbers and padding: what must not drift."""
    line = re.sub(r"\d+(\.\d+)?", "N", line)
    return re.sub(r"\s+", " ", line).strip()


def block_of(text):
    if BEGIN not in text or END not in text:
        usage_error(f"readme_table.py: the README has no '{BEGIN}' ... '{END}' block")
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    lines = body.strip("\n").split("\n")
    if len(lines) < 2 or not lines[0].startswith("```") or lines[-1] != "```":
        usage_error("readme_table.py: the README's table block is not one fenced code block")
    return head, lines[1:-1], tail


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("check", "write"):
        usage_error(__doc__)
    mode, schedlab, records, readme = sys.argv[1:]
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    head, shown, tail = block_of(text)
    rendered = render(schedlab, records)
    if mode == "write":
        with open(readme, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + "\n```\n" + "\n".join(rendered) + "\n```\n" + END + tail)
        print(f"readme_table.py: wrote {len(rendered)} lines into {readme}")
        return 0
    a, b = [shape(x) for x in shown], [shape(x) for x in rendered]
    if a == b:
        print(f"readme_table.py: the README's table ({len(shown)} lines) matches the renderer")
        return 0
    print("readme_table.py: README.md's quickstart table differs from what the table renderer "
          "prints; regenerate it with\n  python3 tests/report/readme_table.py write "
          "build/bin/schedlab tests/report/data/quickstart.jsonl README.md\nand update the "
          "prose around it. First difference:")
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "(none)"
        y = b[i] if i < len(b) else "(none)"
        if x != y:
            print(f"  line {i + 1} in README:   {x}\n  line {i + 1} rendered:    {y}")
            break
    return 1


if __name__ == "__main__":
    sys.exit(main())
