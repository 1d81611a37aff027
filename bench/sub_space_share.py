#!/usr/bin/env python3
"""The share the switches' sub-spaces have in common, estimated from traced runs as `auto`'s
model estimates it (`sub_spaces = "estimated"`, crates/ktune-strategies/src/model_based/
sub_spaces.rs): over a run's first N results, the pairs of valid results whose configurations
differ only in their switches give 1 - sum(d^2) / (2 var(y) (pairs + 4)), at least 0.25, on
the log of the results. Switches are the parameters of two values or of values that are not
numbers, as `roles.rs` says. Prints per strategy and space the median estimate, and the share
of runs below 0.9, at each N.

    ktune bench --strategies auto --seeds 20 --budget 120 --trace-configs --out D SPACES...
    python3 bench/sub_space_share.py D/traces.jsonl SPACES... [--at 20,40,80,120]
"""

import argparse
import gzip
import json
import math
import statistics
from collections import defaultdict

PRIOR_PAIRS = 4.0
LOWEST_SHARE = 0.25


def switches_of(cache_path):
    opener = gzip.open if cache_path.endswith(".gz") else open
    with opener(cache_path, "rt") as f:
        params = json.load(f)["tune_params"]

    def is_number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    return {
        name
        for name, values in params.items()
        if len(values) > 1 and (len(values) == 2 or not all(is_number(v) for v in values))
    }


def estimate(trace, switches, n):
    params = trace["meta"]["params"]
    sw = {i for i, p in enumerate(params) if p in switches}
    points = [
        (c.split(","), math.log(v))
        for c, v in zip(trace["meta"]["configs"][:n], trace["values"][:n])
        if v is not None and v > 0
    ]
    if len(points) < 3 or not sw:
        return None
    variance = statistics.pvariance([y for _, y in points])
    if variance <= 0:
        return None
    groups = defaultdict(list)
    for c, y in points:
        groups[tuple(x for i, x in enumerate(c) if i not in sw)].append(y)
    diffs = [g[a] - g[b] for g in groups.values() for a in range(len(g)) for b in range(a + 1, len(g))]
    if not diffs:
        return None
    share = 1 - sum(d * d for d in diffs) / (2 * variance * (len(diffs) + PRIOR_PAIRS))
    return min(1.0, max(LOWEST_SHARE, share))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="traces written with --trace-configs, and the spaces' cache files")
    ap.add_argument("--at", default="20,40,80,120", help="numbers of evaluations to estimate after")
    args = ap.parse_args()
    at = [int(x) for x in args.at.split(",")]
    traces = [f for f in args.files if f.endswith(".jsonl")]
    caches = [f for f in args.files if not f.endswith(".jsonl")]
    switches = {}
    for c in caches:
        name = c.rsplit("/", 1)[-1].split(".json")[0]
        switches[name] = switches_of(c)
    table = defaultdict(lambda: defaultdict(list))
    for path in traces:
        for line in open(path):
            t = json.loads(line)
            if t["space"] not in switches or "configs" not in t["meta"]:
                continue
            for n in at:
                # No pair yet: the model keeps the stationary kernel (1).
                e = estimate(t, switches[t["space"]], n)
                table[(t["strategy"], t["space"])][n].append(1.0 if e is None else e)
    print("| strategy | space | " + " | ".join(f"median @{n} (below 0.9)" for n in at) + " |")
    print("|---|---|" + "---:|" * len(at))
    for (strategy, space), by_n in sorted(table.items()):
        cells = []
        for n in at:
            v = by_n[n]
            cells.append(f"{statistics.median(v):.2f} ({sum(x < 0.9 for x in v) / len(v):.0%})")
        print(f"| {strategy} | {space} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
