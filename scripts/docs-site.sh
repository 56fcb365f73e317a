#!/bin/sh
# docs-site.sh BUILD_DIR: builds podnet's documentation site into
# BUILD_DIR/docs-site/site and fails on any MkDocs warning (a broken link, a
# nav entry without its page) and on a link to an anchor its page lacks.
#
# The result field reference (reference/result-fields.md) is generated the same way (`podnet list results
# --format markdown`). The scenario key reference (reference/scenario-keys.md) is generated here
# from BUILD_DIR/podnet, the same key lists the loader checks, and never
# committed: `podnet list keys --format markdown` when this podnet has it,
# otherwise the tables of `podnet list` turned into Markdown below.
#
# Runs as ctest `docs_site` (label docs) and as `make docs`. Needs Debian's
# mkdocs and mkdocs-material (scripts/setup.sh installs them).
set -eu

if [ $# -ne 1 ]; then
  echo "usage: scripts/docs-site.sh BUILD_DIR" >&2
  exit 2
fi
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$1" && pwd)"
podnet="$build/podnet"
out="$build/docs-site"

if [ ! -x "$podnet" ]; then
  echo "docs-site: $podnet not found: build podnet first" >&2
  exit 1
fi
if ! command -v mkdocs >/dev/null 2>&1; then
  echo "docs-site: mkdocs not found: install Debian's mkdocs and mkdocs-material (scripts/setup.sh)" >&2
  exit 1
fi

rm -rf "$out"
mkdir -p "$out"
cp -R "$src/docs" "$out/docs"
cp "$src/mkdocs.yml" "$out/mkdocs.yml"

keys="$out/docs/reference/scenario-keys.md"
if "$podnet" list keys --format markdown >"$out/keys.md" 2>/dev/null; then
  {
    if ! head -n 1 "$out/keys.md" | grep -q '^# '; then
      echo "# Scenario keys"
      echo
    fi
    cat "$out/keys.md"
  } >"$keys"
else
  "$podnet" list >"$out/list.txt"
  python3 - "$out/list.txt" "$keys" <<'PY'
"""Turns the text of `podnet list` into Markdown.

The text is a few paragraphs: an unindented heading ending in ':', then
either a two-column table (indent 2: name, description) or sub-headings
(indent 2: "name - description" for a topology family, "name: description"
for a scenario section), each followed by a parameter table (indent 4:
header, dashes, rows). Columns are separated by runs of two or more spaces
that every line of the table shares. The failures part is kept as text.
"""
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
text = open(src, encoding="utf-8").read()


def cell(s, code=False):
    s = s.strip()
    if not s:
        return ""
    if code:
        return "`" + s.replace("`", "'") + "`"
    s = s.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*")
    return s


def split_columns(lines, ncols, indent):
    """The column spans shared by all lines: the first ncols-1 runs of >= 2 blanks."""
    width = max(len(l) for l in lines)
    blank = [all(i >= len(l) or l[i] == " " for l in lines) for i in range(width)]
    cuts, i = [], indent
    while i < width and len(cuts) < ncols - 1:
        if blank[i]:
            j = i
            while j < width and blank[j]:
                j += 1
            if j - i >= 2 and j < width:
                cuts.append((i, j))
            i = j
        else:
            i += 1
    starts = [indent] + [b for _, b in cuts]
    ends = [a for a, _ in cuts] + [None]
    return [[l[s:e].strip() if e else l[s:].strip() for s, e in zip(starts, ends)] for l in lines]


def two_column(rows):
    out = ["| name | description |", "|---|---|"]
    for r in rows:
        m = re.match(r"^\s*(\S+)\s{2,}(.*)$", r)
        name, desc = (m.group(1), m.group(2)) if m else (r.strip(), "")
        out.append(f"| {cell(name, True)} | {cell(desc)} |")
    return out


def param_table(lines):
    header, rows = lines[0], [l for l in lines[2:] if l.strip()]
    indent = len(header) - len(header.lstrip())
    cols = split_columns([header] + rows, 4, indent)
    out = ["| " + " | ".join(cols[0]) + " |", "|---|---|---|---|"]
    for c in cols[1:]:
        c = c + [""] * (4 - len(c))
        out.append(f"| {cell(c[0], True)} | {cell(c[1])} | {cell(c[2], True)} | {cell(c[3])} |")
    return out


md = [
    "# Scenario keys",
    "",
    "Every key a scenario file takes, with its type, default and meaning, as this build of podnet",
    "lists them (`podnet list`). This page is generated from the same key lists the loader checks;",
    "it is never edited by hand. The scenario file's layout is on [Scenario files](scenario.md).",
    "",
]
paras = [p.split("\n") for p in re.split(r"\n\s*\n", text.strip("\n"))]
failures = False
for p in paras:
    if failures:
        md += ["```text"] + p + ["```", ""]
        continue
    if not p[0].startswith(" "):
        # A heading, possibly over two lines, possibly followed by a two-column table.
        k = 0
        while k < len(p) and not p[k].startswith(" ") and not p[k].rstrip().endswith(":"):
            k += 1
        head = " ".join(x.strip() for x in p[: k + 1]).rstrip(":")
        md += ["## " + cell(head), ""]
        if head.startswith("Failures"):
            failures = True
            if p[k + 1 :]:
                md += ["```text"] + p[k + 1 :] + ["```", ""]
            continue
        if p[k + 1 :]:
            md += two_column(p[k + 1 :]) + [""]
        continue
    if len(p) >= 3 and set(p[2].strip()) == {"-"}:
        # A sub-heading and its parameter table.
        m = re.match(r"^\s*(\S+?)(?: - |: )(.*)$", p[0])
        name, desc = (m.group(1), m.group(2)) if m else (p[0].strip(), "")
        md += [f"### {name}", "", cell(desc), ""] + param_table(p[1:]) + [""]
    else:
        md += two_column(p) + [""]

open(dst, "w", encoding="utf-8").write("\n".join(md).rstrip("\n") + "\n")
PY
fi

# The result field reference (reference/result-fields.md), from the study registry; never committed either.
"$podnet" list results --format markdown >"$out/docs/reference/result-fields.md"

cd "$out"
PYTHONWARNINGS=ignore::DeprecationWarning mkdocs build --strict --site-dir "$out/site"

# MkDocs 1.4 checks that a linked page exists, not the #anchor after it:
# every in-page link of the built site must name an id its page has.
python3 - "$out/site" <<'PY'
"""Every link with an #anchor inside a page's article names an id of its target page."""
import os,re,sys,html
site=sys.argv[1]
ids={}
bad=[]
for root,_,files in os.walk(site):
    for f in files:
        if f.endswith('.html'):
            p=os.path.join(root,f)
            ids[os.path.normpath(p)]=set(re.findall(r'\sid="([^"]+)"',open(p,encoding='utf-8').read()))
for p in ids:
    s=open(p,encoding='utf-8').read()
    # only links inside the article
    m=re.search(r'<article.*?</article>',s,re.S)
    if not m: continue
    for href in re.findall(r'href="([^"#:]*\.html)?#([^"]+)"',m.group(0)):
        target=os.path.normpath(os.path.join(os.path.dirname(p),href[0])) if href[0] else p
        anchor=html.unescape(href[1])
        if target not in ids: bad.append(f'{os.path.relpath(p,site)}: {href[0]}#{anchor}: no such page'); continue
        if anchor not in ids[target]: bad.append(f'{os.path.relpath(p,site)}: {href[0]}#{anchor}: no such anchor')
for b in sorted(set(bad)): print(b)
sys.exit(1 if bad else 0)
PY
echo "docs-site: $out/site/index.html"
