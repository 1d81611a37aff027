#!/usr/bin/env python3
"""Issue 50: how good is a sample that favours aligned values, before any model?

For each brute-forced space, draws `--at` configurations without replacement, each with
probability proportional to the product over its parameters of `1 / q^power` (`q` the odd part
of the value, relative to the domain's smallest, for integer parameters whose factors of 2 vary
out of step with the value: the parameters ktune's alignment coordinate is given for), and
scores the draws as ktune's performance score does over the first `--at` evaluations:
P(n) = (B(n) - best(n)) / (B(n) - opt), B(n) uniform sampling's expected best (estimated from
2,000 uniform runs), failures counting as the space's median until something runs. Power 0 is
uniform sampling (score about 0).

    /tmp/kt-ocl-venv/bin/python bench/aligned_sample.py --at 20 --powers 0,1,2,3,5 \\
        ../shared/data/spaces/*.json.gz

(Needs numpy; any of the peer virtualenvs has it.)
"""
import argparse
import gzip
import json
import math

import numpy as np


def odd(x):
    while x % 2 == 0:
        x //= 2
    return x


def aligned_params(tune_params, keys):
    """The parameters whose alignment varies out of step with their value (as
    `encoding::alignment` in ktune): positive integers, more than one level of factors of 2,
    and not simply growing with the value."""
    out = []
    for k in keys:
        vals = tune_params[k]
        if len(vals) < 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in vals):
            continue
        twos = [(v, (v & -v).bit_length() - 1) for v in sorted(vals)]
        levels = {t for _, t in twos}
        monotone = all(a[1] <= b[1] for a, b in zip(twos, twos[1:]))
        if len(levels) > 1 and not monotone:
            out.append(k)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spaces", nargs="+")
    ap.add_argument("--at", type=int, default=20)
    ap.add_argument("--powers", default="0,1,2,3,5")
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    powers = [float(p) for p in args.powers.split(",")]
    h = args.at
    totals = {p: [] for p in powers}
    print("| space | aligned parameters | " + " | ".join(f"power {p:g}" for p in powers) + " |")
    print("|---|---|" + "---:|" * len(powers))
    for path in args.spaces:
        d = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
        tp, keys = d["tune_params"], d["tune_params_keys"]
        al = aligned_params(tp, keys)
        least = {k: min(odd(v) for v in tp[k]) for k in al}
        ys, logw = [], []
        for rec in d["cache"].values():
            t = rec.get("time")
            ok = isinstance(t, (int, float)) and math.isfinite(t) and t < 1e20
            ys.append(t if ok else np.inf)
            logw.append(-sum(math.log(odd(rec[k]) / least[k]) for k in al))
        ys, logw = np.array(ys), np.array(logw)
        n = len(ys)
        finite = ys[np.isfinite(ys)]
        med, opt = np.median(finite), finite.min()

        def bests(power, runs):
            out = np.empty((runs, h))
            for r in range(runs):
                # Gumbel top-k: weighted sampling without replacement
                key = power * logw + rng.gumbel(size=n)
                idx = np.argpartition(-key, h)[:h]
                idx = idx[np.argsort(-key[idx])]
                b = np.minimum.accumulate(ys[idx])
                out[r] = np.where(np.isinf(b), med, b)
            return out

        base = bests(0.0, 2000).mean(0)
        cells = []
        for p in powers:
            score = ((base - bests(p, args.runs)) / (base - opt)).mean()
            totals[p].append(score)
            cells.append(f"{score:+.3f}")
        name = path.rsplit("/", 1)[-1].split(".json")[0]
        print(f"| {name} | {', '.join(al)} | " + " | ".join(cells) + " |")
    print("| **mean** | | " + " | ".join(f"**{np.mean(totals[p]):+.3f}**" for p in powers) + " |")


if __name__ == "__main__":
    main()
