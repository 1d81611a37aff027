#!/usr/bin/env python
"""Run pyATF's search techniques on the brute-forced spaces and write kt-peer traces, so that
`ktune bench score` (or kt-peer's score.py) scores them beside ktune and Kernel Tuner.

    target/pyatf-venv/bin/python bench/pyatf_peer.py --techniques auc_bandit \
        --seeds 0-9 --out /tmp/pyatf ../shared/data/spaces/*.json.gz

The space is the brute-forced cache's set of configurations, as pyATF constraints: each
parameter's constraint admits the values whose prefix (this parameter and the ones before it,
in the cache's key order) begins some configuration of the cache, the way ATF asks constraints
to be written (as early as they can be checked). pyATF then generates exactly the cache's
configurations and its techniques search them.
  * A configuration that failed when brute-forced (a hidden constraint) is an evaluation (null
    in the trace), reported to pyATF by raising `CostFunctionError`, its documented way.
  * pyATF evaluates a configuration again when a technique proposes it again. By default such
    a repeat costs no evaluation here (Kernel Tuner's rule: a configuration counts once), and a
    run that finds no new configuration in 10,000 steps in a row stops early (pattern
    search, for one, converges and then proposes the same configurations forever). With
    `--repeats-cost` every step is an evaluation, as in pyATF itself, which has no cache (the
    trace repeats the value; the strategy is labelled `<technique>+repeats`).
Budget per space: max(n_max, 220) distinct evaluations, the budget of every other tool.
"""
from __future__ import annotations

import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KT_PEER = os.path.join(HERE, "..", "..", "shared", "tools", "kt-peer")
sys.path.insert(0, KT_PEER)

from spaces import stem_of  # noqa: E402
from peer_runs import append_runs, arguments, choices, shared_spaces, trace  # noqa: E402

import pyatf  # noqa: E402
from pyatf import TP, Set, Tuner  # noqa: E402
from pyatf.search_techniques import (  # noqa: E402
    AUCBandit,
    DifferentialEvolution,
    PatternSearch,
    SimulatedAnnealing,
    Torczon,
)
from pyatf.tuning_data import CostFunctionError  # noqa: E402

TOOL = "pyatf-" + getattr(pyatf, "__version__", "0.0.13")
TECHNIQUES = {
    "auc_bandit": AUCBandit,  # pyATF's default
    "simulated_annealing": SimulatedAnnealing,
    "differential_evolution": DifferentialEvolution,
    "pattern_search": PatternSearch,
    "torczon": Torczon,
}


STALL_LIMIT = 10_000


def prefix_constraint(names, prefixes):
    """A constraint over `names` (all earlier parameters and this one) that admits a value when
    the prefix it completes is in `prefixes`; pyATF reads the argument names off the
    signature, so the function is built with them."""
    args = ", ".join(names)
    src = f"def constraint({args}):\n    return ({args},) in prefixes\n"
    scope = {"prefixes": prefixes}
    exec(src, scope)
    return scope["constraint"]


def parameters(space):
    keys = space.keys
    params = space.data["tune_params"]
    configs = [tuple(json.loads(f"[{k}]")) for k in space.cache]
    tps = []
    for i, name in enumerate(keys):
        prefixes = {c[: i + 1] for c in configs}
        tps.append(TP(name, Set(*params[name]), prefix_constraint(keys[: i + 1], prefixes)))
    return tps


def run_one(space, tps, technique, seed, max_fevals, repeats_cost):
    random.seed(seed)
    keys = space.keys
    cache = space.cache
    known = {}
    values = []
    steps = repeats = 0

    def cost(config):
        key = ",".join(str(config[k]) for k in keys)
        nonlocal repeats
        if key in known:
            repeats += 1
            if repeats_cost:
                values.append(known[key])
        else:
            known[key] = space.value_of(cache[key])
            values.append(known[key])
        v = known[key]
        if v is None:
            raise CostFunctionError(f"{key} failed")
        return v

    tuner = Tuner().tuning_parameters(*tps).search_technique(TECHNIQUES[technique]()).verbosity(0)
    t0 = time.perf_counter()
    stalled = 0
    while len(values) < max_fevals and stalled < STALL_LIMIT:
        before = len(values)
        tuner.make_step(cost)
        steps += 1
        stalled = 0 if len(values) > before else stalled + 1
    strategy = technique + ("+repeats" if repeats_cost else "")
    return trace(TOOL, strategy, space, seed, values, t0, max_fevals=max_fevals, steps=steps, repeats=repeats)


def main():
    ap = arguments(__doc__, "folder for <technique>__<space>.jsonl", budget=False)
    ap.add_argument("--techniques", default="auc_bandit", help=f"comma-separated, of: {', '.join(TECHNIQUES)}")
    ap.add_argument("--repeats-cost", action="store_true", help="every step is an evaluation, repeats too")
    a = ap.parse_args()
    techniques = choices(ap, a.techniques, TECHNIQUES, "technique")
    for path, space, max_fevals in shared_spaces(a):
        tps = parameters(space)
        for t in techniques:
            label = t + ("+repeats" if a.repeats_cost else "")
            append_runs(
                os.path.join(a.out, f"{label}__{stem_of(path)}.jsonl"),
                a.seeds,
                lambda seed: run_one(space, tps, t, seed, max_fevals, a.repeats_cost),
                lambda seed, rec: (
                    f"{label:22s} {space.stem:20s} seed {seed:3d} evals {len(rec['values']):4d}/{max_fevals}"
                    f" steps {rec['meta']['steps']:6d} repeats {rec['meta']['repeats']:5d}"
                    f" {rec['wall_seconds']:.1f}s"
                ),
            )


if __name__ == "__main__":
    main()
