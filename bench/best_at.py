#!/usr/bin/env python3
"""Where runs stand on one brute-forced space: the mean best-found / optimum at a few budgets,
which configurations the runs' best are after N evaluations (how many runs share a trap), the
configurations near the optimum, and every single-parameter change of the most shared trap.

Reads ktune (or any tool's) JSON Lines traces and the space's Kernel Tuner cache file; a
configuration is recovered from its recorded value (the cache's values are distinct).
BENCHMARKS.md (issue 18, "Why convolution_A4000 is still lost") cites its output.

    python3 bench/best_at.py ../shared/data/spaces/convolution_A4000.json.gz 120 \\
        traces.jsonl:auto other.jsonl:simulated_annealing [--within 0.04]

With `--tally RATIO` it prints one line per trace instead: how many runs' best after N
evaluations is within 1.08 and 1.3 times the optimum, and how many are at RATIO times it or
worse (a trap's ratio: 1.47 on convolution_A100). A FILE without `:STRATEGY` is split by
the strategies it holds.
"""

import argparse
import json
import math
import signal
from collections import Counter

from kt_cache import load, name, ran

CHECKPOINTS = [10, 20, 40, 60, 100, 150, 200, 268]


def curves(path, strategy, space):
    """Each run's best-so-far after every evaluation (failures count as infinitely slow)."""
    runs = []
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            if t["space"] == space and (strategy is None or t["strategy"] == strategy):
                best, curve = math.inf, []
                for v in t["values"]:
                    if isinstance(v, (int, float)) and math.isfinite(v):
                        best = min(best, v)
                    curve.append(best)
                runs.append(curve)
    return runs


def strategies(path, space):
    """The strategies a trace file holds on `space`, in the order they first appear."""
    seen = {}
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            if t["space"] == space:
                seen.setdefault(t["strategy"], None)
    return list(seen)


def tally(args, space, optimum):
    # Ratios are compared with a little slack: a trap's recorded value divided by the
    # optimum is not exactly the rounded ratio the caller types.
    print(f"| {space}, best after {args.at} | runs | within 1.08 x | within 1.3 x | at {args.tally} x or worse |")
    print("|---|---:|---:|---:|---:|")
    for spec in args.traces:
        path, strategy = spec.split(":", 1) if ":" in spec else (spec, None)
        for s in [strategy] if strategy else strategies(path, space):
            runs = curves(path, s, space)
            ends = [r[min(args.at, len(r)) - 1] / optimum for r in runs]
            trapped = sum(e >= args.tally - 5e-4 for e in ends)
            near = sum(e <= 1.08 for e in ends)
            close = sum(e <= 1.3 for e in ends)
            print(f"| `{s}` | {len(runs)} | {near} | {close} | {trapped} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache")
    ap.add_argument("at", type=int, help="the evaluation count the runs' best are read at")
    ap.add_argument("traces", nargs="+", help="FILE or FILE:STRATEGY")
    ap.add_argument("--within", type=float, default=0.04, help="list configurations this close to the optimum")
    ap.add_argument("--tally", type=float, metavar="RATIO", help="count runs near the optimum and at RATIO or worse")
    args = ap.parse_args()
    data, space = load(args.cache), name(args.cache)
    times = {key: rec["time"] for key, rec in ran(data).items()}
    by_value = {t: key for key, t in times.items()}
    optimum = min(times.values())
    if args.tally is not None:
        tally(args, space, optimum)
        return
    traps = Counter()
    for spec in args.traces:
        path, strategy = spec.split(":", 1) if ":" in spec else (spec, None)
        runs = curves(path, strategy, space)
        if not runs:
            print(f"{spec}: no runs on {space}")
            continue
        means = []
        for c in CHECKPOINTS:
            finite = [x for x in (r[min(c, len(r)) - 1] for r in runs) if x < math.inf]
            means.append(f"{c}:{sum(finite) / len(finite) / optimum:.3f}" if finite else f"{c}:-")
        print(f"{spec} ({len(runs)} runs) best/optimum at " + " ".join(means))
        at_n = Counter(r[min(args.at, len(r)) - 1] for r in runs)
        for value, n in sorted(at_n.items()):
            print(f"  {n:3d} runs at {value / optimum:.3f} x optimum: {by_value.get(value, '?')}")
            if value > optimum and value in by_value:
                traps[by_value[value]] += n
    near = sorted((t, key) for key, t in times.items() if t <= optimum * (1 + args.within))
    print(f"\n{len(near)} configurations within {args.within:.0%} of the optimum "
          f"({', '.join(data['tune_params_keys'])}):")
    for t, key in near:
        print(f"  {t / optimum:.3f} {key}")
    if traps:
        trap = traps.most_common(1)[0][0]
        print(f"\nevery single-parameter change of {trap} ({times[trap] / optimum:.3f}):")
        base = trap.split(",")
        for i, param in enumerate(data["tune_params_keys"]):
            changes = []
            for v in data["tune_params"][param]:
                if str(v) == base[i]:
                    continue
                key = ",".join(base[:i] + [str(v)] + base[i + 1:])
                rec = data["cache"].get(key)
                t = rec.get("time") if rec else None
                changes.append(f"{v}: {t / optimum:.3f}" if key in times else f"{v}: {t if rec else 'absent'}")
            if changes:
                print(f"  {param}: " + ", ".join(changes))


if __name__ == "__main__":
    # Piped into `head`: end quietly, as a shell tool does.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
