"""What the peer scripts (`baco_peer.py`, `optuna_peer.py`, `pyatf_peer.py`) share: the
resumable loop that runs one tool on one space seed by seed and appends kt-peer traces, and
how a parameter's values are judged numeric. Import it after putting kt-peer on `sys.path`.
"""
from __future__ import annotations

import json

from kt_run import done_seeds, parse_seeds


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
