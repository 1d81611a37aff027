#!/usr/bin/env python3
"""One prior at a time, against cold: reads `ktune bench score`'s per-space table of traces
made with `ktune bench --transfer each` (rows `STRATEGY/from-SOURCE`) beside cold traces
(rows `STRATEGY`), and prints, per strategy, the mean score over all (target, source) pairs
and every pair more than two standard errors below the cold strategy on its target.

    python3 bench/transfer_pairs.py [--cold LABEL] KTUNE TRACES... SPACES...

`--cold LABEL` compares every strategy with the cold runs labelled LABEL (e.g. the pairs of
`auto:prior_first=3` with cold `auto`); by default each with its own name.
"""
import re
import subprocess
import sys


def main():
    args = sys.argv[1:]
    cold_label = None
    if args[:1] == ["--cold"]:
        cold_label, args = args[1], args[2:]
    ktune, files = args[0], args[1:]
    out = subprocess.run([ktune, "bench", "score", *files], check=True,
                         capture_output=True, text=True).stdout
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("### Performance score per space"))
    header = [c.strip() for c in lines[start + 2].strip("|").split("|")]
    spaces = header[1:]
    cells = {}
    for l in lines[start + 4:]:
        if not l.startswith("|"):
            break
        row = [c.strip() for c in l.strip("|").split("|")]
        label = row[0].split("/", 1)[1] if "/" in row[0] else row[0]
        for space, cell in zip(spaces, row[1:]):
            # One run has no standard error: 0 for it.
            m = re.match(r"(-?[0-9.]+)(?: ± ([0-9.]+))?$", cell)
            if m:
                cells[(label, space)] = (float(m.group(1)), float(m.group(2) or 0))
    strategies = sorted({l.split("/from-")[0] for l, _ in cells if "/from-" in l})
    for s in strategies:
        pairs = [(sp, l.split("/from-")[1], v) for (l, sp), v in cells.items()
                 if l.startswith(s + "/from-")]
        mean = sum(v[0] for _, _, v in pairs) / len(pairs)
        print(f"{s}: mean over {len(pairs)} (target, source) pairs {mean:.3f}")
        cold = {sp: v for (l, sp), v in cells.items() if l == (cold_label or s)}
        if not cold:
            continue
        cold_mean = sum(cold[sp][0] for sp, _, _ in pairs) / len(pairs)
        print(f"  cold {cold_label or s} over the same targets: {cold_mean:.3f}")
        below = [(sp, src, v, cold[sp]) for sp, src, v in pairs
                 if v[0] < cold[sp][0] - 2 * (v[1] ** 2 + cold[sp][1] ** 2) ** 0.5]
        print(f"  pairs more than 2 SE below cold: {len(below)}")
        for sp, src, v, c in sorted(below):
            print(f"    {sp} from {src}: {v[0]:.3f} ± {v[1]:.3f}, cold {c[0]:.3f} ± {c[1]:.3f}")


if __name__ == "__main__":
    main()
