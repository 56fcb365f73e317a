#!/usr/bin/env python3
"""Checks `podnet list --schema` (the scenario file's JSON Schema) with the
python-jsonschema validator (Debian's python3-jsonschema) and PyYAML
(python3-yaml):

1. the schema itself is a valid draft 2020-12 schema;
2. every built-in example (examples/*.yaml), which podnet loads, validates;
3. each broken scenario below fails validation, and podnet refuses it too
   (`podnet resolve FILE` exits 2), so the schema and the loader agree on
   what is wrong.

Usage: check_schema.py PODNET SOURCE_DIR OUT_DIR
"""
import glob
import json
import os
import subprocess
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:
    sys.exit(f"check_schema: {e}: install python3-jsonschema and python3-yaml (scripts/setup.sh)")

podnet, src, out = sys.argv[1:4]
schema = json.loads(subprocess.run([podnet, "list", "--schema"], check=True, capture_output=True, text=True).stdout)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failures = []

examples = sorted(glob.glob(os.path.join(src, "examples", "*.yaml")))
if len(examples) < 5:
    failures.append(f"expected the 5 built-in examples, found {len(examples)}")
for path in examples:
    errors = [e.message for e in validator.iter_errors(yaml.safe_load(open(path)))]
    if errors:
        failures.append(f"{os.path.basename(path)}: {errors[:3]}")

HEAD = "schema_version: 1\ntopology:\n  family: rail_clos\n  gpus: 64\n"
BROKEN = {
    "unknown top-level key": HEAD + "colour: blue\n",
    "unknown section key": HEAD + "switch:\n  radix_: 64\n",
    "a family's unknown parameter": "schema_version: 1\ntopology:\n  family: fat_tree\n  rails: 8\n",
    "unknown family": "schema_version: 1\ntopology:\n  family: hypercube\n",
    "integer given as text": "schema_version: 1\ntopology:\n  family: rail_clos\n  gpus: lots\n",
    "bandwidth without a unit": HEAD + "server:\n  nic_speed: 400\n",
    "choice not in the list": HEAD + "network:\n  engine: quantum\n",
    "missing topology": "schema_version: 1\n",
    "a job without gpus": HEAD + "jobs:\n  - {name: a}\n",
    "a job's unknown key": HEAD + "jobs:\n  - {gpus: 8, when: 5ms}\n",
    "a job's unknown placement": HEAD + "jobs:\n  - {gpus: 8, placement: best}\n",
    "wrong schema_version": "schema_version: 7\ntopology:\n  family: rail_clos\n",
    "failure entry with an unknown key": HEAD + "failures:\n  - {at: 1ms, link: x, action: down, colour: red}\n",
    "an IPv4 pool that is not a prefix": HEAD + "addressing:\n  link_pool_v4: 10.0.0/8\n",
    "an IPv6 pool where IPv4 is expected": HEAD + "addressing:\n  loopback_pool_v4: fd00::/64\n",
}
for what, text in BROKEN.items():
    path = os.path.join(out, what.replace(" ", "_").replace("'", "") + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    if validator.is_valid(yaml.safe_load(text)):
        failures.append(f"{what}: the schema accepts it")
    status = subprocess.run([podnet, "resolve", path], capture_output=True, text=True).returncode
    if status != 2:
        failures.append(f"{what}: podnet resolve exits {status}, expected 2 (the loader should refuse it too)")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"scenario schema: valid; {len(examples)} examples validate; {len(BROKEN)} broken scenarios refused by both")
