#!/usr/bin/env python3
"""The spread of one strategy's scores across seeds, per space, as issue 50's bar reads it.

Scores every run with the reference scorer (as `bench/paired.py` does) and prints, per space,
the runs, the mean score and the standard deviation over the runs divided by √20: the
standard error 20 seeds have on average, read from however many seeds ran (100 or 200 give
a steadier figure than 20 alone).

    target/peer-venv/bin/python bench/spread.py TRACES... STRATEGY [--space CACHE ...]
        [--subsets N [--bar X]]

`--space CACHE` (repeatable) adds a cache file beyond the shared spaces, e.g. the limit
variants of `bench/failing_spaces.py`. Several trace files (e.g. two seed sets of the same
strategy) are read as one; a seed in two of them counts once.

`--subsets N` also prints what a measurement with only N seeds would read: the standard error
(SD / √N) of each disjoint set of N seeds in seed order, and the median over 20,000 random
N-seed subsets (seeded, so the output is repeatable). With `--bar X`, how many of the
disjoint sets and which share of the random subsets read X or less. A spread dominated by a
few rare bad runs reads very differently from one N-seed set to the next.
"""
import json
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paired import runs, stats_for, take_spaces, take_value  # noqa: E402


def se(xs):
    return statistics.stdev(xs) / len(xs) ** 0.5


def subsets(xs, n, bar):
    disjoint = [se(xs[i : i + n]) for i in range(0, len(xs) - n + 1, n)]
    rng = random.Random(1)
    drawn = [se(rng.sample(xs, n)) for _ in range(20000)]
    line = f"  {n}-seed sets in seed order: {' '.join(f'{s:.3f}' for s in disjoint)}"
    line += f"; median of random {n}-seed subsets {statistics.median(drawn):.3f}"
    if bar is not None:
        within = sum(s <= bar for s in disjoint)
        share = sum(s <= bar for s in drawn) / len(drawn)
        line += f"; within {bar}: {within} of {len(disjoint)} sets, {share:.0%} of subsets"
    return line


def main():
    args = sys.argv[1:]
    extra = take_spaces(args)
    n = take_value(args, "--subsets", int)
    bar = take_value(args, "--bar", float)
    if len(args) < 2 or (n is not None and n < 2) or (bar is not None and n is None):
        sys.exit(__doc__)
    *paths, strategy = args
    stats = stats_for(extra)
    scores = {}
    for path in paths:
        for key, s in runs(path, strategy, stats).items():
            scores.setdefault(key, s)
    by_space = {}
    for (space, _), s in sorted(scores.items()):
        by_space.setdefault(space, []).append(s)
    for space, xs in sorted(by_space.items()):
        if len(xs) < 2:
            continue
        print(f"{space}: {len(xs)} runs, mean {statistics.mean(xs):.3f}, spread {statistics.stdev(xs) / 20 ** 0.5:.3f}")
        if n is not None and len(xs) >= n:
            print(subsets(xs, n, bar))


if __name__ == "__main__":
    main()
