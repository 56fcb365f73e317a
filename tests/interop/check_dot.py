#!/usr/bin/env python3
"""Renders podnet's DOT export of every built-in example with Graphviz's dot.

For each example in examples/*.yaml (each must have a case below, so a new
example cannot be forgotten) it runs `podnet design NAME --set ... --export
dot`, then `dot -Tsvg`, and fails on a non-zero exit, on anything dot writes
to stderr (Graphviz reports warnings there: "Warning: node X, port Y
unrecognized" for "device":"port" endpoints on non-record nodes), or when the
SVG does not hold one node per device and one edge per cable.

The examples are built smaller than their defaults (cases.py says why and how).

Usage: check_dot.py PODNET SOURCE_DIR OUT_DIR    (standard library only)
"""
import os
import re
import shutil
import subprocess
import sys

from cases import CASES, examples  # beside this script



def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    podnet, src, out = argv[1:]
    dot = shutil.which("dot")
    if dot is None:
        print("error: Graphviz's dot not found: install the Debian package graphviz (scripts/setup.sh)", file=sys.stderr)
        return 1
    failures = []
    for name in examples(src):
        if name not in CASES:
            failures.append(f"{name}: no case in tests/interop/cases.py (add the example with a size dot renders in seconds)")
            continue
        gv = os.path.join(out, name + ".dot")
        svg = os.path.join(out, name + ".svg")
        with open(gv, "w", encoding="utf-8") as f:
            r = subprocess.run([podnet, "design", name, *CASES[name], "--export", "dot"], stdout=f,
                               stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            failures.append(f"{name}: podnet design exited {r.returncode}: {r.stderr.strip()}")
            continue
        text = open(gv, encoding="utf-8").read()
        cables = len(re.findall(r"^  \".*\" -- \".*\" \[", text, re.M))
        devices = len(re.findall(r"^  \"[^\"]*\" \[tier=", text, re.M))
        r = subprocess.run([dot, "-Tsvg", "-o", svg, gv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0 or r.stderr:
            lines = r.stderr.strip().splitlines()
            failures.append(f"{name}: dot exited {r.returncode} with {len(lines)} line(s) on stderr, first: "
                            f"{lines[0] if lines else ''}")
            continue
        drawn = open(svg, encoding="utf-8").read()
        svg_edges = len(re.findall(r'<g id="edge\d+" class="edge', drawn))
        svg_nodes = len(re.findall(r'<g id="node\d+" class="node', drawn))
        print(f"{name}: {devices} devices, {cables} cables; dot drew {svg_nodes} nodes, {svg_edges} edges, no warnings")
        if cables == 0 or svg_edges != cables or svg_nodes != devices:
            failures.append(f"{name}: SVG has {svg_nodes} nodes / {svg_edges} edges, export has {devices} / {cables}")
    for f in failures:
        print("error: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
