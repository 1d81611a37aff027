"""Do a brute-forced space's failures grow with its parameters? What `monotone_failures`
(`crates/ktune-strategies/src/model_based/monotone.rs`) assumes, measured on the data.

A configuration "covers" another when it is at least as large in every size (integer or real
parameters of three values or more) and equal in every other parameter. Printed per space:

- the base rate (share of configurations that fail);
- precision: of the configurations that cover a failure (a sample of 50 failures), the share
  that fail too; what the rule is right about;
- coverage: the share of failures that cover another failure, so that one failure seen
  first would have ruled them out;
- whether the optimum, or any of the fastest 1%, covers a failure (the rule would rule it out
  once that failure is seen).

    python3 bench/failure_orthants.py ../shared/data/spaces/convolution_*.json.gz
"""
import argparse
import random

from kt_cache import load, name


def sizes_and_rows(path):
    data = load(path)
    params = data["tune_params"]
    varying = [k for k in params if len(params[k]) > 1]
    sizes = [
        k
        for k in varying
        if len(params[k]) > 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in params[k])
    ]
    others = [k for k in varying if k not in sizes]
    rows = []
    for record in data["cache"].values():
        t = record.get("time")
        ok = isinstance(t, (int, float)) and t < 1e19
        rows.append((tuple(record[k] for k in sizes), tuple(record[k] for k in others), t if ok else None))
    return sizes, rows


def covers(a, b):
    return a[1] == b[1] and all(x >= y for x, y in zip(a[0], b[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spaces", nargs="+", help="Kernel Tuner cache files (.json or .json.gz)")
    ap.add_argument("--sample", type=int, default=50, help="failures sampled for the precision")
    args = ap.parse_args()
    for path in args.spaces:
        sizes, rows = sizes_and_rows(path)
        fails = [r for r in rows if r[2] is None]
        running = sorted((r for r in rows if r[2] is not None), key=lambda r: r[2])
        space = name(path)
        if not fails:
            print(f"{space}: no failures")
            continue
        covering = failing = 0
        for f in random.Random(0).sample(fails, min(args.sample, len(fails))):
            for r in rows:
                if r is not f and covers(r, f):
                    covering += 1
                    failing += r[2] is None
        coverage = sum(any(g is not f and covers(f, g) for g in fails) for f in fails) / len(fails)
        top = running[: max(1, len(running) // 100)]
        top_covering = sum(any(covers(t, f) for f in fails) for t in top)
        print(
            f"{space}: base rate {len(fails) / len(rows):.3f}, precision {failing / max(covering, 1):.2f} "
            f"({covering} covering), coverage {coverage:.2f}, optimum covers a failure: "
            f"{'yes' if any(covers(running[0], f) for f in fails) else 'no'}, "
            f"fastest 1% covering one: {top_covering}/{len(top)}; sizes: {', '.join(sizes)}"
        )


if __name__ == "__main__":
    main()
