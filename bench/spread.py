#!/usr/bin/env python3
"""The spread of one strategy's scores across seeds, per space, as issue 50's bar reads it.

Scores every run with the reference scorer (as `bench/paired.py` does) and prints, per space,
the runs, the mean score and the standard deviation over the runs divided by √20: the
standard error 20 seeds have on average, read from however many seeds ran (100 or 200 give
a steadier figure than 20 alone).

    target/peer-venv/bin/python bench/spread.py TRACES STRATEGY [--space CACHE ...]

`--space CACHE` (repeatable) adds a cache file beyond the shared spaces, e.g. the limit
variants of `bench/failing_spaces.py`.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paired import runs, stats_for, take_spaces  # noqa: E402


def main():
    args = sys.argv[1:]
    extra = take_spaces(args)
    if len(args) != 2:
        sys.exit(__doc__)
    scores = runs(args[0], args[1], stats_for(extra))
    by_space = {}
    for (space, _), s in scores.items():
        by_space.setdefault(space, []).append(s)
    for space, xs in sorted(by_space.items()):
        if len(xs) < 2:
            continue
        print(f"{space}: {len(xs)} runs, mean {statistics.mean(xs):.3f}, spread {statistics.stdev(xs) / 20 ** 0.5:.3f}")


if __name__ == "__main__":
    main()
