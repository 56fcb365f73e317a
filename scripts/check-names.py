#!/usr/bin/env python3
"""check-names.py SOURCE_DIR SCHEMA_JSON: no layer above a registry compares a registry's name.

An engine, transport, topology family or routing policy is known by what it can do (the registries'
traits: engine/registry.hpp, engine/options.hpp, topology/topology.hpp, routing/policies.hpp), never by
comparing its name: a name compared in a study, a report or a command is a special case that the next
engine or family silently misses. The names are read from the scenario's JSON Schema
(`podnet list --schema`), so a new entry is checked without an edit here.

Flags `X == "name"`, `"name" != X` and the like in src/**/*.{cpp,hpp}, tests and test helpers aside,
outside the files that define the entries. A line that compares another namespace's word (diagnose's
probe mode "packet") says so with `names: not a registry name` in a comment. Exits 1 naming each line.
"""
import json
import pathlib
import re
import sys

# The registries themselves: where each name is defined and mapped to its traits.
REGISTRIES = {
    "src/engine/registry.cpp",
    "src/engine/options.cpp",
    "src/routing/policies.cpp",
    "src/topology/builders.cpp",
    "src/topology/clos.cpp",
    "src/topology/dragonfly.cpp",
    "src/topology/torus.cpp",
    "src/engine/packet/cc/registry.cpp",
}
MARKER = "names: not a registry name"


def names(schema):
    out = set()
    for alt in schema["properties"]["topology"].get("oneOf", []):
        family = alt.get("properties", {}).get("family", {}).get("const")
        if family:
            out.add(family)
    network = schema["properties"]["network"]["properties"]
    for key in ("engine", "transport", "routing"):
        out.update(network[key]["enum"])
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    with open(sys.argv[2]) as f:
        known = names(json.load(f))
    if len(known) < 10:
        sys.exit(f"check-names: only {len(known)} names in the schema ({sorted(known)}); expected the registries'")
    alt = "|".join(sorted(map(re.escape, known)))
    compare = re.compile(rf'(?:[!=]=\s*"({alt})")|(?:"({alt})"\s*[!=]=)')
    bad = []
    for path in sorted(root.glob("src/**/*")):
        rel = path.relative_to(root).as_posix()
        if path.suffix not in (".cpp", ".hpp") or rel in REGISTRIES:
            continue
        if path.name.endswith("_test.cpp") or path.name == "test_util.hpp" or "test_" in path.name:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = compare.search(line)
            if m and MARKER not in line:
                bad.append(f"{rel}:{n}: compares the name \"{m.group(1) or m.group(2)}\": ask the registry's traits")
    if bad:
        print("\n".join(bad))
        print(f"check-names: FAILED ({len(bad)} comparisons of a registry's name outside its registry)")
        return 1
    print(f"check-names: no comparison of the {len(known)} registry names outside the registries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
