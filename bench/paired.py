#!/usr/bin/env python3
"""Paired difference of two strategies' scores over the same seeds and spaces.

Scores every run with the reference scorer of `../shared/tools/kt-peer` (run it with the
Python of `target/peer-venv`, which has numpy), takes per seed the mean over spaces of
(score of A - score of B), and prints the mean over seeds and its standard error: the
seeds' shared luck (the same first samples) cancels, so this is tighter than comparing two
means with their own standard errors.

    target/peer-venv/bin/python bench/paired.py A.jsonl STRATEGY_A B.jsonl STRATEGY_B [--horizon N]
        [--per-space] [--space CACHE ...]

`--horizon N` scores the first N evaluations only (every space's n_max capped at N), as
`ktune bench score --horizon N` does: for runs made with a small `--budget`. `--per-space`
also prints the paired difference on each space. `--space CACHE` (repeatable) adds a cache
file beyond the shared spaces, e.g. the limit variants of `bench/failing_spaces.py`.

On a fresh machine, make that virtualenv first:

    python3 -m venv target/peer-venv && target/peer-venv/bin/pip install numpy scipy
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/tools/kt-peer"))
import score  # noqa: E402
from spaces import load_space, load_spaces, stem_of  # noqa: E402


def runs(path, strategy, stats):
    """The score of every run of `strategy` in the trace file `path`, by (space, seed). Says on
    standard error which of its spaces have no cache to score them with (they are left out),
    and which labels the file has when none is `strategy`."""
    d = {}
    labels = set()
    unscored = set()
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            labels.add(t["strategy"])
            if t["strategy"] != strategy:
                continue
            if t["space"] not in stats:
                unscored.add(t["space"])
                continue
            d[(t["space"], t["seed"])] = score.score_run(t["values"], stats[t["space"]])[0]
    if strategy not in labels:
        print(f"{path}: no runs of {strategy!r}; its strategies: {', '.join(sorted(labels))}", file=sys.stderr)
    if unscored:
        print(
            f"{path}: left out {strategy!r} on {', '.join(sorted(unscored))}: not a shared space "
            "(give its cache with --space CACHE)",
            file=sys.stderr,
        )
    return d


def stats_for(extra, horizon=None):
    """The reference scorer's statistics of the shared spaces and the `extra` cache files,
    each space's n_max capped at `horizon` when given."""
    spaces = load_spaces(("shared",))
    for path in extra:
        spaces[stem_of(path)] = load_space(path, "extra")
    stats = {s: score.SpaceStats(sp) for s, sp in spaces.items()}
    if horizon is not None:
        for st in stats.values():
            st.n_max = min(st.n_max, horizon)
    return stats


def take_value(args, flag, kind):
    """Removes `flag VALUE` from `args` and returns VALUE as `kind` (None without the flag)."""
    if flag not in args:
        return None
    i = args.index(flag)
    if i + 1 >= len(args):
        sys.exit(f"{flag} needs a value")
    try:
        value = kind(args[i + 1])
    except ValueError:
        sys.exit(f"{flag}: not a number: {args[i + 1]!r}")
    del args[i : i + 2]
    return value


def take_spaces(args):
    """Removes every `--space CACHE` pair from `args` and returns the cache paths."""
    extra = []
    while "--space" in args:
        i = args.index("--space")
        extra.append(args[i + 1])
        del args[i : i + 2]
    return extra


def main():
    args = sys.argv[1:]
    horizon = take_value(args, "--horizon", int)
    per_space = "--per-space" in args
    if per_space:
        args.remove("--per-space")
    extra = take_spaces(args)
    if len(args) != 4:
        sys.exit(__doc__)
    sys.argv[1:] = args
    stats = stats_for(extra, horizon)
    a = runs(sys.argv[1], sys.argv[2], stats)
    b = runs(sys.argv[3], sys.argv[4], stats)
    keys = set(a) & set(b)
    seeds = sorted({k[1] for k in keys})
    spaces = sorted({k[0] for k in keys})
    if len(seeds) < 2:
        sys.exit("need at least two seeds that both ran on the same spaces")
    # The mean over the spaces each seed ran on (traces that cover other seeds on some
    # spaces would otherwise count a missing run as no difference).
    per_seed = []
    for seed in seeds:
        d = [a[(s, seed)] - b[(s, seed)] for s in spaces if (s, seed) in keys]
        per_seed.append(sum(d) / len(d))
    m, se = score.mean_se(per_seed)
    print(f"{sys.argv[2]} - {sys.argv[4]}: {m:+.3f} ± {se:.3f} (paired over {len(seeds)} seeds x {len(spaces)} spaces)")
    if per_space:
        for sp in spaces:
            d = [a[(sp, seed)] - b[(sp, seed)] for seed in seeds if (sp, seed) in keys]
            if len(d) < 2:
                continue
            m, se = score.mean_se(d)
            print(f"  {sp}: {m:+.3f} ± {se:.3f} ({len(d)} seeds)")


if __name__ == "__main__":
    main()
