#!/usr/bin/env python
"""Run BaCO (the paper's own code) on the brute-forced spaces and write kt-peer traces, so
that `ktune bench score` scores it beside ktune, Kernel Tuner, Optuna and pyATF.

BaCO is not on PyPI; it runs from its repository (Python 3.11 works, though its setup.py
says <= 3.10), with PyTorch, GPy, BoTorch and GPyTorch installed:

    git clone https://github.com/baco-authors/baco /tmp/baco-src    # measured: 167b196
    pip install torch optuna GPy botorch gpytorch scikit-learn matplotlib jsonschema \
        numexpr networkx graphviz
    PYTHONPATH=/tmp/baco-src python bench/baco_peer.py --seeds 0-4 --budget 60 \
        --out /tmp/baco ../shared/data/spaces/*.json.gz

How it meets the spaces:
  * every numeric parameter is `ordinal` over its values (with BaCO's log transform where
    the values are positive and span a factor of 16 or more, as BaCO's own scenarios write
    powers of two), any other parameter `categorical`;
  * the known constraints are the cache's configurations, given as one constraint per
    parameter that admits the values whose prefix (this parameter and the ones before it)
    begins a configuration of the cache, with the parameters before it as dependencies.
    BaCO builds its chain of trees from exactly these, so it samples and searches only
    inside the space, as it does with the numexpr constraints of its own scenarios. The
    constraint strings are evaluated by a replacement of BaCO's `evaluate_constraints`
    (numexpr cannot test membership in a set), which is the only change to BaCO;
  * a configuration that failed when brute-forced (a hidden constraint) is an evaluation,
    returned as `Valid: False`, with BaCO's feasibility model on (the paper's set-up);
  * everything else is BaCO's default: 10 random samples, then a GP with EI optimised by
    local search. BaCO allows duplicate samples by default; a configuration proposed again
    is returned its known value and costs no evaluation (Kernel Tuner's rule: a
    configuration counts once). A run that finds nothing new in 20 x its budget of
    proposals stops (the scorer keeps its last best).
Budget per space: max(n_max, 220) distinct evaluations unless --budget is given; with a
smaller budget only the scores up to it (@20, @60) compare with the other tools.
"""
from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KT_PEER = os.path.join(HERE, "..", "..", "shared", "tools", "kt-peer")
sys.path.insert(0, KT_PEER)

from spaces import stem_of  # noqa: E402
from peer_runs import append_runs, arguments, numeric, shared_spaces, trace  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import baco.param.constraints as baco_constraints  # noqa: E402
from baco import run as baco_run  # noqa: E402

TOOL = "baco-167b196"
PREFIX = "in_space_prefix_"
numexpr_constraints = baco_constraints.evaluate_constraints


class Membership:
    """The space's configurations as prefix sets, one per parameter, keyed by BaCO's
    'original' values mapped back to the cache's spelling."""

    def __init__(self, space):
        params = space.data["tune_params"]
        # A parameter with one value is a constant to a BaCO user (and its normalisation
        # divides by its range), so BaCO sees only the others.
        self.tuned = [k for k in space.keys if len(params[k]) > 1]
        self.fixed = {k: str(params[k][0]) for k in space.keys if len(params[k]) == 1}
        self.spell = {k: {_norm(v): str(v) for v in params[k]} for k in self.tuned}
        index = [space.keys.index(k) for k in self.tuned]
        configs = [tuple(key.split(",")[i] for i in index) for key in space.cache]
        self.prefixes = [{c[: i + 1] for c in configs} for i in range(len(self.tuned))]

    def cache_key(self, space, config):
        return ",".join(
            self.fixed[k] if k in self.fixed else self.spelled(k, config[k]) for k in space.keys
        )

    def spelled(self, name, value):
        return self.spell[name][_norm(value)]

    def evaluate(self, constraints, configurations):
        ours = [c for c in constraints if c.startswith(PREFIX)]
        others = [c for c in constraints if not c.startswith(PREFIX)]
        n = len(next(iter(configurations.values())))
        if n == 0:
            return []
        feasible = np.ones(n, dtype=bool)
        if others:
            feasible &= np.array(numexpr_constraints(others, configurations), dtype=bool)
        for c in ours:
            k = int(c[len(PREFIX):])
            names = self.tuned[: k + 1]
            columns = [[self.spelled(name, v) for v in configurations[name]] for name in names]
            prefixes = self.prefixes[k]
            feasible &= np.array([tuple(row) in prefixes for row in zip(*columns)], dtype=bool)
        return list(feasible)


def _norm(v):
    # BaCO hands back ordinal values as floats or 0-d tensors (16.0 for 16); categoricals
    # as strings.
    if isinstance(v, torch.Tensor):
        v = v.item()
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    return str(v)


def scenario(space, membership, run_dir, iterations):
    params = space.data["tune_params"]
    inputs = {}
    for i, k in enumerate(membership.tuned):
        values = list(params[k])
        if numeric(values):
            p = {"parameter_type": "ordinal", "values": sorted(values)}
            if min(values) > 0 and max(values) / min(values) >= 16:
                p["transform"] = "log"
        else:
            p = {"parameter_type": "categorical", "values": [str(v) for v in values]}
        p["constraints"] = [f"{PREFIX}{i}"]
        if i > 0:
            p["dependencies"] = list(membership.tuned[:i])
        inputs[k] = p
    return {
        "application_name": space.stem,
        "optimization_objectives": ["time"],
        "optimization_iterations": iterations,
        "feasible_output": {
            "enable_feasible_predictor": True,
            "name": "Valid",
            "true_value": "True",
            "false_value": "False",
        },
        "input_parameters": inputs,
        "run_directory": run_dir,
        "log_file": os.path.join(run_dir, "baco.log"),
        "output_data_file": os.path.join(run_dir, "samples.csv"),
    }


class Enough(Exception):
    pass


def run_one(space, membership, seed, max_fevals):
    cache = space.cache
    known = {}
    values = []
    proposals = repeats = 0
    limit = 20 * max_fevals

    def black_box(config):
        nonlocal proposals, repeats
        proposals += 1
        key = membership.cache_key(space, config)
        if key not in cache:
            raise RuntimeError(f"BaCO proposed {key}, outside the space it was given")
        if key in known:
            repeats += 1
        else:
            if len(values) >= max_fevals:
                raise Enough()
            known[key] = space.value_of(cache[key])
            values.append(known[key])
        if proposals >= limit:
            raise Enough()
        v = known[key]
        return {"time": v if v is not None else 0.0, "Valid": v is not None}

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    stdout = sys.stdout
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as run_dir:
        try:
            # A file, not a dict: BaCO fills in its defaults only when it reads a file.
            settings = os.path.join(run_dir, "scenario.json")
            with open(settings, "w") as f:
                json.dump(scenario(space, membership, run_dir, limit), f)
            baco_run.optimize(settings, black_box)
        except Enough:
            pass
        finally:
            sys.stdout = stdout  # BaCO replaces sys.stdout with its logger
    return trace(TOOL, "baco", space, seed, values, t0, max_fevals=max_fevals, proposals=proposals, repeats=repeats)


def main():
    a = arguments(__doc__, "folder for baco__<space>.jsonl", seeds="0-4").parse_args()
    for path, space, max_fevals in shared_spaces(a):
        membership = Membership(space)
        baco_constraints.evaluate_constraints = membership.evaluate
        append_runs(
            os.path.join(a.out, f"baco__{stem_of(path)}.jsonl"),
            a.seeds,
            lambda seed: run_one(space, membership, seed, max_fevals),
            lambda seed, rec: (
                f"baco {space.stem:20s} seed {seed:3d} evals {len(rec['values']):4d}/{max_fevals}"
                f" proposals {rec['meta']['proposals']:5d} repeats {rec['meta']['repeats']:5d}"
                f" {rec['wall_seconds']:.1f}s"
            ),
        )


if __name__ == "__main__":
    main()
