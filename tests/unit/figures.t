#!/usr/bin/env python3
"""figures.t: the benchmark figures the docs show (TAP, run by make check).

Every SVG that docs/benchmarks.md or README.md embeds exists, is well-formed
XML, draws something (a path or polyline with data) and references nothing
outside itself: no script, and no URL but the XML namespaces. Every figure
has the data it is drawn from (docs/bench/NAME.dat, with a header naming
where its numbers came from) and a gnuplot script. Where gnuplot is
installed, `scripts/bench plots` draws each figure again from its data into
a scratch directory, and the result is valid in the same way.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.environ.get("srcdir") or os.path.join(HERE, "..", ".."))
NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
n = 0
failed = 0


def ok(cond, name, detail=""):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print(("ok" if cond else "not ok") + f" {n} - {name}")
    if not cond and detail:
        for line in str(detail).rstrip().splitlines():
            print("#   " + line)


def embedded():
    """(doc, path of the svg) for every ![..](...svg) of the two pages."""
    out = []
    for doc in ("docs/benchmarks.md", "README.md"):
        base = os.path.dirname(os.path.join(SRCDIR, doc))
        text = open(os.path.join(SRCDIR, doc), encoding="utf-8").read()
        for m in re.finditer(r"!\[[^\]]*\]\(([^)\s]+\.svg)\)", text):
            out.append((doc, os.path.normpath(os.path.join(base, m.group(1)))))
    return out


def svg_problems(path):
    """What is wrong with the SVG at path ([] when nothing)."""
    try:
        data = open(path, encoding="utf-8").read()
        root = ET.fromstring(data)
    except (OSError, ET.ParseError, UnicodeDecodeError) as e:
        return [f"not readable XML: {e}"]
    bad = []
    if not root.tag.endswith("svg"):
        bad.append(f"root element is {root.tag}")
    drawn = [e for e in root.iter() if e.tag.rsplit("}", 1)[-1] in ("path", "polyline")
             and len(e.get("d") or e.get("points") or "") > 20]
    if not drawn:
        bad.append("no path or polyline with data")
    if any(e.tag.rsplit("}", 1)[-1] == "script" for e in root.iter()):
        bad.append("it has a script")
    for url in re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+[^\s\"'<>)]*", data):
        if url not in NAMESPACES and not url.startswith("//www.w3.org/"):
            bad.append(f"external reference {url}")
    return bad


def main():
    figs = embedded()
    names = sorted({os.path.basename(p)[:-4] for _, p in figs})
    ok(len(names) >= 4, f"the docs embed the benchmark figures ({', '.join(names)})")
    ok(any(d == "README.md" for d, _ in figs), "the README shows one")
    for doc, path in figs:
        rel = os.path.relpath(path, SRCDIR)
        probs = svg_problems(path) if os.path.exists(path) else ["missing"]
        ok(not probs, f"{doc}: {rel} is a valid, self-contained figure", "\n".join(probs))
    for name in names:
        dat = os.path.join(SRCDIR, "docs", "bench", name + ".dat")
        gp = os.path.join(SRCDIR, "tests", "bench", "plots", name + ".gp")
        head = open(dat, encoding="utf-8").readline() if os.path.exists(dat) else ""
        ok(head.startswith("# ") and ("scripts/bench" in head or "measured" in head) and os.path.exists(gp),
           f"{name}: its data says where it came from, and it has a gnuplot script", head)
    if not shutil.which("gnuplot"):
        print("ok %d - # SKIP gnuplot is not installed: the figures are not redrawn" % (n + 1))
        return n + 1
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, PLOT_OUT_DIR=out)
        r = subprocess.run([os.path.join(SRCDIR, "scripts", "bench"), "plots"], cwd=SRCDIR, env=env,
                           capture_output=True, text=True, timeout=120)
        redrawn = [f for f in names if os.path.exists(os.path.join(out, f + ".svg"))]
        probs = [f"{f}: {p}" for f in redrawn for p in svg_problems(os.path.join(out, f + ".svg"))]
        ok(r.returncode == 0 and len(redrawn) == len(names) and not probs,
           f"scripts/bench plots draws all {len(names)} figures again from their data",
           r.stderr + "\n".join(probs))
    return n


if __name__ == "__main__":
    total = main()
    print(f"1..{total}")
    sys.exit(1 if failed else 0)
