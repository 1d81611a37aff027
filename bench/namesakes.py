#!/usr/bin/env python3
"""Issue 20: every ktune strategy against its Kernel Tuner namesake, per space.

Reads the per-space table ("mean ± standard error") of a `ktune bench score` output that holds
both tools' runs, and prints a markdown table: per space ktune's score, Kernel Tuner's, and
the difference in combined standard errors, (ours - theirs) / sqrt(se_ours^2 + se_theirs^2);
cells below -2 (a loss by more than two combined standard errors) are marked.

    python3 bench/namesakes.py bench/results/vs-kernel-tuner-20/scores.md
"""
import math
import re
import sys

PAIRS = [
    ("random", "random_sample"),
    ("simulated_annealing", "simulated_annealing"),
    ("mls", "mls"),
    ("greedy_ils", "greedy_ils"),
    ("diff_evo", "diff_evo"),
    ("pso", "pso"),
    ("firefly_algorithm", "firefly_algorithm"),
    ("genetic_algorithm", "genetic_algorithm"),
]


def per_space(path):
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("### Performance score per space"))
    header = next(l for l in lines[start:] if l.startswith("| tool/strategy"))
    spaces = [c.strip() for c in header.strip("|").split("|")[1:]]
    rows = {}
    for l in lines[lines.index(header) + 2:]:
        if not l.startswith("|"):
            break
        cells = [c.strip() for c in l.strip("|").split("|")]
        vals = []
        for c in cells[1:]:
            m = re.match(r"(-?[0-9.]+) ± ([0-9.]+)", c)
            vals.append((float(m.group(1)), float(m.group(2))) if m else None)
        rows[cells[0]] = vals
    return spaces, rows


def main():
    spaces, rows = per_space(sys.argv[1])
    ours = {k.split("/", 1)[1]: v for k, v in rows.items() if k.startswith("ktune-")}
    theirs = {k.split("/", 1)[1]: v for k, v in rows.items() if k.startswith("kernel_tuner-")}
    short = [s.replace("convolution_", "conv ").replace("dedispersion_", "dedisp ") for s in spaces]
    print("| strategy | " + " | ".join(short) + " | mean | losses > 2 SE |")
    print("|---|" + "---:|" * (len(spaces) + 2))
    for a, b in PAIRS:
        if a not in ours or b not in theirs:
            continue
        cells, losses = [], 0
        for (m1, s1), (m2, s2) in zip(ours[a], theirs[b]):
            z = (m1 - m2) / math.sqrt(s1 * s1 + s2 * s2) if s1 or s2 else 0.0
            mark = " **✗**" if z < -2 else ""
            losses += z < -2
            cells.append(f"{m1:.3f} / {m2:.3f} ({z:+.1f}){mark}")
        mean1 = sum(m for m, _ in ours[a]) / len(spaces)
        mean2 = sum(m for m, _ in theirs[b]) / len(spaces)
        print(f"| `{a}` | " + " | ".join(cells) + f" | {mean1:.3f} / {mean2:.3f} | {losses} |")


if __name__ == "__main__":
    main()
