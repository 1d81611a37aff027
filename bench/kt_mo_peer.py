#!/usr/bin/env python
"""Run Kernel Tuner's multi-objective strategies (NSGA-II and NSGA-III, through pymoo) in
simulation mode on brute-forced caches and write kt-peer traces with `points`, so that
`ktune bench score --objective A,B` scores them beside ktune's multi-objective strategies.

    /tmp/kt-ocl-venv/bin/python bench/kt_mo_peer.py --strategies nsga2,nsga3 \
        --objective time,compile_time --seeds 0-4 --budgets-from /tmp/s10/mo_nsga/traces.jsonl \
        --out /tmp/kt_mo ../shared/data/spaces/*.json.gz
    target/release/ktune bench score --objective time,compile_time /tmp/kt_mo/*.jsonl \
        ../shared/data/spaces/*.json.gz

Kernel Tuner 1.5 tunes several objectives when `tune_kernel` is given
`objectives={"time": False, "compile_time": False}` (key: higher is better) or lists for
`objective` / `objective_higher_is_better`; its strategies `nsga2` and `nsga3`
(kernel_tuner/strategies/pymoo_minimize.py, needing pymoo, a hard dependency of 1.5) are the
ones that use the vector; they run with their defaults here (population 20, two-point
crossover, Hamming-neighbour mutation with probability 0.1, NSGA-III's 20 "energy" reference
directions) and with `seed=` (pymoo's generator; Python's and numpy's global ones, which
Kernel Tuner's sampling and mutation use, are seeded too).

As in kt-peer's kt_run.py, the space is restricted to the cache's configurations (failed
ones included), so Kernel Tuner faces the same feasible space as every other tool. Kernel
Tuner counts a configuration once (`max_fevals` counts distinct ones; a revisit is served
from the cache for free), so a run stops at exactly its budget of distinct evaluations unless
pymoo stalls: a run that has been served `--stall-factor` (10) x its budget of configurations
(revisits included) is stopped, and `meta.stop` says why it ended. The trace holds the
distinct configurations in order of first evaluation, each with the cache's values (the
ground truth; `values` the first objective, `points` both, null where it failed). Kernel
Tuner's own view differs in two ways the traces do not show: a failed configuration costs
(float max, float max), and its simulation runner serves a revisited configuration with
`compile_time` = 0 (it imitates the real runner's cache hit), which NSGA-II then takes for
a compile time of zero; `meta.revisits` counts them. `--keep-revisit-compile-time` (a
diagnostic, not Kernel Tuner as shipped) serves revisits with their cached compile time
instead, and names the strategy `<name>:revisit_compile_time=kept`.

Budget per space: `--budgets-from` a ktune trace file (the length of its runs' `values` for
that space, the way `ktune bench` gave it to its own strategies), else `--budget`, else
ktune's rule for two objectives: max(n_max, the front's n_max, 220), capped at the space's
size (from `bench/front_score.py`; slow on the larger spaces). Traces go to
`<out>/<strategy>__<space>.jsonl`, one line per seed; a seed already there is skipped.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
KT_PEER = os.path.join(HERE, "..", "..", "shared", "tools", "kt-peer")
sys.path.insert(0, KT_PEER)

from kt_run import _install_kt_patches, make_restriction  # noqa: E402
from peer_runs import append_runs, arguments, choices, shared_spaces, trace  # noqa: E402
from spaces import is_valid_value, stem_of, write_plain_cache  # noqa: E402

STRATEGIES = ("nsga2", "nsga3")


class Stalled(Exception):
    pass


def tool_name():
    import kernel_tuner

    return f"kernel_tuner-{kernel_tuner.__version__}"


def budgets_from(path):
    """Per space, the number of distinct evaluations ktune's runs got (every run of a space
    must agree)."""
    out = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            n = len(r["values"])
            if out.setdefault(r["space"], n) != n:
                raise SystemExit(f"{path}: runs of {r['space']} differ in length ({out[r['space']]} and {n})")
    return out


def point_of(record, objectives):
    """Both objectives' values from the cache, or None where the configuration failed."""
    out = []
    for k in objectives:
        v = record.get(k)
        if not is_valid_value(v):
            return None
        out.append(float(v))
    return out


def install_stall_guard():
    """Count the configurations the simulation runner serves (revisits included) and stop
    a run, through Kernel Tuner's own stop exception, past its limit."""
    import kernel_tuner.util as ktu
    from kernel_tuner.runners.simulation import SimulationRunner

    if getattr(SimulationRunner, "_kt_mo_guard", False):
        return
    orig_run = SimulationRunner.run

    def run(self, parameter_space, tuning_options):
        parameter_space = list(parameter_space)
        SimulationRunner.served += len(parameter_space)
        if SimulationRunner.served > SimulationRunner.serve_limit:
            SimulationRunner.stalled = True
            raise ktu.StopCriterionReached("stalled: serve limit reached")
        return orig_run(self, parameter_space, tuning_options)

    SimulationRunner.run = run
    SimulationRunner._kt_mo_guard = True


def keep_revisit_compile_time():
    """Diagnostic: Kernel Tuner's simulation runner serves a revisited configuration with its
    compile, verification and benchmark times set to 0; keep the compile time."""
    import kernel_tuner.util as ktu

    def without_benchmark_timings(result):
        result = dict(result)
        result["verification_time"] = 0
        result["benchmark_time"] = 0
        return result

    ktu.copy_without_benchmark_timings = without_benchmark_timings


def run_one(space, plain_cache, restriction, strategy, seed, max_fevals, objectives, stall_factor, label):
    import random

    import numpy as np
    import kernel_tuner.util as ktu
    from kernel_tuner import tune_kernel
    from kernel_tuner.runners.simulation import SimulationRunner

    d = space.data
    SimulationRunner.served = 0
    SimulationRunner.serve_limit = stall_factor * max_fevals
    SimulationRunner.stalled = False
    random.seed(seed)
    np.random.seed(seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, env = tune_kernel(
            d["kernel_name"],
            "",  # the kernel's source is not used in simulation mode
            # Optional in the format (a ktune study whose size is an expression has none);
            # the simulation does not use it.
            tuple(d["problem_size"]) if isinstance(d.get("problem_size"), list) else d.get("problem_size", 1),
            [],
            d["tune_params"],
            restrictions=[restriction],
            cache=plain_cache,
            simulation_mode=True,
            strategy=strategy,
            strategy_options={"max_fevals": int(max_fevals)},
            objectives={k: False for k in objectives},
            seed=int(seed),
            quiet=True,
            verbose=False,
        )
    keys = space.keys
    cache = space.cache
    seen = set()
    values, points = [], []
    revisits = outside = failed = none = 0
    marks = {m * max_fevals: None for m in (1, 2, 5, 10, 20, 50)}
    for i, r in enumerate(results):
        if i in marks:
            marks[i] = len(values)
        if r is None:
            none += 1
            continue
        key = ",".join(str(r[k]) for k in keys)
        if key not in cache:
            outside += 1
            continue
        if key in seen:
            revisits += 1
            continue
        seen.add(key)
        p = point_of(cache[key], objectives) if space.value_of(cache[key]) is not None else None
        if p is None:
            failed += 1
            assert "__error__" in r, (key, r)
        else:
            assert "__error__" not in r and math.isclose(float(r[objectives[0]]), p[0], rel_tol=1e-9), (key, r)
        values.append(p[0] if p else None)
        points.append(p)
    if SimulationRunner.stalled:
        stop = f"stalled ({SimulationRunner.served} configurations served)"
    elif len(values) >= max_fevals:
        stop = "evaluations"
    else:
        stop = "strategy ended"
    rec = trace(
        tool_name(), label, space, seed, values, t0,
        max_fevals=int(max_fevals), distinct=len(values), stop=stop, served=len(results),
        distinct_at_served={str(k): v for k, v in marks.items() if v is not None},
        revisits=revisits, outside_space=outside, failed=failed, none=none,
        searchspace_seconds=round(ktu._peers_ss.last_seconds, 4),
        kt_strategy_ms=round(float(env.get("total_strategy_time", float("nan"))), 3),
    )
    rec["points"] = points
    return rec


def main():
    # string hashing (set iteration order) can only be fixed at interpreter start
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, PYTHONHASHSEED="0"))
    ap = arguments(__doc__, "folder for <strategy>__<space>.jsonl", seeds="0-4")
    ap.add_argument("--strategies", default="nsga2", help=f"comma-separated, of: {', '.join(STRATEGIES)}")
    ap.add_argument("--objective", default="time,compile_time", help="two recorded keys, both minimised")
    ap.add_argument("--budgets-from", help="a ktune traces file: each space's budget is the length of its runs")
    ap.add_argument("--stall-factor", type=int, default=10,
                    help="stop a run once this many x its budget of configurations were served (default 10)")
    ap.add_argument("--keep-revisit-compile-time", action="store_true",
                    help="diagnostic: serve revisits with their cached compile time (see above)")
    a = ap.parse_args()
    strategies = choices(ap, a.strategies, STRATEGIES, "strategy")
    objectives = a.objective.split(",")
    if len(objectives) != 2:
        ap.error("--objective takes two keys")
    budgets = budgets_from(a.budgets_from) if a.budgets_from else {}
    _install_kt_patches()
    install_stall_guard()
    suffix = ""
    if a.keep_revisit_compile_time:
        keep_revisit_compile_time()
        suffix = ":revisit_compile_time=kept"
    started = time.perf_counter()
    for path, space, max_fevals in shared_spaces(a):
        if space.stem in budgets and not a.budget:
            max_fevals = budgets[space.stem]
        elif a.budgets_from and not a.budget:
            ap.error(f"{a.budgets_from} has no runs of {space.stem}")
        elif not a.budget:
            import front_score

            front = front_score.Front(space.stem, front_score.points_of(space.data, objectives), [1.0, 1.0])
            max_fevals = min(max(max_fevals, front.n_max), front.n_total)
        plain = write_plain_cache(space, os.path.join(a.out, "caches"))
        restriction = make_restriction(set(space.cache.keys()), space.keys)
        for s in strategies:
            label = s + suffix
            append_runs(
                os.path.join(a.out, f"{label}__{stem_of(path)}.jsonl"),
                a.seeds,
                lambda seed: run_one(space, plain, restriction, s, seed, max_fevals, objectives, a.stall_factor, label),
                lambda seed, rec: (
                    f"[{time.perf_counter() - started:7.1f}s] {label} {space.stem:20s} seed {seed:2d}"
                    f" distinct {len(rec['values']):4d}/{max_fevals} served {rec['meta']['served']:5d}"
                    f" revisits {rec['meta']['revisits']:5d} failed {rec['meta']['failed']:3d}"
                    f" stop {rec['meta']['stop']} {rec['wall_seconds']:.1f}s"
                ),
            )


if __name__ == "__main__":
    main()
