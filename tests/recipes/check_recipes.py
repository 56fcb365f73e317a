#!/usr/bin/env python3
"""Runs every command of the README's quick start, of the getting-started page and of the recipe pages
(docs/recipes/*.md) and checks the output they show.

A recipe shows a session in a ```console block: a line `$ podnet ...` is a command (a trailing backslash
continues it), and the lines after it, up to the next `$`, are what it prints (stdout, then stderr). A line `...`
stands for lines left out. Each shown line must appear in the real output, in the same order (trailing
spaces aside). Commands run in a scratch directory in which `tests/` and `examples/` of the repository are
visible, with `podnet` on PATH being the binary under test; each must exit 0 unless the block shows
`(exit N)` on the line after it.

Usage: check_recipes.py PODNET SRC OUT [PAGE.md ...]
"""
import os
import shutil
import re
import subprocess
import sys
import time


def sessions(text):
    """Yields (line number, command, expected lines, expected exit status) for each command in the page."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        i += 1
        block = []
        while i < len(lines) and lines[i].strip() != "```":
            block.append((i + 1, lines[i]))
            i += 1
        j = 0
        while j < len(block):
            lineno, line = block[j]
            if not line.startswith("$ "):
                j += 1
                continue
            cmd = line[2:]
            while cmd.endswith("\\") and j + 1 < len(block):
                j += 1
                cmd = cmd[:-1] + " " + block[j][1].strip()
            expected, status = [], 0
            j += 1
            while j < len(block) and not block[j][1].startswith("$ "):
                m = re.fullmatch(r"\(exit (\d+)\)", block[j][1].strip())
                if m:
                    status = int(m.group(1))
                else:
                    expected.append(block[j][1].rstrip())
                j += 1
            yield lineno, cmd, expected, status


def in_order(expected, actual):
    """The first shown line not found (in order) in actual, or None."""
    k = 0
    for e in expected:
        if e.strip() in ("...", ""):
            continue
        while k < len(actual) and actual[k].rstrip() != e:
            k += 1
        if k == len(actual):
            return e
        k += 1
    return None


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    podnet, src, out = sys.argv[1:4]
    pages = sys.argv[4:] or [os.path.join(src, "README.md"), os.path.join(src, "docs", "getting-started.md")] + sorted(
        os.path.join(src, "docs", "recipes", p)
        for p in os.listdir(os.path.join(src, "docs", "recipes"))
        if p.endswith(".md"))
    bindir = os.path.join(out, "bin")
    os.makedirs(bindir, exist_ok=True)
    link = os.path.join(bindir, "podnet")
    if not os.path.exists(link):
        os.symlink(os.path.abspath(podnet), link)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    failed = ran = 0
    for page in pages:
        name = os.path.splitext(os.path.basename(page))[0]
        work = os.path.join(out, name)
        # A fresh directory per run: a sweep database left by an earlier run would be resumed, not re-run.
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        for d in ("tests", "examples"):
            if not os.path.exists(os.path.join(work, d)):
                os.symlink(os.path.join(os.path.abspath(src), d), os.path.join(work, d))
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for lineno, cmd, expected, status in sessions(text):
            if not cmd.startswith("podnet"):
                print(f"{page}:{lineno}: a recipe command starts with podnet: {cmd}")
                failed += 1
                continue
            start = time.monotonic()
            r = subprocess.run(["sh", "-c", cmd], cwd=work, env=env, capture_output=True, text=True)
            ran += 1
            wall = time.monotonic() - start
            where = f"{os.path.relpath(page, src)}:{lineno}"
            if r.returncode != status:
                print(f"FAIL {where}: `{cmd}` exited {r.returncode}, the page shows {status}\n{r.stderr[-2000:]}")
                failed += 1
                continue
            missing = in_order(expected, r.stdout.splitlines())
            if missing is not None:  # a line podnet writes on stderr ("wrote ...", an error), after stdout's
                missing = in_order(expected, r.stdout.splitlines() + r.stderr.splitlines())
            if missing is not None:
                print(f"FAIL {where}: `{cmd}` did not print (in this order):\n  {missing}\n"
                      f"its output was:\n{r.stdout[-4000:]}")
                failed += 1
                continue
            print(f"ok   {where}: {cmd} ({wall:.1f} s)")
    print(f"{ran - failed} passed, {failed} failed")
    return 1 if failed or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
