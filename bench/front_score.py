#!/usr/bin/env python3
"""An independent implementation of ktune's hypervolume score, to check `ktune bench`'s.

Standard library only. Where the Rust code (crates/ktune-bench/src/front.rs) finds the area
dominated by exactly d configurations with one sweep over the points, this script lays the
grid of every distinct coordinate of the points inside the box, counts the points that dominate
each grid cell with two-dimensional prefix sums, and takes q_d(n) = C(N-d, n) / C(N, n) from
log-gamma instead of a running product. The definitions (documented in front.rs and
docs/benchmarks/multi-objective.md):

- each objective in minimisation form, normalised so that its best valid value is 0 and its
  median over the valid configurations is 1; the reference point is (1, 1);
- HV(set): the area of the unit box that some point of the set dominates;
- E(n) = sum over the box of (1 - q_D(n)), D the configurations dominating the point;
- n_max: the smallest n with E(n) >= 0.95 HV*, at most min(N, 1000);
- a run's score: the mean over n = 1..n_max of (HV(n) - E(n)) / max(HV* - E(n), 1e-12).

Usage:
    python3 bench/front_score.py --objective time,compile_time SPACE.json.gz... [--traces T.jsonl] [--json OUT]

Prints per space HV*, n_max and E(n) at a few n, and with --traces each run's score; --json
writes the same as JSON (the golden file of ktune-bench's front test).
"""

import argparse
import gzip
import json
import math
import os
import statistics
import sys


def read_cache(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def guess_sign(key):
    low = key.lower()
    rate = "/s" in low or "flops" in low or "throughput" in low or "bandwidth" in low
    return -1.0 if rate else 1.0


def points_of(cache, keys):
    """Raw objective pairs of every configuration (None where it failed), one per distinct
    configuration, in the cache's order."""
    params = cache["tune_params_keys"]
    seen = set()
    out = []
    for record in cache["cache"].values():
        config = tuple(record.get(p) for p in params)
        if config in seen:
            continue
        seen.add(config)
        values = []
        for k in keys:
            v = record.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                values.append(float(v))
            else:
                values = None
                break
        if values is not None and "__error__" in record and isinstance(record["__error__"], str):
            values = None
        out.append(values)
    return out


def median(sorted_values):
    return statistics.median(sorted_values)


class Front:
    def __init__(self, name, points, signs):
        self.name = name
        self.n_total = len(points)
        self.signs = signs
        valid = [[s * v for s, v in zip(signs, p)] for p in points if p is not None]
        self.ideal = [min(p[k] for p in valid) for k in range(2)]
        self.reference = [median(sorted(p[k] for p in valid)) for k in range(2)]
        boxed = [self.normalise(p) for p in valid]
        boxed = [u for u in boxed if u[0] < 1.0 and u[1] < 1.0]
        self.areas = grid_areas(boxed)
        self.hv_true = sum(a for d, a in self.areas.items() if d >= 1)
        self.curve = [self.expected(n) for n in range(1, min(self.n_total, 1000) + 1)]
        target = 0.95 * self.hv_true
        self.n_max = next((i + 1 for i, e in enumerate(self.curve) if e >= target), len(self.curve))

    def normalise(self, p):
        return [(p[k] - self.ideal[k]) / (self.reference[k] - self.ideal[k]) for k in range(2)]

    def expected(self, n):
        big_n = self.n_total
        log_all = math.lgamma(big_n + 1) - math.lgamma(n + 1) - math.lgamma(big_n - n + 1)
        total = 0.0
        for d, area in self.areas.items():
            if d < 1:
                continue
            if big_n - d < n:
                q = 0.0
            else:
                log_none = (math.lgamma(big_n - d + 1) - math.lgamma(n + 1)
                            - math.lgamma(big_n - d - n + 1))
                q = math.exp(log_none - log_all)
            total += area * (1.0 - q)
        return total

    def baseline(self, n):
        n = max(1, min(n, self.n_total))
        return self.curve[n - 1] if n <= len(self.curve) else self.hv_true

    def score(self, run):
        boxed = []
        hv = 0.0
        total = 0.0
        for n in range(1, self.n_max + 1):
            p = run[n - 1] if n - 1 < len(run) else None
            if p is not None and len(p) >= 2 and all(math.isfinite(v) for v in p[:2]):
                u = self.normalise([s * v for s, v in zip(self.signs, p[:2])])
                if u[0] < 1.0 and u[1] < 1.0:
                    boxed.append(u)
                    hv = hypervolume(boxed)
            e = self.baseline(n)
            total += (hv - e) / max(self.hv_true - e, 1e-12)
        return total / self.n_max


def grid_areas(boxed):
    """{d: area of the unit box dominated by exactly d of the points}, from the grid of their
    distinct coordinates and prefix counts."""
    xs = sorted(set(u[0] for u in boxed)) + [1.0]
    ys = sorted(set(u[1] for u in boxed)) + [1.0]
    xi = {x: i for i, x in enumerate(xs)}
    yi = {y: j for j, y in enumerate(ys)}
    cols = len(ys) - 1
    # count[i][j]: points at grid corner (i, j); the prefix sum over i' <= i, j' <= j is the
    # number dominating cell [x_i, x_{i+1}) x [y_j, y_{j+1}).
    count = [[0] * cols for _ in range(len(xs) - 1)]
    for u in boxed:
        count[xi[u[0]]][yi[u[1]]] += 1
    areas = {}
    column_sums = [0] * cols
    for i in range(len(xs) - 1):
        width = xs[i + 1] - xs[i]
        row = count[i]
        running = 0
        for j in range(cols):
            column_sums[j] += row[j]
            running += column_sums[j]
            if running:
                areas[running] = areas.get(running, 0.0) + width * (ys[j + 1] - ys[j])
    return areas


def hypervolume(boxed):
    """Area dominated in the unit box, by slicing along the second coordinate."""
    ys = sorted(set(u[1] for u in boxed)) + [1.0]
    area = 0.0
    for j in range(len(ys) - 1):
        left = min(u[0] for u in boxed if u[1] <= ys[j])
        area += (1.0 - left) * (ys[j + 1] - ys[j])
    return area


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spaces", nargs="+")
    ap.add_argument("--objective", required=True, help="two recorded keys, e.g. time,compile_time")
    ap.add_argument("--traces", help="a traces.jsonl with points (from ktune bench --objective A,B)")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()
    keys = args.objective.split(",")
    if len(keys) != 2:
        sys.exit("--objective takes two keys")
    signs = [guess_sign(k) for k in keys]
    fronts = {}
    for path in args.spaces:
        name = os.path.basename(path)
        for ext in (".gz", ".json"):
            if name.endswith(ext):
                name = name[: -len(ext)]
        points = points_of(read_cache(path), keys)
        fronts[name] = Front(name, points, signs)
        fronts[name].points = points
    out = {"objective": keys, "spaces": {}, "runs": []}
    for name, f in fronts.items():
        checks = {str(n): f.baseline(n) for n in (1, 10, 100, f.n_max)}
        out["spaces"][name] = {"hv_true": f.hv_true, "n_max": f.n_max, "baseline": checks,
                               "reference": [s * r for s, r in zip(signs, f.reference)],
                               "directions": ["maximize" if s < 0 else "minimize" for s in signs],
                               "points": f.points}
        print(f"{name}: HV* {f.hv_true:.6f}, n_max {f.n_max}, E(1) {checks['1']:.6f}, "
              f"E(10) {checks['10']:.6f}, E(100) {checks['100']:.6f}")
    if args.traces:
        with open(args.traces) as t:
            for line in t:
                trace = json.loads(line)
                f = fronts.get(trace["space"])
                if f is None or not trace.get("points"):
                    continue
                s = f.score(trace["points"])
                out["runs"].append({"strategy": trace["strategy"], "space": trace["space"],
                                    "seed": trace["seed"], "score": s,
                                    "points": trace["points"]})
                print(f"  {trace['strategy']} on {trace['space']} seed {trace['seed']}: {s:.6f}")
    if args.json:
        with open(args.json, "w") as j:
            json.dump(out, j, indent=1)


if __name__ == "__main__":
    main()
