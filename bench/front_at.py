#!/usr/bin/env python3
"""What a user gets from the Pareto front a run found after N evaluations, against the true
front of a brute-forced cache of two objectives (time and energy here): the fastest found
against the true fastest, the energy saved within 2% and 5% more time than the fastest found
(against what the true front offers within the same), and the share of the true front's
hypervolume covered (each objective normalised from its best, 0, to its median, 1).

    python3 bench/front_at.py --objective time,energy_j --evals 100 --strategy auto \
        TRACES.jsonl CACHE.json...
"""
import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import front_score  # noqa: E402  (the independent hypervolume implementation)


def front(points):
    pts = sorted(set(points))
    out, best_e = [], float("inf")
    for t, e in pts:
        if e < best_e:
            out.append((t, e))
            best_e = e
    return out


def saving(fr, slack):
    """Energy saved, as a fraction, by the least energy within `slack` more time than the
    fastest of front `fr` (both minimised), and the time that costs."""
    t0, e0 = fr[0]
    ok = [(t, e) for t, e in fr if t <= t0 * (1 + slack)]
    t, e = min(ok, key=lambda p: p[1])
    return 1 - e / e0, t / t0 - 1


def area(fr, lo, med):
    """Area dominated by `fr` in the box from `lo` (0) to the medians (1)."""
    norm = [((t - lo[0]) / (med[0] - lo[0]), (e - lo[1]) / (med[1] - lo[1])) for t, e in fr]
    norm = [(min(x, 1.0), min(y, 1.0)) for x, y in norm if x < 1 and y < 1]
    a, prev_y = 0.0, 1.0
    for x, y in sorted(norm):
        if y < prev_y:
            a += (1 - x) * (prev_y - y)
            prev_y = y
    return a


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objective", default="time,energy_j")
    ap.add_argument("--evals", type=int, default=100)
    ap.add_argument("--strategy", default="auto")
    ap.add_argument("traces")
    ap.add_argument("caches", nargs="+")
    a = ap.parse_args()
    keys = a.objective.split(",")
    runs = [json.loads(l) for l in open(a.traces)]
    for path in a.caches:
        stem = Path(path).name.split(".")[0]
        data = json.load(open(path))
        pts = front_score.points_of(data, keys)
        valid = [tuple(p) for p in pts if p is not None]
        true = front(valid)
        lo = (min(p[0] for p in valid), min(p[1] for p in valid))
        med = (statistics.median(p[0] for p in valid), statistics.median(p[1] for p in valid))
        hv_true = area(true, lo, med)
        rows = []
        for r in runs:
            if r["space"] != stem or r["strategy"] != a.strategy:
                continue
            found = front([tuple(p) for p in r["points"][: a.evals] if p])
            s2, c2 = saving(found, 0.02)
            s5, c5 = saving(found, 0.05)
            rows.append((found[0][0] / true[0][0] - 1, s2, c2, s5, c5, area(found, lo, med) / hv_true, len(found)))
        t2, tc2 = saving(true, 0.02)
        t5, tc5 = saving(true, 0.05)
        med_of = lambda i: statistics.median(x[i] for x in rows)  # noqa: E731
        print(f"{stem}: {len(valid)} configurations, true front {len(true)}; {len(rows)} runs of {a.strategy}, first {a.evals} evaluations")
        print(f"  true front: fastest {true[0][0]:.4g}; within 2% more time {100*t2:.1f}% less energy (+{100*tc2:.1f}% time), within 5% {100*t5:.1f}% (+{100*tc5:.1f}%)")
        print(f"  found (median over runs): fastest +{100*med_of(0):.2f}% from the true fastest; within 2% {100*med_of(1):.1f}% less energy (+{100*med_of(2):.1f}%), within 5% {100*med_of(3):.1f}% (+{100*med_of(4):.1f}%); front of {med_of(6):.0f}; {100*med_of(5):.1f}% of the true front's hypervolume")


if __name__ == "__main__":
    main()
