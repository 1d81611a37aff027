#!/usr/bin/env python3
"""Issue 18: the default strategy against the best other ktune strategy, per space.

Reads the per-space tables ("mean ± standard error") of one or more `ktune bench score`
outputs and prints, per space, the default's score, the best other ktune strategy's (random
excluded), and their difference in combined standard errors,
(default - best) / sqrt(se_default^2 + se_best^2); a loss by more than two is marked.
When a strategy appears in several files, the first file's row is used. Rows of the
default's own variants (`auto:...`) are left out of "other".

    python3 bench/default_vs_best.py auto bench/results/auto/scores-20seeds.md [more.md ...]
"""
import math
import sys


def per_space(path):
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("### Performance score per space"))
    header = next(l for l in lines[start:] if l.startswith("| tool/strategy"))
    spaces = [c.strip() for c in header.strip("|").split("|")][1:]
    rows = {}
    i = lines.index(header, start) + 2
    while i < len(lines) and lines[i].startswith("|"):
        cells = [c.strip() for c in lines[i].strip("|").split("|")]
        name = cells[0].split("/", 1)[1] if "/" in cells[0] else cells[0]
        if cells[0].startswith("ktune"):
            rows[name] = {
                s: tuple(float(x) for x in c.split("±")) for s, c in zip(spaces, cells[1:]) if "±" in c
            }
        i += 1
    return spaces, rows


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    default, files = sys.argv[1], sys.argv[2:]
    spaces, rows = None, {}
    for f in files:
        s, r = per_space(f)
        spaces = spaces or s
        for k, v in r.items():
            rows.setdefault(k, v)
    if default not in rows:
        sys.exit(f"no row for `{default}` in {files}")
    mine = rows[default]
    print(f"| space | `{default}` | best other | its score | difference (combined SE) |")
    print("|---|---:|---|---:|---:|")
    losses = 0
    for s in spaces:
        # Variants of the default (`auto:...`, e.g. its previous options) are not other
        # strategies.
        others = [
            (k, v[s])
            for k, v in rows.items()
            if k != default and not k.startswith(default + ":") and k != "random" and s in v
        ]
        name, (m, se) = max(others, key=lambda kv: kv[1][0])
        dm, dse = mine[s]
        z = (dm - m) / math.sqrt(dse**2 + se**2) if dse or se else 0.0
        mark = " **✗**" if z < -2 else ""
        losses += z < -2
        print(f"| {s} | {dm:.3f} ± {dse:.3f} | `{name}` | {m:.3f} ± {se:.3f} | {z:+.1f}{mark} |")
    print(f"\nLosses by more than two combined standard errors: {losses} of {len(spaces)}.")


if __name__ == "__main__":
    main()
