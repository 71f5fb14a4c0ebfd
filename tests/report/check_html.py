#!/usr/bin/env python3
"""check_html.py REPORT_TOOL RESULTS.jsonl BASELINE: renders the HTML report
and checks that it is a self-contained, well-formed page: balanced HTML
elements, every inline <svg> well-formed XML, nothing loaded by URL, the
CPU-emulation section labelled as such, numbers without exponents, and per
section the line plots of time and GB/s against size with a line per
scheduler that has a valid point. How it looks in a browser:
chromium_check.py."""
import html.parser
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Balance(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.errors = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") or (value and re.search(r"(https?:)?//", value)
                                           and name != "viewbox"):
                self.errors.append(f"<{tag} {name}={value!r}> refers to something outside the page")
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append(f"</{tag}> at line {self.getpos()[0]} closes "
                               f"{self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()


def main():
    tool, results, baseline = sys.argv[1:4]
    page = subprocess.run([tool, "html", results, baseline], check=True, capture_output=True,
                          text=True).stdout
    errors = []
    if not page.startswith("<!DOCTYPE html>"):
        errors.append("no <!DOCTYPE html>")
    p = Balance()
    p.feed(page)
    p.close()
    errors += p.errors
    if p.stack:
        errors.append(f"unclosed elements: {p.stack}")
    for banned in ("script", "link", "img", "iframe", "object"):
        if banned in p.tags:
            errors.append(f"<{banned}> in a self-contained report")
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    if len(svgs) < 3:
        errors.append(f"expected bar charts and heatmaps, found {len(svgs)} <svg>")
    plots = []
    for i, svg in enumerate(svgs):
        try:
            root = ET.fromstring(svg)
            if root.get("class") == "plot":
                plots.append(root)
            elif not root.findall(".//rect"):
                errors.append(f"svg {i} draws no rect")
        except ET.ParseError as e:
            errors.append(f"svg {i} is not well-formed XML: {e}")
    # Per device: softmax at two sizes, time and GB/s; pointwise never valid.
    if len(plots) != 4:
        errors.append(f"expected 4 line plots (time and GB/s per device), found {len(plots)}")
    for p in plots:
        series = sorted(line.get("data-series") for line in p.iter("polyline"))
        if series != ["eager", "normalization"]:
            errors.append(f"plot {p.get('aria-label')!r}: lines {series}, expected eager and "
                          "normalization")
    exponent = re.search(r".{0,30}\d\.\d+e[+-]\d+.{0,10}", page)
    if exponent:
        errors.append(f"a number in exponent notation: {exponent.group(0)!r}")
    if page.count("<section>") != 2:
        errors.append("expected one section per device (CPU, GPU)")
    if "<h2>softmax_sweep on cpu (fixture) (cpu) — CPU emulation — not GPU timings</h2>" not in page:
        errors.append("the CPU section's heading does not say 'CPU emulation — not GPU timings'")
    if "NVIDIA H200 (fixture) (cuda) —" in page:
        errors.append("the GPU section is labelled as emulation")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print(f"ok: {len(svgs)} svg, {len(page)} bytes")


main()
