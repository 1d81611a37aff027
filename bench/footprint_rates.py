#!/usr/bin/env python3
"""How often configurations fail by their footprint: the log2 of the product of their sizes
(numeric parameters of three or more positive values, as `bayes_opt`'s `footprint` option
computes it, rounded down), per brute-forced Kernel Tuner cache.

    python3 bench/footprint_rates.py ../shared/data/spaces/convolution_{W7800,A6000}.json.gz

prints, per space, `log2: configurations / failing` for each footprint (docs/benchmarks/auto.md,
"A footprint for the forest").
"""
import math
import sys
from collections import defaultdict

from kt_cache import load, name, ran


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        data = load(path)
        params = data["tune_params"]
        sizes = [
            k for k, vs in params.items()
            if len(vs) >= 3 and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in vs)
        ]
        running = ran(data)
        bins = defaultdict(lambda: [0, 0])
        for key, rec in data["cache"].items():
            b = int(math.floor(sum(math.log2(float(rec[k])) for k in sizes) + 1e-9))
            bins[b][0] += 1
            bins[b][1] += key not in running
        print(f"{name(path)} (sizes: {', '.join(sizes)})")
        print("  " + "  ".join(f"{b}: {n} / {f}" for b, (n, f) in sorted(bins.items())))


if __name__ == "__main__":
    main()
