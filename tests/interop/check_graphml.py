#!/usr/bin/env python3
"""Loads podnet's GraphML export of every built-in example with NetworkX.

For each example in examples/*.yaml, at the size cases.py gives it, it runs
`podnet design NAME --set ... --export graphml` and `--format json`, reads the GraphML with
networkx.read_graphml (Debian's python3-networkx) and fails unless the graph
holds exactly what podnet's own bill of materials counts:
  nodes = bom.gpus + bom.nics + bom.nvlink_domains + bom.switches.total
          (per kind: gpu, nic, nvswitch, switch)
  edges = bom.links.total + sum(bom.internal_links)
          (copper + optical edges = bom.cables.total; nvlink and pcie edges =
          bom.internal_links.nvlink and .pcie)
and every edge's capacity_gbps is a positive float (typed attributes).

(At full size every example passes too, in 38 s for the five on this
machine: `check_graphml.py PODNET SRC OUT --full`.)

Usage: check_graphml.py PODNET SOURCE_DIR OUT_DIR [--full]
"""
import collections
import json
import os
import subprocess
import sys

from cases import CASES, examples  # beside this script

try:
    import networkx as nx
except ImportError:
    print("error: NetworkX not importable by " + sys.executable +
          ": install the Debian package python3-networkx (scripts/setup.sh)", file=sys.stderr)
    sys.exit(1)


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    podnet, src, out = argv[1:4]
    full = "--full" in argv[4:]
    failures = []
    for name in examples(src):
        if name not in CASES and not full:
            failures.append(f"{name}: no case in tests/interop/cases.py")
            continue
        size = [] if full else CASES[name]
        path = os.path.join(out, name + ".graphml")
        with open(path, "w", encoding="utf-8") as f:
            r = subprocess.run([podnet, "design", name, *size, "--export", "graphml"], stdout=f, stderr=subprocess.PIPE,
                               text=True)
        if r.returncode != 0:
            failures.append(f"{name}: podnet design --export graphml exited {r.returncode}: {r.stderr.strip()}")
            continue
        r = subprocess.run([podnet, "design", name, *size, "--format", "json"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            failures.append(f"{name}: podnet design --format json exited {r.returncode}: {r.stderr.strip()}")
            continue
        bom = json.loads(r.stdout)["bom"]
        failed_before = len(failures)
        g = nx.read_graphml(path)
        kinds = collections.Counter(d.get("kind") for _, d in g.nodes(data=True))
        media = collections.Counter(d.get("media") for _, _, d in g.edges(data=True))
        internal = bom.get("internal_links", {})
        want = {
            "nodes": bom["gpus"] + bom["nics"] + bom["nvlink_domains"] + bom["switches"]["total"],
            "edges": bom["links"]["total"] + sum(internal.values()),
            "gpu nodes": bom["gpus"],
            "nic nodes": bom["nics"],
            "nvswitch nodes": bom["nvlink_domains"],
            "switch nodes": bom["switches"]["total"],
            "cable edges": bom["cables"]["total"],
            "nvlink edges": internal.get("nvlink", 0),
            "pcie edges": internal.get("pcie", 0),
        }
        got = {
            "nodes": g.number_of_nodes(),
            "edges": g.number_of_edges(),
            "gpu nodes": kinds["gpu"],
            "nic nodes": kinds["nic"],
            "nvswitch nodes": kinds["nvswitch"],
            "switch nodes": kinds["switch"],
            "cable edges": media["copper"] + media["optical"],
            "nvlink edges": media["nvlink"],
            "pcie edges": media["pcie"],
        }
        bad_capacity = sum(1 for _, _, d in g.edges(data=True)
                           if not isinstance(d.get("capacity_gbps"), float) or d["capacity_gbps"] <= 0)
        print(f"{name}: NetworkX {type(g).__name__} with {got['nodes']} nodes, {got['edges']} edges; "
              f"bill of materials {want['nodes']} nodes, {want['edges']} links")
        for k in want:
            if got[k] != want[k]:
                failures.append(f"{name}: {k}: GraphML has {got[k]}, bill of materials {want[k]}")
        if bad_capacity:
            failures.append(f"{name}: {bad_capacity} edges without a positive float capacity_gbps")
        if len(failures) == failed_before:
            os.remove(path)  # tens of MB per example at full size: kept only when it failed
    failures += check_frontend(podnet, out)
    for f in failures:
        print("error: " + f, file=sys.stderr)
    return 1 if failures else 0


def check_frontend(podnet, out):
    """The frontend network's GraphML (frontend.graphml beside topology.graphml) against its bill of materials:
    one host and one NIC node per port, its switches; its cables and one PCIe edge per port."""
    name = "aipod-16k frontend"
    fe_dir = os.path.join(out, "frontend")
    args = ["design", "aipod-16k", *CASES["aipod-16k"], "--set", "frontend.nics=2", "--set",
            "frontend.storage_nodes=4", "--set", "frontend.radix=8", "--set", "frontend.oversubscription=3:1"]
    r = subprocess.run([podnet, *args, "--export", "graphml", "--out", fe_dir], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return [f"{name}: podnet design --export graphml --out exited {r.returncode}: {r.stderr.strip()}"]
    fe = json.loads(subprocess.run([podnet, *args, "--format", "json"], stdout=subprocess.PIPE, text=True,
                                   check=True).stdout)["frontend"]
    g = nx.read_graphml(os.path.join(fe_dir, "frontend.graphml"))
    kinds = collections.Counter(d.get("kind") for _, d in g.nodes(data=True))
    media = collections.Counter(d.get("media") for _, _, d in g.edges(data=True))
    devices = {d.get("device") for _, d in g.nodes(data=True) if d.get("kind") == "nic"}
    ports = fe["ports"]
    want = {"host nodes": ports, "nic nodes": ports, "switch nodes": fe["switches"]["total"],
            "cable edges": fe["cables"]["total"], "pcie edges": ports,
            "devices": fe["servers"] + fe["storage_nodes"]}
    got = {"host nodes": kinds["host"], "nic nodes": kinds["nic"], "switch nodes": kinds["switch"],
           "cable edges": media["copper"] + media["optical"], "pcie edges": media["pcie"], "devices": len(devices)}
    print(f"{name}: NetworkX {type(g).__name__} with {g.number_of_nodes()} nodes, {g.number_of_edges()} edges")
    return [f"{name}: {k}: GraphML has {got[k]}, the design {want[k]}" for k in want if got[k] != want[k]]


if __name__ == "__main__":
    sys.exit(main(sys.argv))
