#!/usr/bin/env python3
"""extract_md_files.py DOC.md OUTDIR: writes every fenced code block of DOC.md
that is preceded by a `<!-- file: NAME -->` line to OUTDIR/NAME, byte for
byte, so that a test builds the documentation's example exactly as written.
Exits 1 when the document marks no file or a marked block is not fenced."""
import os
import re
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    doc, out = sys.argv[1], sys.argv[2]
    lines = open(doc, encoding="utf-8").read().split("\n")
    written = []
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"<!-- file: (\S+) -->", lines[i].strip())
        i += 1
        if not m:
            continue
        name = m.group(1)
        if i >= len(lines) or not lines[i].startswith("```"):
            print(f"{doc}:{i + 1}: the block marked {name} is not a fenced code block", file=sys.stderr)
            return 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        path = os.path.join(out, name)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(body) + "\n")
        written.append(name)
    if not written:
        print(f"{doc}: no block is marked <!-- file: NAME -->", file=sys.stderr)
        return 1
    print("extracted " + " ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
