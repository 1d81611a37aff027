#!/usr/bin/env python3
"""What proposed each evaluation, and how it went: per strategy, space and origin (the part of
the strategy that proposed it, as `ktune bench --trace-configs` records it), the proposals,
the share that failed and how many were a new best of their run, in phases of the run.

    ktune bench --strategies auto --seeds 30 --budget 120 --trace-configs --out D SPACES...
    python3 bench/origins.py D/traces.jsonl [--phases 10,40] [--space convolution_W7800]
    python3 bench/origins.py --totals D/traces.jsonl     # any traces: failed share per space

An origin is `auto`'s member (`model`, `mls`, `prior`, `front`) and, for the model, what
within it proposed (`model/initial`: its initial sample; `model/ei`, `model/poi`,
`model/lcb`: a round's acquisition function; `model/explore`: the stagnation escape, the
candidate of largest posterior variance; `model/believed`: beyond a round, on fantasised
values); for the local search, how the climb under way began (`mls/start`: a restart's
random sample; `mls/climb`: from a start or the study's best; `mls/kick`, `mls/switch`: from
a random or a switch kick of the best). Evaluations the strategy did not attribute (the default configuration measured
first, other strategies) count as `-`. Phases split each run by evaluation index:
`--phases 10,40` gives evaluations 0-9, 10-39 and 40 on.
"""

import argparse
import json
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="JSON Lines traces written with --trace-configs")
    ap.add_argument("--phases", default="", help="evaluation indices that start a new phase, e.g. 10,40")
    ap.add_argument("--space", help="only this space")
    ap.add_argument("--strategy", help="only this strategy label")
    ap.add_argument("--totals", action="store_true",
                    help="only the share of failed evaluations per strategy and space (traces need no origins)")
    args = ap.parse_args()
    if args.totals:
        totals(args)
        return
    cuts = sorted(int(x) for x in args.phases.split(",") if x.strip())

    def phase(i):
        lo = 0
        for c in cuts:
            if i < c:
                return f"{lo}-{c - 1}"
            lo = c
        return f"{lo}-"

    # (strategy, space, origin, phase) -> [proposals, failed, new bests]
    table = defaultdict(lambda: [0, 0, 0])
    untraced = 0
    for path in args.traces:
        with open(path) as f:
            for line in f:
                t = json.loads(line)
                if args.space and t["space"] != args.space:
                    continue
                if args.strategy and t["strategy"] != args.strategy:
                    continue
                origins = (t.get("meta") or {}).get("origins")
                if origins is None:
                    untraced += 1
                    continue
                best = None
                for i, (v, o) in enumerate(zip(t["values"], origins)):
                    row = table[(t["strategy"], t["space"], o or "-", phase(i))]
                    row[0] += 1
                    if v is None:
                        row[1] += 1
                    elif best is None or v < best:
                        # A run's first valid value is its first best too.
                        best = v
                        row[2] += 1
    if untraced:
        print(f"({untraced} runs without origins skipped: run ktune bench with --trace-configs)\n")
    if not table:
        raise SystemExit("no traced runs matched")
    print("| strategy | space | origin | evaluations | proposals | failed | new best |")
    print("|---|---|---|---|---:|---:|---:|")
    for (st, sp, o, ph), (n, failed, bests) in sorted(table.items()):
        print(f"| {st} | {sp} | {o} | {ph} | {n} | {failed} ({100 * failed / n:.1f}%) | {bests} |")


def totals(args):
    """The share of failed evaluations per strategy (rows) and space (columns)."""
    count = defaultdict(lambda: [0, 0])
    spaces = {}
    for path in args.traces:
        with open(path) as f:
            for line in f:
                t = json.loads(line)
                if (args.space and t["space"] != args.space) or (args.strategy and t["strategy"] != args.strategy):
                    continue
                spaces.setdefault(t["space"], None)
                row = count[(t["strategy"], t["space"])]
                row[0] += len(t["values"])
                row[1] += sum(v is None for v in t["values"])
    if not count:
        raise SystemExit("no runs matched")
    strategies = sorted({k[0] for k in count})
    print("| strategy | " + " | ".join(spaces) + " | all |")
    print("|---|" + "---:|" * (len(spaces) + 1))
    for st in strategies:
        cells = []
        for sp in spaces:
            n, failed = count.get((st, sp), (0, 0))
            cells.append(f"{100 * failed / n:.1f}%" if n else "-")
        n = sum(count[(st, sp)][0] for sp in spaces if (st, sp) in count)
        failed = sum(count[(st, sp)][1] for sp in spaces if (st, sp) in count)
        print(f"| {st} | " + " | ".join(cells) + f" | {100 * failed / n:.1f}% |")


if __name__ == "__main__":
    main()
