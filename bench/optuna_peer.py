#!/usr/bin/env python
"""Run Optuna's samplers on the brute-forced spaces and write kt-peer traces, so that
`ktune bench score` (or kt-peer's score.py) scores them beside ktune and Kernel Tuner.

    target/optuna-venv/bin/python bench/optuna_peer.py --samplers tpe \
        --seeds 0-49 --out /tmp/optuna ../shared/data/spaces/*.json.gz

Each parameter is a categorical of its values (what an Optuna user writes for a Kernel
Tuner-style `tune_params` dict: the values are not evenly spaced, often powers of two).
Optuna cannot restrict its proposals to a constrained space; its documented way to learn
constraints is the sampler's `constraints_func` (a trial whose constraint value is > 0 is
infeasible, and TPE ranks every feasible trial above it). With the `tpe` sampler:
  * a proposal outside the space (a configuration the brute-forced cache does not hold,
    i.e. one that breaks a known constraint) is told as infeasible (constraint 1) and costs
    no evaluation, as a constraint check costs no compile;
  * a configuration in the space that failed when brute-forced (a hidden constraint) is an
    evaluation (null in the trace), told as infeasible the same way;
  * a configuration proposed again is told its known value and costs no evaluation (Kernel
    Tuner's rule: a configuration counts once).
With `tpe-fail`, both kinds are told as failed trials instead (the other common way, which
TPE learns nothing from). A run that gets no new configuration in 50 x its budget of asks
stops early (the scorer keeps its last best). Infeasible trials are told the value 1e30: TPE
ranks them by their constraint, never by that value (the GP sampler: see SAMPLERS).
Budget per space: max(n_max, 220) distinct evaluations, the budget of every other tool,
unless --budget is given (the GP sampler refits on every ask, infeasible ones included, and
took over 27 minutes for 743 asks on convolution_A100, whose budget is 926); with a smaller
budget only the scores up to it (@20, @60) compare with the other tools.

With `--objective A,B` (two recorded keys) the study has two objectives (each minimised, or
maximised where its name is a rate, as ktune guesses): the `tpe` sampler is then Optuna's
multi-objective TPE (MOTPE, its default for several objectives), told the constraints the same
way (an infeasible trial is told (1e30, 1e30)), and each trace also holds `points`, both values
of every evaluation, for `ktune bench score --objective A,B`. The budget per space is then
ktune's for two objectives: max(n_max, the front's n_max, 220), capped at the space's size
(the front's n_max from `bench/front_score.py`).
"""
from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KT_PEER = os.path.join(HERE, "..", "..", "shared", "tools", "kt-peer")
sys.path.insert(0, KT_PEER)

from spaces import stem_of  # noqa: E402
from peer_runs import append_runs, arguments, choices, numeric, shared_spaces, trace  # noqa: E402

import front_score  # noqa: E402
import optuna  # noqa: E402

TOOL = f"optuna-{optuna.__version__}"
SAMPLERS = {
    # Optuna's default sampler, with its defaults (multivariate since Optuna 5), told the
    # constraints.
    "tpe": lambda seed: optuna.samplers.TPESampler(seed=seed, constraints_func=violation),
    # The same, with infeasible and failed configurations told as failed trials.
    "tpe-fail": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
    # Optuna's Gaussian-process sampler (needs PyTorch), told the constraints the same way:
    # it models the constraint with a second GP and weighs its acquisition by the chance
    # of feasibility. Unlike TPE it also fits its objective GP to the values of infeasible
    # trials, so those are told the worst value seen so far (1e30 would swamp the
    # standardised values); before any value exists they are failed trials.
    "gp": lambda seed: optuna.samplers.GPSampler(seed=seed, constraints_func=violation),
    # The same GP, with every numeric parameter given as an integer: the position of its
    # value in its sorted list (so the GP sees their order, which a categorical hides).
    "gp-ordinal": lambda seed: optuna.samplers.GPSampler(seed=seed, constraints_func=violation),
    # The GP told infeasible and failed configurations as failed trials (left out of its
    # model), like tpe-fail.
    "gp-fail": lambda seed: optuna.samplers.GPSampler(seed=seed),
}


def violation(trial):
    return (trial.user_attrs.get("violation", 0.0),)


INFEASIBLE = 1e30
# Asks per evaluation of the budget before a run stops (--ask-factor).
ASK_FACTOR = 50


def run_one(space, sampler_name, seed, max_fevals, objectives=None):
    params = space.data["tune_params"]
    keys = space.keys
    cache = space.cache
    signs = [front_score.guess_sign(k) for k in objectives] if objectives else None
    if objectives:
        study = optuna.create_study(directions=["minimize", "minimize"], sampler=SAMPLERS[sampler_name](seed))
    else:
        study = optuna.create_study(direction="minimize", sampler=SAMPLERS[sampler_name](seed))
    ordinal = sampler_name == "gp-ordinal"
    sorted_values = {k: sorted(params[k]) if numeric(params[k]) else list(params[k]) for k in keys}

    def distribution(k):
        if ordinal and numeric(params[k]) and len(params[k]) > 1:
            return optuna.distributions.IntDistribution(0, len(params[k]) - 1)
        return optuna.distributions.CategoricalDistribution(list(params[k]))

    def value(k, v):
        return sorted_values[k][v] if isinstance(dists[k], optuna.distributions.IntDistribution) else v

    dists = {k: distribution(k) for k in keys}
    known = {}  # cache key -> value (None: failed)
    values = []
    points = []

    def point_of(record):
        """Both objectives' raw values, or None where it failed or lacks one."""
        if space.value_of(record) is None:
            return None
        out = []
        for k in objectives:
            v = record.get(k)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v != v:
                return None
            out.append(float(v))
        return out
    asks = infeasible = repeats = 0
    ask_limit = ASK_FACTOR * max_fevals
    constrained = not sampler_name.endswith("-fail")
    impute = sampler_name in ("gp", "gp-ordinal")

    def tell_infeasible(trial):
        feasible = [v for v in known.values() if v is not None]
        if objectives and constrained:
            trial.set_user_attr("violation", 1.0)
            study.tell(trial, [INFEASIBLE, INFEASIBLE])
        elif constrained and not (impute and not feasible):
            trial.set_user_attr("violation", 1.0)
            study.tell(trial, max(feasible) if impute else INFEASIBLE)
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)

    t0 = time.perf_counter()
    while len(values) < max_fevals and asks < ask_limit:
        trial = study.ask(dists)
        asks += 1
        key = ",".join(str(value(k, trial.params[k])) for k in keys)
        if key not in cache:
            infeasible += 1
            tell_infeasible(trial)
            continue
        if key in known:
            repeats += 1
        elif objectives:
            p = point_of(cache[key])
            known[key] = p
            values.append(p[0] if p else None)
            points.append(p)
        else:
            known[key] = space.value_of(cache[key])
            values.append(known[key])
        v = known[key]
        if v is None:
            tell_infeasible(trial)
        elif objectives:
            study.tell(trial, [s * x for s, x in zip(signs, v)])
        else:
            study.tell(trial, v)
    meta = dict(max_fevals=max_fevals, asks=asks, infeasible=infeasible, repeats=repeats)
    rec = trace(TOOL, sampler_name, space, seed, values, t0, **meta)
    if objectives:
        rec["points"] = points
    return rec


def main():
    ap = arguments(__doc__, "folder for <sampler>__<space>.jsonl")
    ap.add_argument("--samplers", default="tpe", help=f"comma-separated, of: {', '.join(SAMPLERS)}")
    ap.add_argument("--objective", help="two recorded keys, A,B: a study of two objectives (see above)")
    ap.add_argument("--ask-factor", type=int, default=50,
                    help="stop a run after this many asks per evaluation of its budget (default 50; "
                         "Kernel Tuner's peer script stops at 10)")
    a = ap.parse_args()
    global ASK_FACTOR
    ASK_FACTOR = a.ask_factor
    samplers = choices(ap, a.samplers, SAMPLERS, "sampler")
    objectives = a.objective.split(",") if a.objective else None
    if objectives and len(objectives) != 2:
        ap.error("--objective takes two keys")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for path, space, max_fevals in shared_spaces(a):
        if objectives and not a.budget:
            front = front_score.Front(space.stem, front_score.points_of(space.data, objectives),
                                      [front_score.guess_sign(k) for k in objectives])
            max_fevals = min(max(max_fevals, front.n_max), front.n_total)
        for s in samplers:
            append_runs(
                os.path.join(a.out, f"{s}__{stem_of(path)}.jsonl"),
                a.seeds,
                lambda seed: run_one(space, s, seed, max_fevals, objectives),
                lambda seed, rec: (
                    f"{s:17s} {space.stem:20s} seed {seed:3d} evals {len(rec['values']):4d}/{max_fevals}"
                    f" asks {rec['meta']['asks']:6d} infeasible {rec['meta']['infeasible']:6d}"
                    f" repeats {rec['meta']['repeats']:5d} {rec['wall_seconds']:.1f}s"
                ),
            )


if __name__ == "__main__":
    main()
