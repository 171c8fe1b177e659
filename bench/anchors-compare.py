#!/usr/bin/env python3
"""Side by side: the rows of several bench/anchors_h200.py runs (their anchors.json).

Usage: bench/anchors-compare.py LABEL=DIR/anchors.json [LABEL=...] [--match TEXT]

One line per anchor (the first file's order), its TFLOP/s (TB/s for the copy ceiling) in
each file, and each later file's change of time against the first. An anchor missing from a
file, or one that failed there, shows `error` in that file's column and `n/a` as its change.
"""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return {row["name"]: row for row in json.load(f)}
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"anchors-compare: {path}: not an anchors.json ({e!r})")


def rate(row):
    if "tflops" in row:
        return f"{row['tflops']:8.1f}"
    if "tbps" in row:
        return f"{row['tbps']:8.2f}"
    return f"{'error':>8s}"


def main(argv):
    match = None
    if "--match" in argv:
        i = argv.index("--match")
        if i + 1 == len(argv):
            sys.exit(__doc__)
        match = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if not argv or any("=" not in a for a in argv):
        sys.exit(__doc__)
    runs = [(label, load(path)) for label, path in (a.split("=", 1) for a in argv)]
    first = runs[0][1]
    names = [n for n in first if match is None or match in n]
    print(f"{'anchor':78s} " + " ".join(f"{label:>8s}" for label, _ in runs)
          + "".join(f" {label + ' ms':>12s}" for label, _ in runs[1:]))
    for name in names:
        rows = [r.get(name, {"error": "missing"}) for _, r in runs]
        line = f"{name[:78]:78s} " + " ".join(rate(r) for r in rows)
        base = rows[0].get("ms")
        for r in rows[1:]:
            line += (f" {(r['ms'] / base - 1) * 100:+11.1f}%"
                     if base and "ms" in r else f" {'n/a':>12s}")
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
