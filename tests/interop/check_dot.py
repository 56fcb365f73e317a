#!/usr/bin/env python3
"""Renders podnet's DOT export of every built-in example with Graphviz's dot.

For each example in examples/*.yaml (each must have a case below, so a new
example cannot be forgotten) it runs `podnet design NAME --set ... --export
dot`, then `dot -Tsvg`, and fails on a non-zero exit, on anything dot writes
to stderr (Graphviz reports warnings there: "Warning: node X, port Y
unrecognized" for "device":"port" endpoints on non-record nodes), or when the
SVG does not hold one node per device and one edge per cable.

The examples are built smaller than their defaults: dot's layout time grows
faster than linearly with edges (measured on leafspine-8k with Graphviz 2.42:
1,024 cables 1.1 s, 4,096 cables 9.4 s, 8,192 cables 40 s), and the built-in
fabrics have 12,288 to 82,944 cables. Each case keeps its example's family,
tiers and options and shrinks only the size.

Usage: check_dot.py PODNET SOURCE_DIR OUT_DIR    (standard library only)
"""
import os
import re
import shutil
import subprocess
import sys

CASES = {
    # 3-tier rail Clos: 128 GPUs in 2 groups per pod (1,664 cables).
    "aipod-16k": ["--set", "topology.gpus=128", "--set", "topology.groups_per_pod=2"],
    # dragonfly p=8, a=16, h=8 with 256 GPUs = 2 groups (624 cables).
    "dragonfly-16k": ["--set", "topology.gpus=256"],
    # 3-tier fat tree k=8 with 4-GPU, 4-NIC servers (k/2 = 4 host ports per edge switch; 384 cables).
    "fat-tree-k48": ["--set", "topology.k=8", "--set", "server.gpus=4", "--set", "server.nics=4"],
    # 2-tier rail-optimized leaf-spine, 512 GPUs (1,024 cables).
    "leafspine-8k": ["--set", "topology.gpus=512"],
    # 3-D torus 4x4x4 = one 4x4x4 cube (192 chip-to-chip cables, self-loops on each server).
    "torus-3d-4k": ["--set", "topology.dims=[4,4,4]"],
}


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    podnet, src, out = argv[1:]
    dot = shutil.which("dot")
    if dot is None:
        print("error: Graphviz's dot not found: install the Debian package graphviz (scripts/setup.sh)", file=sys.stderr)
        return 1
    examples = sorted(f[:-5] for f in os.listdir(os.path.join(src, "examples")) if f.endswith(".yaml"))
    failures = []
    for name in examples:
        if name not in CASES:
            failures.append(f"{name}: no case in {argv[0]} (add the example with a size dot renders in seconds)")
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
