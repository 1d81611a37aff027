#!/usr/bin/env python
"""Generate the golden numbers that `tests/golden.rs` checks the Rust scorer against.

Run once (needs numpy and scipy, e.g. the kt-peer venv) from anywhere:

    ~/.venvs/kt/bin/python crates/ktune-bench/tests/data/gen_golden.py \
        [--kt-peer /work/shared/tools/kt-peer]

It builds a few synthetic spaces and traces with a fixed seed, scores them with the reference
Python implementation (kt-peer's `baseline.py` and `score.py`), and writes next to itself:

- `golden_spaces.json`: per space its raw values (null = failed), direction, and the reference
  opt, median, n_max and B(n) for n = 1..max(n_max, 220) (all in raw units);
- `golden_traces.jsonl`: the traces, in the common trace format (Python's json, so `NaN` can
  appear in `meta`, as the Kernel Tuner harness writes it; some lines carry unknown fields);
- `golden_scores.json`: per trace line its score, MAE@220 and first index of the optimum, and
  per (tool, strategy, space) the aggregated row (one run per seed, last line wins).

The reference scorer minimises; a space to maximise is scored on negated values, as the
methodology prescribes.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser()
# ../shared beside the checkout: crates/ktune-bench/tests/data -> five levels up.
ap.add_argument("--kt-peer", default=os.path.normpath(os.path.join(HERE, "../../../../../shared/tools/kt-peer")))
args = ap.parse_args()
sys.path.insert(0, args.kt_peer)

from baseline import RandomBaseline  # noqa: E402
import score as S  # noqa: E402

rng = np.random.default_rng(20261122)


class FakeSpace:
    """Duck-typed stand-in for kt-peer's `spaces.Space` (minimised values)."""

    def __init__(self, stem, values):
        self.stem = stem
        self.group = "shared"
        self._values = values
        self.n_total = len(values)

    def valid_values(self):
        return [v for v in self._values if v is not None]


def make_space(n, fail_frac, kind):
    if kind == "ties":
        vals = np.round(rng.lognormal(0.0, 0.5, n) + 1.0, 1)
    elif kind == "isolated":  # one clearly best value: n_max hits the 1000 cap
        vals = rng.uniform(2.0, 3.0, n)
        vals[rng.integers(n)] = 1.0
    elif kind == "gflops":
        vals = rng.gamma(4.0, 250.0, n)
    else:
        vals = rng.lognormal(0.0, 0.7, n) * 3.5
    out = [float(v) for v in np.round(vals, 4)]
    for i in rng.choice(n, int(round(fail_frac * n)), replace=False):
        out[int(i)] = None
    return out


spaces = [
    ("tiny", [3.0, 1.0, 2.0, 2.0, 5.0, None, None], "minimize"),
    ("small_ties", make_space(150, 0.2, "ties"), "minimize"),
    ("medium", make_space(3000, 0.1, "plain"), "minimize"),
    ("capped", make_space(2000, 0.05, "isolated"), "minimize"),
    ("gemm_gflops", make_space(800, 0.15, "gflops"), "maximize"),
]


def to_min(v, direction):
    if v is None:
        return None
    return -v if direction == "maximize" else v


def make_run(values, strategy, length, sign=1.0):
    """A synthetic run: raw values of distinct configurations in evaluation order
    (`sign` = -1 when larger values are better)."""
    n = len(values)
    if strategy == "random":
        idx = rng.permutation(n)[:length]
    elif strategy == "greedy":  # biased towards good configurations
        key = np.array([np.inf if v is None else sign * v for v in values])
        noise = rng.normal(0.0, 1.0, n) * np.nanstd(np.where(np.isinf(key), np.nan, key))
        idx = np.argsort(key + 3.0 * noise)[:length]
    elif strategy == "stops_early":
        idx = rng.permutation(n)[: max(1, length // 5)]
    elif strategy == "fails_only":
        idx = [i for i, v in enumerate(values) if v is None][:length]
    else:
        raise ValueError(strategy)
    return [values[int(i)] for i in idx]


traces = []
for stem, raw, direction in spaces:
    mvals = [to_min(v, direction) for v in raw]
    opt_idx = int(np.argmin([np.inf if v is None else v for v in mvals]))
    rb = RandomBaseline([v for v in mvals if v is not None], len(mvals))
    length = max(rb.budget(), 220)
    for tool in ("ktune-0.1.0", "kernel_tuner-1.5.0"):
        for strategy in ("random", "greedy", "stops_early", "fails_only"):
            if strategy == "fails_only" and all(v is not None for v in raw):
                continue
            seeds = [0, 1, -7, 2**40] if strategy != "fails_only" else [3]
            for seed in seeds:
                if strategy == "random" and seed == 1:
                    run = [raw[opt_idx]] + make_run(raw, "random", length - 1)  # optimum first
                else:
                    run = make_run(raw, strategy, length, -1.0 if direction == "maximize" else 1.0)
                t = dict(tool=tool, strategy=strategy, space=stem, seed=int(seed), values=run,
                         wall_seconds=round(float(rng.uniform(0.1, 9.0)), 4))
                if tool.startswith("kernel_tuner"):
                    t["meta"] = dict(n_unique=len(run), kt_strategy_ms=float("nan"))
                    t["extra_field"] = {"ignored": True}
                traces.append(t)
    # a seed written twice: the last line wins
    traces.append(dict(tool="ktune-0.1.0", strategy="random", space=stem, seed=0,
                       values=make_run(raw, "random", length), wall_seconds=1.5))
    # an empty run
    traces.append(dict(tool="ktune-0.1.0", strategy="empty", space=stem, seed=0, values=[],
                       wall_seconds=0.0))

# ---- reference numbers ----
direction_of = {s: d for s, _, d in spaces}
stats = {}
space_out = []
for stem, raw, direction in spaces:
    mvals = [to_min(v, direction) for v in raw]
    st = S.SpaceStats(FakeSpace(stem, mvals))
    stats[stem] = st
    sign = -1.0 if direction == "maximize" else 1.0
    space_out.append(dict(
        name=stem, direction=direction, values=raw, n_total=st.n_total, n_valid=st.n_valid,
        opt=sign * st.opt, median=sign * st.median, n_max=int(st.n_max),
        B=[sign * float(b) for b in st.B],
    ))

runs_min = []
per_line = []
for t in traces:
    d = direction_of[t["space"]]
    tm = dict(t)
    tm["values"] = [to_min(v, d) for v in t["values"]]
    runs_min.append(tm)
    perf, mae, found = S.score_run(tm["values"], stats[t["space"]])
    per_line.append(dict(score=perf, mae220=mae, found_optimum_at=found))

rows, skipped = S.aggregate(runs_min, stats)
assert not skipped
row_out = []
for key in sorted(rows):
    r = rows[key]
    row_out.append(dict(tool=r["tool"], strategy=r["strategy"], space=r["space"], runs=r["n_runs"],
                        score_mean=r["perf_mean"], score_se=r["perf_se"], mae220_mean=r["mae_mean"],
                        wall_median=r["wall_median"]))


def clean(x):
    """NaN -> None so the golden JSON stays strict."""
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


with open(os.path.join(HERE, "golden_spaces.json"), "w") as f:
    json.dump(clean(space_out), f)
with open(os.path.join(HERE, "golden_traces.jsonl"), "w") as f:
    for t in traces:
        f.write(json.dumps(t) + "\n")  # Python's json: NaN in meta stays NaN, as kt-peer writes it
with open(os.path.join(HERE, "golden_scores.json"), "w") as f:
    json.dump(clean(dict(per_line=per_line, rows=row_out)), f, indent=0)
print(f"{len(space_out)} spaces, {len(traces)} traces, {len(row_out)} rows written to {HERE}")
for s in space_out:
    print(f"  {s['name']:12s} N={s['n_total']:5d} valid={s['n_valid']:5d} n_max={s['n_max']}")
