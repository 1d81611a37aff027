#!/usr/bin/env python3
"""How many evaluations each strategy needs to come within a fraction of a space's optimum
(minimised objectives): the median and the worst over its runs, per space. Reads JSON Lines
traces (`ktune bench`, or any tool's in that format) and the spaces' Kernel Tuner cache files;
a run that never gets there counts as its length + 1.

    python3 bench/evals_to_target.py [--within 0.05] TRACES.jsonl... SPACES.json.gz...

docs/benchmarks/transfer.md ("Problem sizes") cites its output.
"""

import argparse
import json
import statistics
from collections import defaultdict

from kt_cache import load, name, ran


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--within", type=float, default=0.05)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    traces = [f for f in args.files if f.endswith(".jsonl")]
    optimum = {
        name(f): min(rec["time"] for rec in ran(load(f)).values())
        for f in args.files
        if not f.endswith(".jsonl")
    }
    needed = defaultdict(list)
    for path in traces:
        for line in open(path):
            t = json.loads(line)
            if t["space"] not in optimum:
                continue
            limit = optimum[t["space"]] * (1 + args.within)
            best, hit = float("inf"), len(t["values"]) + 1
            for i, v in enumerate(t["values"]):
                best = min(best, v if v is not None else float("inf"))
                if best <= limit:
                    hit = i + 1
                    break
            needed[(t["strategy"], t["space"])].append(hit)
    print(f"| strategy | space | runs | median evaluations to within {args.within:.0%} | worst |")
    print("|---|---|---:|---:|---:|")
    for (strategy, space), hits in sorted(needed.items()):
        print(f"| {strategy} | {space} | {len(hits)} | {statistics.median(hits):g} | {max(hits)} |")


if __name__ == "__main__":
    main()
