#!/usr/bin/env python3
"""Checks the result documents' JSON Schema (`podnet list results --schema`, one per study, generated from
the study registry's declared fields) with the python-jsonschema validator (Debian's python3-jsonschema):

1. the document is a valid draft 2020-12 schema, with one schema per study;
2. every golden run's JSON (tests/golden/*/expected.json and design.json) validates against its study's
   schema: the study is the run's command (`run.command`), and `jobs` for a training run of several jobs;
   every study with a golden run is covered;
3. fresh `--format json` outputs of the studies without a golden run (sweep's and the dashboard's
   quick runs: bench on the analytical engine, a small train) validate too;
4. each broken document below fails: a declared field removed, a number given as text, a row without its
   size. So the schema is the contract the front ends read, and a renamed key fails here.

Usage: check_result_schema.py PODNET SOURCE_DIR OUT_DIR
"""
import copy
import glob
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError as e:
    sys.exit(f"check_result_schema: {e}: install python3-jsonschema (scripts/setup.sh)")

podnet, src, out = sys.argv[1:4]
schemas = json.loads(
    subprocess.run([podnet, "list", "results", "--schema"], check=True, capture_output=True, text=True).stdout)
jsonschema.Draft202012Validator.check_schema(schemas)
studies = schemas["$defs"]
failures = []
for name in ("design", "bench", "train", "reliability", "diagnose", "jobs", "inference", "plan-upgrade"):
    if name not in studies:
        failures.append(f"no schema for the study {name} (have {sorted(studies)})")


def errors(doc, study):
    v = jsonschema.Draft202012Validator(studies[study])
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in v.iter_errors(doc)]


def study_of(doc):
    command = doc["run"]["command"]
    return "jobs" if command == "train" and "jobs" in doc else command


covered = set()
goldens = sorted(glob.glob(os.path.join(src, "tests", "golden", "*", "*.json")))
if len(goldens) < 20:
    failures.append(f"expected 20 or more golden documents, found {len(goldens)}")
docs = {}
for path in goldens:
    doc = json.load(open(path))
    study = study_of(doc)
    where = os.path.relpath(path, src)
    if study not in studies:
        failures.append(f"{where}: no schema for its study {study}")
        continue
    covered.add(study)
    docs.setdefault(study, doc)
    for e in errors(doc, study)[:3]:
        failures.append(f"{where} ({study}): {e}")

# Studies without a golden run, or another of their modes, from a fresh run.
FRESH = {
    "bench-analytical": ["bench", "leafspine-8k", "--engine", "analytical", "--gpus", "0-15", "--min", "1MiB",
                         "--max", "4MiB"],
    "train-small": ["train", "leafspine-8k", "--engine", "analytical", "--set", "workload.model=llama3-8b",
                    "--set", "workload.tp=8", "--set", "workload.dp=2", "--set", "workload.global_batch=16"],
    "diagnose-evaluate": ["diagnose", "leafspine-8k", "--evaluate", "2", "--duration", "20s"],
}
for what, args in FRESH.items():
    run = subprocess.run([podnet] + args + ["--format", "json"], capture_output=True, text=True)
    if run.returncode != 0:
        failures.append(f"{what}: podnet {' '.join(args)} exited {run.returncode}: {run.stderr[-300:]}")
        continue
    doc = json.loads(run.stdout)
    study = study_of(doc)
    covered.add(study)
    for e in errors(doc, study)[:3]:
        failures.append(f"{what} ({study}): {e}")

missing = set(studies) - covered
if missing:
    failures.append(f"no document checked for the studies {sorted(missing)}")

# Broken documents must fail: the schema holds the declared fields.
BROKEN = []
if "design" in docs:
    d = copy.deepcopy(docs["design"])
    del d["cost"]["capex_usd"]
    BROKEN.append(("design without cost.capex_usd", d, "design"))
    d = copy.deepcopy(docs["design"])
    d["bom"]["switches"]["total"] = "many"
    BROKEN.append(("design with a switch count given as text", d, "design"))
if "bench" in docs:
    d = copy.deepcopy(docs["bench"])
    del d["rows"][0]["bytes"]
    BROKEN.append(("bench row without its size", d, "bench"))
if "train" in docs:
    d = copy.deepcopy(docs["train"])
    d["iteration_ms"] = d.pop("iteration_time_ms")
    BROKEN.append(("train with iteration_time_ms renamed", d, "train"))
    d = copy.deepcopy(docs["train"])
    d["schema_version"] = 1
    BROKEN.append(("train of another schema_version", d, "train"))
for what, doc, study in BROKEN:
    if not errors(doc, study):
        failures.append(f"{what}: validates, but must fail")
if len(BROKEN) < 5:
    failures.append(f"only {len(BROKEN)} broken documents built (goldens missing?)")

if failures:
    print("\n".join(failures))
    sys.exit(f"check_result_schema: {len(failures)} failures")
print(f"check_result_schema: {len(goldens)} golden and {len(FRESH)} fresh documents of {len(covered)} studies "
      f"validate; {len(BROKEN)} broken ones fail")
