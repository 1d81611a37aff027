#!/usr/bin/env python3
"""Kendall's tau between the results of brute-forced spaces of one kernel, pair by pair.

How far two devices' results rank the configurations alike (failures last): the agreement that
ktune's priors are judged by before a study has results (docs/benchmarks/transfer.md, "Priors
judged by each other"). Usage: python3 bench/prior_agreement.py SPACE.json.gz ... [--shuffled]

Standard library only; tau on at most 1,000 shared configurations per pair (evenly spaced),
exactly, as ktune-strategies/src/transfer.rs computes it. --shuffled adds a row for a copy of
the first space with its values shuffled (seed 0).
"""
import gzip
import json
import random
import sys

SAMPLE = 1000


def results(path):
    with gzip.open(path) if path.endswith(".gz") else open(path) as f:
        cache = json.load(f)["cache"]
    out = {}
    for key, record in cache.items():
        t = record.get("time")
        out[key] = t if isinstance(t, (int, float)) else float("inf")
    return out


def tau(a, b):
    shared = sorted(set(a) & set(b))
    step = max(1, -(-len(shared) // SAMPLE))
    pairs = [(a[k], b[k]) for k in shared[::step]]
    concordant = discordant = 0
    for i, (x1, y1) in enumerate(pairs):
        for x2, y2 in pairs[i + 1:]:
            s = (x1 > x2) - (x1 < x2)
            t = (y1 > y2) - (y1 < y2)
            if s * t > 0:
                concordant += 1
            elif s * t < 0:
                discordant += 1
    n = concordant + discordant
    return (concordant - discordant) / n if n else float("nan")


def main(argv):
    shuffled = "--shuffled" in argv
    paths = [a for a in argv if a != "--shuffled"]
    if len(paths) < 2:
        sys.exit(__doc__)
    names = [p.rsplit("/", 1)[-1].split(".json")[0] for p in paths]
    spaces = [results(p) for p in paths]
    if shuffled:
        keys = list(spaces[0])
        values = [spaces[0][k] for k in keys]
        random.Random(0).shuffle(values)
        names.append(names[0] + " (shuffled)")
        spaces.append(dict(zip(keys, values)))
    print("| tau with | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for i, a in enumerate(spaces):
        row = ["" if i == j else f"{tau(a, b):.2f}" for j, b in enumerate(spaces)]
        print(f"| {names[i]} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
