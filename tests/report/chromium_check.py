#!/usr/bin/env python3
"""chromium_check.py REPORT_TOOL RESULTS.jsonl BASELINE WORKDIR: renders the HTML
report of a sweep over four sizes and looks at it in headless Chromium at
1280x800, as a reader's browser would show it:

1. the page has the line plot of time against size for each fusion with four
   sizes: an SVG polyline per scheduler with valid points, four markers on
   the one valid at every size;
2. a screenshot (--screenshot) exists, is 1280x800 and is not blank;
3. nothing is wider than the window: a copy of the page with a small script
   that writes the layout into the DOM (document width, and where each table
   and SVG lies) is dumped with --dump-dom and checked here; every heatmap
   cell's label lies inside its cell.

Exits 77 (CTest's SKIP_RETURN_CODE) when no Chromium is installed: the test
is skipped, never passed, without a browser."""
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

SKIP = 77
WIDTH, HEIGHT = 1280, 800

# Writes the layout into a <pre id="layout"> that --dump-dom prints. The
# report itself has no script; only this test's copy does.
PROBE = """<script>
(function () {
  var d = document.documentElement, out = {
    scrollWidth: d.scrollWidth, clientWidth: d.clientWidth,
    bodyScrollWidth: document.body.scrollWidth, items: [], cells: []};
  document.querySelectorAll('table, svg').forEach(function (e) {
    var b = e.getBoundingClientRect();
    out.items.push({tag: e.tagName.toLowerCase(), label: e.getAttribute('aria-label') || '',
                    left: b.left, right: b.right, width: b.width,
                    scrollWidth: e.scrollWidth || 0, clientWidth: e.clientWidth || 0});
  });
  // A heatmap cell is a rect followed by its label (font-size 10).
  document.querySelectorAll('svg rect + text[font-size="10"]').forEach(function (t) {
    var r = t.previousElementSibling.getBBox(), b = t.getBBox();
    if (t.textContent) out.cells.push({text: t.textContent, rect: [r.x, r.width],
                                       box: [b.x, b.width]});
  });
  var pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, workdir, *args):
    """Runs headless Chromium with the flags a container or CI job needs."""
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", "--no-first-run", "--user-data-dir=" + os.path.join(workdir, "profile"),
           "--window-size=%d,%d" % (WIDTH, HEIGHT)] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace or colour not in (2, 6):
                raise ValueError(f"unexpected PNG format: depth {depth} colour {colour}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride, rows, prev = width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def check_plots(page, results, errors):
    """Per device section, each fusion with four sizes has its time plot: a
    polyline per scheduler with a valid point there, with a point per size
    where the scheduler has one."""
    devices, valid = [], {}  # fingerprint order; (device, fusion) -> {scheduler: sizes}
    for line in open(results):
        if not line.strip():
            continue
        r = json.loads(line)
        fp = r["device"]["fingerprint"]
        if fp not in devices:
            devices.append(fp)
        if r["status"] == "ok":
            valid.setdefault((fp, r["fusion"]), {}).setdefault(r["scheduler"], set()).add(
                frozenset(r["sizes"].items()))
    sections = page.split("<section>")[1:]
    if len(sections) != len(devices):
        errors.append(f"{len(sections)} sections for {len(devices)} devices")
        return 0
    plots = 0
    for fp, section in zip(devices, sections):
        for (dev, fusion), schedulers in valid.items():
            if dev != fp or max(len(v) for v in schedulers.values()) != 4:
                continue
            label = f"{fusion}: best (median|predicted) time against size"
            svg = re.search(r'<svg[^>]*aria-label="' + re.escape(f"{fusion}: best ") +
                            r'(median|predicted) time against size".*?</svg>', section, re.S)
            if not svg:
                errors.append(f"{fp}: no plot {label!r}")
                continue
            plots += 1
            lines = {p.get("data-series"): p for p in ET.fromstring(svg.group(0)).iter("polyline")}
            if sorted(lines) != sorted(schedulers):
                errors.append(f"{fp}: {label!r} has lines {sorted(lines)}, expected {sorted(schedulers)}")
            for name, line in lines.items():
                n = len(line.get("points", "").split())
                if name in schedulers and n != len(schedulers[name]):
                    errors.append(f"{fp}: {name}'s line has {n} points, expected {len(schedulers[name])}")
    if not plots:
        errors.append("no fusion with four sizes has its line plot of time against size")
    return plots


def main():
    tool, results, baseline, workdir = sys.argv[1:5]
    browser = find_chromium()
    if not browser:
        print("SKIP: no headless Chromium (chromium, chromium-browser, google-chrome) is installed; "
              "scripts/install-deps installs it")
        sys.exit(SKIP)
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    page = subprocess.run([tool, "html", results, baseline], check=True, capture_output=True,
                          text=True).stdout
    report = os.path.join(workdir, "report.html")
    with open(report, "w") as f:
        f.write(page)
    errors = []
    plots = check_plots(page, results, errors)
    if re.search(r"\d\.\d+e[+-]\d", page):
        errors.append("a number in exponent notation: " + re.search(r".{30}\d\.\d+e[+-]\d.{10}", page).group(0))

    # 2. The screenshot.
    png = os.path.join(workdir, "report.png")
    run = chromium(browser, workdir, "--screenshot=" + png, "file://" + report)
    if not os.path.isfile(png):
        errors.append(f"no screenshot written (exit {run.returncode}): {run.stderr[-2000:]}")
    else:
        w, h, bpp, rows = png_pixels(png)
        if (w, h) != (WIDTH, HEIGHT):
            errors.append(f"screenshot is {w}x{h}, expected {WIDTH}x{HEIGHT}")
        white = bytes([255] * bpp)
        pixels = [row[i:i + bpp] for row in rows[::4] for i in range(0, len(row), 4 * bpp)]
        inked = sum(1 for p in pixels if p != white) / len(pixels)
        colours = len(set(p[:3] for p in pixels))
        if inked < 0.02 or colours < 8:
            errors.append(f"the screenshot looks blank: {inked:.1%} non-white, {colours} colours")

    # 3. The layout, measured by Chromium itself.
    probe = os.path.join(workdir, "probe.html")
    with open(probe, "w") as f:
        f.write(page.replace("</body>", PROBE + "</body>"))
    run = chromium(browser, workdir, "--virtual-time-budget=2000", "--dump-dom", "file://" + probe)
    m = re.search(r'<pre id="layout">(.*?)</pre>', run.stdout, re.S)
    if not m:
        errors.append(f"no layout in the dumped DOM (exit {run.returncode}): {run.stderr[-2000:]}")
        layout = None
    else:
        layout = json.loads(html.unescape(m.group(1)))
        cw = layout["clientWidth"]
        if not WIDTH - 40 <= cw <= WIDTH:
            errors.append(f"the window is {cw} px wide, expected about {WIDTH}")
        if layout["scrollWidth"] > cw or layout["bodyScrollWidth"] > cw:
            errors.append(f"the page overflows: scrollWidth {layout['scrollWidth']} "
                          f"(body {layout['bodyScrollWidth']}) > clientWidth {cw}")
        for it in layout["items"]:
            if it["left"] < -0.5 or it["right"] > cw + 0.5:
                errors.append(f"<{it['tag']}> {it['label']!r} lies at {it['left']:.0f}..{it['right']:.0f} px, "
                              f"outside the {cw} px window")
            if it["tag"] == "table" and it["scrollWidth"] > it["clientWidth"] + 1:
                errors.append(f"a table's content is clipped: {it['scrollWidth']} > {it['clientWidth']}")
        if not any(it["tag"] == "table" for it in layout["items"]):
            errors.append("no table measured")
        for c in layout["cells"]:
            (rx, rw), (bx, bw) = c["rect"], c["box"]
            if bx < rx - 0.5 or bx + bw > rx + rw + 0.5:
                errors.append(f"heatmap label {c['text']!r} ({bw:.0f} px) overflows its {rw:.0f} px cell")
        if not layout["cells"]:
            errors.append("no heatmap cell measured")
    if errors:
        print("\n".join(errors))
        print(f"(files in {workdir})")
        sys.exit(1)
    print(f"ok: {plots} time plots; screenshot {png}; layout {layout['clientWidth']} px wide, "
          f"{len(layout['items'])} tables and SVGs inside, {len(layout['cells'])} heatmap labels "
          f"inside their cells ({browser})")


main()
