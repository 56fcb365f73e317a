#!/usr/bin/env python3
"""Checks a podnet training trace (Chrome/Perfetto JSON) the way Perfetto reads it.

Perfetto's JSON importer converts a number `ts` or `dur` in microseconds to
integer nanoseconds by truncation, int64(value * 1000.0)
(src/trace_processor/importers/json/json_utils.cc, CoerceToTs, in
google/perfetto). A complete ("X") slice spans [ts_ns, ts_ns + dur_ns). On one
thread track slices must nest: a slice that begins inside its predecessor but
ends after it is an overlap, and Perfetto drops it; at equal starts the file's
order counts (a longer slice after a shorter one with the same ts is one too) (the import error
"misplaced_end_event" / "slice_out_of_order"). This script fails on any such
pair, on a negative duration, on slices with no pid/tid, and prints the count.
Flow arrows (ph "s" / "f", the trace-event format's flow events): each id has
one "s" and one "f" with the same cat and name, the "f" not before the "s",
and each lies inside an X slice of its own (pid, tid) track (the slice it
binds to). Counters (ph "C"): numeric args, times non-decreasing per track.

Usage: check_trace.py TRACE.json [--require-args]
  --require-args: every X slice carries args kind and group (str), and
                  bytes and peers (int) unless its kind is "compute".
Standard library only.
"""
import json
import sys


def ns(value):
    # Perfetto: static_cast<int64_t>(double * 1000.0); Python's int() also truncates toward zero.
    return int(float(value) * 1000.0)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[1]
    require_args = "--require-args" in argv[2:]
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    tracks = {}
    errors = []
    slices = 0
    flows = {}
    counters = {}
    for i, e in enumerate(events):
        if e.get("ph") in ("s", "f"):
            flows.setdefault(e.get("id"), []).append((i, e))
            continue
        if e.get("ph") == "C":
            counters.setdefault((e.get("pid"), e.get("name")), []).append((i, e))
            continue
        if e.get("ph") != "X":
            continue
        slices += 1
        if "pid" not in e or "tid" not in e:
            errors.append(f"event {i}: X slice without pid/tid")
            continue
        start = ns(e["ts"])
        dur = ns(e["dur"])
        if dur < 0:
            errors.append(f"event {i} ({e.get('name')}): negative dur {e['dur']}")
        if not isinstance(e["ts"], int) and ns(e["ts"]) != round(float(e["ts"]) * 1000.0):
            errors.append(f"event {i} ({e.get('name')}): ts {e['ts']} us does not truncate to a whole ns")
        if require_args:
            a = e.get("args", {})
            keys = [("kind", str), ("group", str)]
            if a.get("kind") != "compute":
                keys += [("bytes", int), ("peers", int)]
            for key, kind in keys:
                if not isinstance(a.get(key), kind):
                    errors.append(f"event {i} ({e.get('name')}): args.{key} missing or not {kind.__name__}")
        tracks.setdefault((e["pid"], e["tid"]), []).append((start, start + dur, i, e.get("name")))
    overlaps = 0
    for key in sorted(tracks):
        # Perfetto orders a track's slices by start and, at equal starts, keeps the file's order: a slice
        # after a shorter one with the same start ends after it, and is dropped as improperly nested.
        spans = sorted(tracks[key], key=lambda s: (s[0], s[2]))
        stack = []  # open enclosing slices (end times), Perfetto's nesting
        for start, end, i, name in spans:
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack and end > stack[-1][0]:
                overlaps += 1
                if overlaps <= 10:
                    errors.append(f"track pid={key[0]} tid={key[1]}: event {i} ({name}) [{start}, {end}) ns "
                                  f"overlaps event {stack[-1][1]} ending at {stack[-1][0]} ns")
                continue
            stack.append((end, i))
    def inside(e):
        t = ns(e["ts"])
        return any(start <= t <= end for start, end, _, _ in tracks.get((e.get("pid"), e.get("tid")), []))

    for fid, evs in sorted(flows.items(), key=lambda x: str(x[0])):
        phases = sorted(e["ph"] for _, e in evs)
        if phases != ["f", "s"]:
            errors.append(f"flow id {fid}: events {phases}, expected one s and one f")
            continue
        s = next(e for _, e in evs if e["ph"] == "s")
        f = next(e for _, e in evs if e["ph"] == "f")
        if (s.get("cat"), s.get("name")) != (f.get("cat"), f.get("name")):
            errors.append(f"flow id {fid}: s and f differ in cat or name")
        if ns(f["ts"]) < ns(s["ts"]):
            errors.append(f"flow id {fid}: f at {f['ts']} us before s at {s['ts']} us")
        for e in (s, f):
            if not inside(e):
                errors.append(f"flow id {fid}: {e['ph']} at {e['ts']} us is inside no slice of pid={e.get('pid')} "
                              f"tid={e.get('tid')}")
    samples = 0
    for key, evs in sorted(counters.items(), key=lambda x: str(x[0])):
        last = None
        for i, e in evs:
            samples += 1
            args = e.get("args", {})
            if not args or not all(isinstance(v, (int, float)) for v in args.values()):
                errors.append(f"event {i}: counter {key[1]} without numeric args")
            t = ns(e["ts"])
            if last is not None and t < last:
                errors.append(f"event {i}: counter {key[1]} goes back in time ({t} < {last} ns)")
            last = t
    print(f"{path}: {slices} slices on {len(tracks)} tracks, {overlaps} overlapping; {len(flows)} flow arrows; "
          f"{len(counters)} counter tracks ({samples} samples)")
    if slices == 0:
        errors.append("no X slices in the trace")
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
