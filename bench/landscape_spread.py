#!/usr/bin/env python3
"""The spread of each brute-forced space's objective on a log scale.

For each space (Kernel Tuner cache format, gzipped or not): the population standard
deviation of ln(objective) over every configuration that ran, the ratio of the 90th to the
10th percentile, and median / optimum. `auto`'s landscape judgement (`smooth_below`) was set
between the two kernels' ranges of the first column (BENCHMARKS.md, issue 18).

    python3 bench/landscape_spread.py ../shared/data/spaces/*.json.gz [--objective time]
"""

import argparse
import math
import statistics
import sys
from pathlib import Path

from kt_cache import load, name, ran


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spaces", nargs="+", type=Path)
    ap.add_argument("--objective", default="time")
    args = ap.parse_args()
    print("| space | configurations run | sd of ln | p90 / p10 | median / optimum |")
    print("|---|---:|---:|---:|---:|")
    for path in args.spaces:
        values = [
            v[args.objective]
            for v in ran(load(path), args.objective).values()
            if 0 < v[args.objective] < 1e20
        ]
        if len(values) < 2:
            print(f"{path}: fewer than two configurations ran", file=sys.stderr)
            continue
        logs = [math.log(v) for v in values]
        deciles = statistics.quantiles(values, n=10)
        print(
            f"| {name(path)} | {len(values)} | {statistics.pstdev(logs):.2f} | "
            f"{deciles[-1] / deciles[0]:.2f} | {statistics.median(values) / min(values):.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
