#!/usr/bin/env python3
"""Where runs stand on one brute-forced space: the mean best-found / optimum at a few budgets,
and after N evaluations which configurations the runs' best are (how many runs share a trap).

Reads ktune (or any tool's) JSON Lines traces and the space's Kernel Tuner cache file; a
configuration is recovered from its recorded value (the cache's values are distinct).
BENCHMARKS.md (issue 18, "Why convolution_A4000 is still lost") cites its output.

    python3 bench/best_at.py ../shared/data/spaces/convolution_A4000.json.gz 120 \\
        traces.jsonl:auto other.jsonl:simulated_annealing
"""

import gzip
import json
import math
import sys
from collections import Counter

CHECKPOINTS = [10, 20, 40, 60, 100, 150, 200, 268]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    cache_path, at = sys.argv[1], int(sys.argv[2])
    opener = gzip.open if cache_path.endswith(".gz") else open
    with opener(cache_path, "rt") as f:
        cache = json.load(f)
    space = cache_path.rsplit("/", 1)[-1].split(".json")[0]
    by_value = {}
    for key, rec in cache["cache"].items():
        t = rec.get("time")
        if isinstance(t, (int, float)) and math.isfinite(t):
            by_value[t] = key
    optimum = min(by_value)
    for spec in sys.argv[3:]:
        path, strategy = spec.rsplit(":", 1) if ":" in spec else (spec, None)
        runs = []
        with open(path) as f:
            for line in f:
                t = json.loads(line)
                if t["space"] == space and (strategy is None or t["strategy"] == strategy):
                    vals = [v if isinstance(v, (int, float)) and math.isfinite(v) else math.inf for v in t["values"]]
                    best, curve = math.inf, []
                    for v in vals:
                        best = min(best, v)
                        curve.append(best)
                    runs.append(curve)
        if not runs:
            print(f"{spec}: no runs on {space}")
            continue
        means = []
        for c in CHECKPOINTS:
            xs = [r[min(c, len(r)) - 1] for r in runs]
            finite = [x for x in xs if x < math.inf]
            means.append(f"{c}:{sum(finite) / len(finite) / optimum:.3f}" if finite else f"{c}:-")
        print(f"{spec} ({len(runs)} runs) best/optimum at " + " ".join(means))
        at_n = Counter(r[min(at, len(r)) - 1] for r in runs)
        for value, n in sorted(at_n.items()):
            print(f"  {n:3d} runs at {value / optimum:.3f} x optimum: {by_value.get(value, '?')}")


if __name__ == "__main__":
    main()
