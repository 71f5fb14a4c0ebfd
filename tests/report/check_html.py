#!/usr/bin/env python3
"""check_html.py REPORT_TOOL RESULTS.jsonl BASELINE: renders the HTML report
and checks that it is a self-contained, well-formed page: balanced HTML
elements, every inline <svg> well-formed XML, nothing loaded by URL, and the
CPU-emulation section labelled as such."""
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
    for i, svg in enumerate(svgs):
        try:
            root = ET.fromstring(svg)
            if not root.findall(".//rect"):
                errors.append(f"svg {i} draws no rect")
        except ET.ParseError as e:
            errors.append(f"svg {i} is not well-formed XML: {e}")
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
