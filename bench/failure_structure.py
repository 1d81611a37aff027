"""Where a brute-forced space's failures are: the share failing per value of each parameter,
and how often the neighbours (one parameter changed) of the fastest configurations fail,
against the base rate. Explains why a feasibility model that learns coarse splits can tax
the region of the optimum (BENCHMARKS.md, "The forest as scikit-learn grows it").

    python3 bench/failure_structure.py ../shared/data/spaces/convolution_A6000.json.gz [--top 30]
"""
import argparse
import collections
import gzip
import json


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spaces", nargs="+", help="Kernel Tuner cache files (.json or .json.gz)")
    ap.add_argument("--top", type=int, default=30, help="fastest configurations whose neighbours are counted")
    args = ap.parse_args()
    for path in args.spaces:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            data = json.load(f)
        params = data["tune_params"]
        names = list(params)
        times = {}
        for record in data["cache"].values():
            t = record.get("time")
            key = tuple(record[n] for n in names)
            times[key] = t if isinstance(t, (int, float)) else None
        base = sum(t is None for t in times.values()) / len(times)
        print(f"{path}: {len(times)} configurations, {base:.1%} fail")
        for i, name in enumerate(names):
            counts = collections.defaultdict(lambda: [0, 0])
            for key, t in times.items():
                counts[key[i]][0] += 1
                counts[key[i]][1] += t is None
            if len(counts) > 1:
                shares = ", ".join(f"{v}: {f / n:.0%}" for v, (n, f) in sorted(counts.items()))
                print(f"  failing by {name}: {shares}")
        fastest = sorted((t, k) for k, t in times.items() if t is not None)[: args.top]
        total = failed = 0
        for _, key in fastest:
            for i, name in enumerate(names):
                for value in params[name]:
                    other = key[:i] + (value,) + key[i + 1:]
                    if value != key[i] and other in times:
                        total += 1
                        failed += times[other] is None
        print(f"  neighbours of the {len(fastest)} fastest: {failed}/{total} fail ({failed / max(total, 1):.1%})")
        print(f"  fastest: {dict(zip(names, fastest[0][1]))} at {fastest[0][0]:.4g}")


if __name__ == "__main__":
    main()
