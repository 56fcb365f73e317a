#!/bin/sh
# check-layers.sh [SOURCE_DIR]: the layering rule of docs/contributing/architecture.md, checked on
# the code. Run by ctest (test `layering`); exits 1 naming every violation.
#
# Layers, in order (a layer may include and link only layers of a lower
# rank; layers of one rank sit side by side and do not see each other):
#   0 core  1 topology  2 routing  3 plan  4 engine, collective  5 workload
#   6 cluster, reliability, diagnose, telemetry  7 scenario  8 study
#   9 report  10 cli
#
# Checks:
# 1. every `#include "<layer>/..."` of every file under src/<layer>/ (code and
#    tests alike) names its own layer or one of a lower rank;
# 2. every podnet_layer(NAME DEPS...) of cmake/Layers.cmake links only
#    podnet_* layers of a lower rank, and every folder under src/ is a ranked
#    layer with a podnet_layer line;
# 3. what a layer includes is among what it links (its podnet_* dependencies,
#    transitively), so a header-only use cannot hide a missing link;
# 4. above the engine layer, code (not tests) sees an engine through the
#    registry and the engine's own headers (engine/*.hpp: backend, options,
#    packet_view), never its folder (engine/packet/, engine/flow/,
#    engine/analytical/); the packet engine's presets header
#    (engine/packet/packet_options.hpp: the CC and buffer choices a user
#    lists) is the one header open to all.
# Exceptions: an entry FILE:LAYER in `exceptions` below lets FILE include
# LAYER; an entry A>B lets layer A include and link layer B. Each with a
# comment saying why.
# With --order, prints "rank layer" lines (scripts/layer-graph.sh uses them).
set -eu

order="core:0 topology:1 routing:2 plan:3 engine:4 collective:4 workload:5
cluster:6 reliability:6 diagnose:6 telemetry:6 scenario:7 study:8 report:9 cli:10"

# None today: a rule that needs one is a boundary to fix first.
exceptions=""

if [ "${1:-}" = "--order" ]; then
  for e in $order; do echo "${e#*:} ${e%%:*}"; done
  exit 0
fi

root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"
[ -f cmake/Layers.cmake ] || { echo "check-layers: no cmake/Layers.cmake under $root" >&2; exit 2; }

if out=$({
  echo "#order" $order
  echo "#exceptions $exceptions"
  for d in src/*/; do echo "#folder $(basename "$d")"; done
  # podnet_layer(NAME DEPS...) lines, with their line numbers
  grep -n '^ *podnet_layer(' cmake/Layers.cmake | sed 's/^/#cmake /'
  # every quoted include of every file under src/<layer>/
  grep -rnE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cc' \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' src || true
} | awk '
  function fail(msg) { print msg; bad = 1 }
  /^#order / {
    for (i = 2; i <= NF; ++i) { split($i, p, ":"); rank[p[1]] = p[2] + 0 }
    next
  }
  /^#exceptions/ { for (i = 2; i <= NF; ++i) allowed[$i] = 1; next }
  function close_links(   changed, k, ab, c) {
    # transitive closure of the link dependencies
    changed = 1
    while (changed) {
      changed = 0
      for (k in links) {
        split(k, ab, SUBSEP)
        for (c in rank) if (((ab[2], c) in links) && !((ab[1], c) in links)) { links[ab[1], c] = 1; changed = 1 }
      }
    }
    closed = 1
  }
  /^#folder / { folder[$2] = 1; next }
  /^#cmake / {
    line = $2; sub(/:.*/, "", line)
    s = $0; sub(/^[^(]*\(/, "", s); sub(/\).*/, "", s)
    n = split(s, w, /[ \t]+/)
    name = w[1]; layer_line[name] = line
    if (!(name in rank)) { fail("cmake/Layers.cmake:" line ": layer \"" name "\" is not in the layer order (scripts/check-layers.sh)"); next }
    for (i = 2; i <= n; ++i) {
      if (w[i] !~ /^podnet_/) continue
      d = substr(w[i], 8)
      links[name, d] = 1
      if (!(d in rank)) fail("cmake/Layers.cmake:" line ": " name " links unknown layer " d)
      else if ((name ">" d) in allowed) continue
      else if (rank[d] >= rank[name])
        fail("cmake/Layers.cmake:" line ": " name " (rank " rank[name] ") links " d " (rank " rank[d] "), which is not below it")
    }
    next
  }
  {
    # src/<layer>/<path>:<line>:#include "<target>/..."
    file = $0; sub(/:.*/, "", file)
    rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
    split(file, f, "/"); from = f[2]
    inc = rest; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
    split(inc, t, "/"); to = t[1]
    if (to == from || !(to in rank)) next   # own layer, or not a layer (a system path)
    if (!(from in rank)) next               # reported once below, per folder
    if (((file ":" to) in allowed) || ((from ">" to) in allowed)) next
    if (to == "engine" && inc ~ /^engine\/(packet|flow|analytical)\// && inc != "engine/packet/packet_options.hpp" &&
        file !~ /(_test\.cpp|test_util\.hpp)$/)
      fail(file ":" line ": layer " from " includes \"" inc "\", an engine'"'"'s internals: use the registry (engine/registry.hpp) or the views (engine/packet_view.hpp)")
    if (!closed) close_links()
    if (rank[to] >= rank[from])
      fail(file ":" line ": layer " from " (rank " rank[from] ") includes \"" inc "\" of layer " to " (rank " rank[to] "), which is not below it")
    else if (!((from, to) in links))
      fail(file ":" line ": layer " from " includes \"" inc "\" but does not link podnet_" to " (cmake/Layers.cmake)")
  }
  END {
    for (l in folder) {
      if (!(l in rank)) fail("src/" l "/: folder is not a layer in the order (scripts/check-layers.sh)")
      else if (!(l in layer_line)) fail("src/" l "/: no podnet_layer(" l " ...) in cmake/Layers.cmake")
    }
    if (bad) exit 1
  }'); then
  echo "layering: ok ($(printf '%s\n' "$order" | wc -w) layers ranked)"
else
  printf '%s\n' "$out" | sort
  echo "layering: FAILED (rule and order: scripts/check-layers.sh, docs/contributing/architecture.md)"
  exit 1
fi
