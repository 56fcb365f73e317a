#!/bin/sh
# layer-graph.sh [SOURCE_DIR] > layers.dot: the include graph between the
# layers of src/, drawn from the code, as Graphviz DOT (`dot -Tsvg`).
# An edge A -> B: files of layer A include headers of layer B; its label is
# how many include lines do. Layers of one rank (scripts/check-layers.sh
# --order) share a row; dot draws each edge downwards, so core ends at the
# bottom.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
root="${1:-$(cd "$here/.." && pwd)}"
cd "$root"
{
  sh "$here/check-layers.sh" --order | sed 's/^/#rank /'
  for d in src/*/; do echo "#folder $(basename "$d")"; done
  grep -rnE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cc' \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' src || true
} | awk '
  /^#rank / { rank[$3] = $2 + 0; next }
  /^#folder / { folder[$2] = 1; next }
  {
    file = $0; sub(/:.*/, "", file)
    split(file, f, "/"); from = f[2]
    inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
    split(inc, t, "/"); to = t[1]
    if (to != from && (to in folder)) count[from, to]++
  }
  END {
    print "digraph podnet_layers {"
    print "  rankdir=TB;"
    print "  node [shape=box, fontname=\"Helvetica\"];"
    # one row per rank, in rank order
    maxr = -1
    for (l in folder) { r = (l in rank) ? rank[l] : 99; if (r > maxr) maxr = r; byrank[r] = byrank[r] " \"" l "\";" }
    for (r = 0; r <= maxr; ++r) if (r in byrank) print "  { rank=same;" byrank[r] " }"
    n = 0
    for (k in count) keys[++n] = k
    # sorted edges, so the output is diff-stable
    for (i = 2; i <= n; ++i) { v = keys[i]; j = i - 1; while (j > 0 && keys[j] > v) { keys[j + 1] = keys[j]; --j } keys[j + 1] = v }
    for (i = 1; i <= n; ++i) {
      split(keys[i], ab, SUBSEP)
      print "  \"" ab[1] "\" -> \"" ab[2] "\" [label=\"" count[keys[i]] "\"];"
    }
    print "}"
  }'
