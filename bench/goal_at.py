#!/usr/bin/env python3
"""What a goal picks from a run's first N evaluations, against what it picks from the whole
brute-forced space: an independent implementation of ktune's goals (`ktune tune --goal`,
`ktune results --goal`) for scoring runs of several objectives, whichever tool made them.

    python3 bench/goal_at.py --objective time,energy_j --goal "energy_j within 5% of time" \
        --at 10,20,40,60,100 TRACES.jsonl... CACHE.json...

Goals (every objective minimised here):
- `B within P% of A[, C]`: the least B among the results whose A is at most (1 + P/100)
  times the least A found;
- `weighted A=w, B=v`: the least w * A / min A + v * B / min B.

A run's pick after N evaluations is judged by the whole space: its **regret** is its goal
value against the space's bests over the goal value of the space's own pick, minus 1 (for
`within`: the pick's B over the true pick's B, minus 1, where the pick is admitted by the
space's least A; a pick the space's least A does not admit counts as `miss`). Printed per
strategy and space, and over all spaces: the share of runs whose pick is the true pick, the
median regret, and the share of misses.
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import front_score  # noqa: E402  (reads a cache's recorded metrics per configuration)


def parse_goal(text, keys):
    t = text.strip()
    if t.startswith("weighted"):
        weights = [0.0] * len(keys)
        for part in t[len("weighted"):].split(","):
            if part.strip():
                name, w = part.split("=")
                weights[keys.index(name.strip())] = float(w)
        return ("weighted", weights)
    m = re.fullmatch(r"(\S+) within ([0-9.]+)% of (.+)", t)
    if not m:
        sys.exit(f"goal `{text}`: neither `B within P% of A` nor `weighted A=w, B=v`")
    best = keys.index(m.group(1))
    held = [keys.index(n.strip()) for n in m.group(3).split(",")]
    return ("within", best, held, float(m.group(2)) / 100)


def pick(goal, points):
    """The index of the point the goal picks (None: none ran), ties to the earlier."""
    ran = [(i, p) for i, p in enumerate(points) if p is not None]
    if not ran:
        return None
    lows = [min(p[j] for _, p in ran) for j in range(len(ran[0][1]))]
    if goal[0] == "weighted":
        w = goal[1]
        score = [(sum(w[j] * p[j] / lows[j] for j in range(len(w)) if w[j] > 0), i) for i, p in ran]
    else:
        _, best, held, f = goal
        score = [(p[best], i) for i, p in ran if all(p[j] <= lows[j] * (1 + f) for j in held)]
    return min(score)[1]


def regret(goal, p, true_p, lows):
    """The point's regret under the goal against the whole space (`lows`: its bests), or None
    for a point the space's bests do not admit."""
    if goal[0] == "weighted":
        w = goal[1]
        v = lambda q: sum(w[j] * q[j] / lows[j] for j in range(len(w)) if w[j] > 0)  # noqa: E731
        return v(p) / v(true_p) - 1
    _, best, held, f = goal
    if not all(p[j] <= lows[j] * (1 + f) for j in held):
        return None
    return p[best] / true_p[best] - 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objective", default="time,energy_j")
    ap.add_argument("--goal", required=True)
    ap.add_argument("--at", default="10,20,40,60,100")
    ap.add_argument("--seeds", help="only these seeds, e.g. 0-9")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    keys = a.objective.split(",")
    goal = parse_goal(a.goal, keys)
    at = [int(n) for n in a.at.split(",")]
    traces = [f for f in a.files if f.endswith(".jsonl")]
    caches = [f for f in a.files if not f.endswith(".jsonl")]
    truth = {}
    for path in caches:
        stem = Path(path).name.split(".")[0]
        opener = __import__("gzip").open if path.endswith(".gz") else open
        with opener(path, "rt") as fh:
            pts = [tuple(p) if p is not None else None for p in front_score.points_of(json.load(fh), keys)]
        valid = [p for p in pts if p is not None]
        lows = [min(p[j] for p in valid) for j in range(len(keys))]
        truth[stem] = (valid[pick(goal, valid)], lows)
    seeds = None
    if a.seeds:
        lo, _, hi = a.seeds.partition("-")
        seeds = range(int(lo), int(hi or lo) + 1)
    runs = {}
    for f in traces:
        for line in open(f):
            r = json.loads(line)
            if seeds is not None and r["seed"] not in seeds:
                continue
            if r["space"] in truth and r.get("points"):
                runs.setdefault((r["strategy"], r["space"]), []).append(r)
    print(f"goal `{a.goal}`; cells: runs whose pick is the space's own / median regret / misses")
    for stem, (tp, lows) in sorted(truth.items()):
        print(f"- {stem}: the space's pick {dict(zip(keys, tp))}, bests {dict(zip(keys, lows))}")
    header = "| strategy | space | runs | " + " | ".join(f"@{n}" for n in at) + " |"
    print()
    print(header)
    print("|---|---|---:|" + "---:|" * len(at))
    overall = {}
    for (strategy, stem), rs in sorted(runs.items()):
        tp, lows = truth[stem]
        cells = []
        for n in at:
            hits, regrets, misses = 0, [], 0
            for r in rs:
                points = [tuple(p) if p else None for p in r["points"][:n]]
                i = pick(goal, points)
                if i is None:
                    misses += 1
                    continue
                p = points[i]
                hits += p == tp
                g = regret(goal, p, tp, lows)
                if g is None:
                    misses += 1
                else:
                    regrets.append(g)
                overall.setdefault((strategy, n), []).append((p == tp, g))
            med = statistics.median(regrets) if regrets else float("nan")
            cells.append(f"{100 * hits / len(rs):.0f}% / {100 * med:.1f}% / {misses}")
        print(f"| {strategy} | {stem} | {len(rs)} | " + " | ".join(cells) + " |")
    print()
    print("| strategy, all spaces | " + " | ".join(f"@{n}" for n in at) + " |")
    print("|---|" + "---:|" * len(at))
    for strategy in sorted({s for s, _ in overall}):
        cells = []
        for n in at:
            xs = overall.get((strategy, n), [])
            gs = [g for _, g in xs if g is not None]
            cells.append(
                f"{100 * sum(h for h, _ in xs) / max(len(xs), 1):.0f}% / "
                f"{100 * (statistics.mean(gs) if gs else float('nan')):.1f}% / {sum(g is None for _, g in xs)}"
            )
        print(f"| {strategy} | " + " | ".join(cells) + " |")
    print("(all spaces: runs whose pick is the space's own / mean regret / misses)")


if __name__ == "__main__":
    main()
