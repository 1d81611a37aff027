"""What the peer scripts (`baco_peer.py`, `optuna_peer.py`, `pyatf_peer.py`) share: their
command line, the spaces with their budgets, the resumable loop that runs one tool on one space
seed by seed and appends kt-peer traces, a trace's fields, and how a parameter's values are
judged numeric. Import it after putting kt-peer on `sys.path`.
"""
from __future__ import annotations

import argparse
import json
import os
import time

from kt_run import budget_for, done_seeds, parse_seeds
from spaces import load_space


def arguments(doc, out_help, seeds="0-9", budget=True):
    """The options every peer script takes (spaces, --seeds, --out, and --budget unless
    `budget` is false); the script adds its own."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spaces", nargs="+", help="brute-forced Kernel Tuner caches (.json.gz)")
    ap.add_argument("--seeds", default=seeds, help="e.g. 0-49 or 0,3,7")
    if budget:
        ap.add_argument("--budget", type=int, help="distinct evaluations per run (default: the shared budget)")
    ap.add_argument("--out", required=True, help=out_help)
    return ap


def choices(ap, text, known, what):
    """The comma-separated names of `text`, each one of `known` (else the usage error names it)."""
    names = text.split(",")
    for n in names:
        if n not in known:
            ap.error(f"unknown {what} {n!r}; known: {', '.join(known)}")
    return names


def shared_spaces(a):
    """`(path, space, evaluations)` for each space the parsed arguments `a` name: the shared
    budget, or `--budget` where given. Makes the output folder."""
    os.makedirs(a.out, exist_ok=True)
    for path in a.spaces:
        space = load_space(path, "shared")
        _, max_fevals = budget_for(space)
        yield path, space, getattr(a, "budget", None) or max_fevals


def trace(tool, strategy, space, seed, values, started, **meta):
    """A kt-peer trace: the distinct values in the order measured, the wall time since
    `started` (a `time.perf_counter()`), and the tool's own counts in `meta`."""
    return dict(
        tool=tool,
        strategy=strategy,
        space=space.stem,
        seed=int(seed),
        values=values,
        wall_seconds=round(time.perf_counter() - started, 4),
        meta=meta,
    )


def numeric(values):
    """Whether every value is a number (booleans are not)."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def append_runs(out, seeds, run_one, progress):
    """Runs `run_one(seed)` for each seed of `seeds` ("0-9" or "0,3,7") not yet in the trace
    file `out`, appending each trace as it finishes (so an interrupted run resumes), and
    prints `progress(seed, trace)` after each."""
    done = done_seeds(out)
    for seed in parse_seeds(seeds):
        if seed in done:
            continue
        rec = run_one(seed)
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(progress(seed, rec), flush=True)
