#!/usr/bin/env python3
"""Runs the examples that podnet's --help pages show, as a newcomer would copy them.

Reads every command's `--help`, takes the lines of its "Examples:" footer that start with
`podnet` (a line ending in a backslash goes on with the next), strips the trailing comment,
and runs each in a scratch folder. An example passes when podnet exits 0. Examples that
need a file the user brings (a log, a trace, a scenario of their own) and those that run
for minutes are listed in SKIP with the reason; everything else must run.

Usage: check_examples.py PODNET [SCRATCH]
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

COMMANDS = ["list", "design", "bench", "train", "reliability", "inference", "plan-upgrade", "diagnose",
            "calibrate", "sweep", "diff", "optimize", "run", "resolve", "serve"]

# An example is skipped when it contains one of these; the reason says why. Each example runs in a folder of its
# own (a sweep's default database must not meet another's).
SKIP = {
    "my-fabric.yaml": "the user's own scenario file",
    "run my.yaml": "the user's own scenario file",
    "resolve my.yaml": "the user's own scenario file",
    "workload.txt": "a SimAI workload the user brings",
    "traces/": "Chakra traces the user brings",
    "megatron.log": "a training log the user brings",
    ".log": "an nccl-tests log the user brings",
    "calib/": "the fragment calibrate writes from a log",
    "before.json": "two saved results",
    "--results b.db --format csv": "reads the database the sweep example before it writes",
    "podnet serve": "a server that runs until stopped (tests/dashboard drive it)",
    "--evaluate 100": "a diagnosis campaign of minutes",
    "optimize --gpus 16384": "a design search of minutes",
    "plan-upgrade aipod-16k": "a rolling upgrade of 16,384 GPUs: minutes",
    "--engine packet": "a packet run of minutes",
    "network.partitioned": "a packet run of minutes",
    "--set network.pfc=false": "a packet run",
    "--min 8B --max 8GiB --gpus 0-1023": "31 sizes on 1,024 GPUs: minutes on the flow engine",
    "sweep aipod-16k --study train": "a training sweep of 16,384 GPUs: minutes",
    "sweep aipod-16k --study diagnose": "a diagnosis sweep: minutes",
    "gpus=1048576": "a million-GPU design (its own benchmark)",
    "diff aipod-16k aipod-16k --study bench": "two 1,024-GPU bench runs of minutes",
}


def examples(podnet):
    out = []
    for c in COMMANDS:
        text = subprocess.run([podnet, c, "--help"], capture_output=True, text=True).stdout
        lines = text.split("Examples:", 1)[1].splitlines() if "Examples:" in text else []
        joined, cur = [], ""
        for line in lines:
            s = line.strip()
            if not cur and not s.startswith("podnet"):
                continue
            cur += " " + s
            if s.endswith("\\"):
                cur = cur[:-1]
                continue
            joined.append(cur.strip())
            cur = ""
        for e in joined:
            e = re.sub(r"\s+(#|\().*$", "", e)  # a trailing comment: "# ..." or "(a million GPUs ...)"
            out.append((c, e))
    return out


def main():
    podnet = os.path.abspath(sys.argv[1])
    scratch = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="podnet_examples_")
    os.makedirs(scratch, exist_ok=True)
    failed, ran = [], 0
    for n, (cmd, e) in enumerate(examples(podnet)):
        why = next((r for k, r in SKIP.items() if k in e), None)
        if why:
            print(f"skip  {e}  ({why})")
            continue
        # A pipe or a redirection runs through the shell, in the scratch folder.
        shell_line = e.replace("podnet ", shlex.quote(podnet) + " ", 1)
        if "|" in e and "dot" in e and subprocess.run(["which", "dot"], capture_output=True).returncode != 0:
            print(f"skip  {e}  (graphviz's dot is not installed)")
            continue
        t = time.time()
        folder = os.path.join(scratch, f"{n:02d}-{cmd}")
        os.makedirs(folder, exist_ok=True)
        r = subprocess.run(["bash", "-o", "pipefail", "-c", shell_line], cwd=folder, capture_output=True, text=True,
                           timeout=600)
        ran += 1
        status = "ok" if r.returncode == 0 else f"FAIL {r.returncode}"
        print(f"{status:6}{e}  ({time.time() - t:.1f} s)")
        if r.returncode != 0:
            failed.append((e, (r.stderr or r.stdout).strip().splitlines()[-3:]))
        # resolve's example writes a file "to edit and run": it must run.
        if r.returncode == 0 and "> my.yaml" in e:
            r = subprocess.run([podnet, "train", "my.yaml", "--engine", "analytical"], cwd=folder,
                               capture_output=True, text=True)
            ran += 1
            print(f"{'ok' if r.returncode == 0 else 'FAIL':6}podnet train my.yaml --engine analytical (the file it wrote)")
            if r.returncode != 0:
                failed.append(("podnet train my.yaml (from " + e + ")", r.stderr.strip().splitlines()[-3:]))
    for e, why in failed:
        print(f"\nFAILED: {e}\n  " + "\n  ".join(why))
    print(f"\n{ran} examples run, {len(failed)} failed")
    return 1 if failed or ran < 20 else 0


if __name__ == "__main__":
    sys.exit(main())
