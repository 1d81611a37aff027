#!/usr/bin/env python3
"""One configuration for several GPUs, from brute-forced caches: the robust configuration
(the least geometric-mean slowdown against each GPU's own optimum, over the configurations
that run on all of them; what `ktune export --default robust` exports) against copying one
GPU's best configuration to all (each copy's geometric-mean slowdown, or the GPUs where it
fails).

    python3 bench/robust_config.py CACHE... [--traces TRACES.jsonl]

With `--traces` (from `ktune bench CACHE... --instances`), also each strategy's found
configuration after 20, 60 and 220 evaluations: the mean over its runs of the geometric-mean
slowdown against each GPU's own optimum (the traces' values are geometric means of the raw
times, so the slowdown is the value over the geometric mean of the optima).
"""
import gzip
import json
import math
import sys


def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        doc = json.load(f)
    keys = doc["tune_params_keys"]
    out = {}
    for rec in doc["cache"].values():
        t = rec.get("time")
        config = tuple(rec[k] for k in keys)
        out[config] = t if isinstance(t, (int, float)) and math.isfinite(t) and t > 0 else None
    return out


def main(paths):
    caches = [load(p) for p in paths]
    names = [p.rsplit("/", 1)[-1].split(".")[0] for p in paths]
    best = [min(v for v in c.values() if v is not None) for c in caches]

    def slowdowns(config):
        return [None if c.get(config) is None else c[config] / b for c, b in zip(caches, best)]

    def geomean(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs))

    common = set(caches[0])
    for c in caches[1:]:
        common &= set(c)
    everywhere = [k for k in common if all(c[k] is not None for c in caches)]
    robust = min(everywhere, key=lambda k: geomean(slowdowns(k)))
    print(f"{len(everywhere)} configurations run on all {len(caches)} GPUs")
    s = slowdowns(robust)
    print(f"robust: geometric mean slowdown {geomean(s):.3f}, worst {max(s):.3f} ({names[s.index(max(s))]})  {robust}")
    for name, c, b in zip(names, caches, best):
        config = min((k for k, v in c.items() if v is not None), key=lambda k: c[k])
        s = slowdowns(config)
        failed = [n for n, x in zip(names, s) if x is None]
        if failed:
            ok = [x for x in s if x is not None]
            print(f"copy {name}'s best: fails on {', '.join(failed)}; on the others geometric mean {geomean(ok):.3f}")
        else:
            print(f"copy {name}'s best: geometric mean slowdown {geomean(s):.3f}, worst {max(s):.3f}")


def traces(path, paths):
    caches = [load(p) for p in paths]
    optima = [min(v for v in c.values() if v is not None) for c in caches]
    reference = math.exp(sum(math.log(o) for o in optima) / len(optima))
    runs = {}
    for line in open(path):
        t = json.loads(line)
        runs.setdefault(t["strategy"], []).append(t["values"])
    print(f"\nfound by tuning (geometric-mean slowdown against each GPU's optimum; mean ± SE over runs):")
    for strategy, rs in sorted(runs.items()):
        cells = []
        for n in (20, 60, 220):
            found = []
            for values in rs:
                ok = [v for v in values[:n] if v is not None]
                if ok:
                    found.append(min(ok) / reference)
            mean = sum(found) / len(found)
            se = (sum((x - mean) ** 2 for x in found) / (len(found) - 1)) ** 0.5 / len(found) ** 0.5 if len(found) > 1 else 0.0
            cells.append(f"@{n} {mean:.3f} ± {se:.3f}")
        print(f"  {strategy} ({len(rs)} runs): " + ", ".join(cells))


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--traces" in args:
        i = args.index("--traces")
        path = args[i + 1]
        del args[i:i + 2]
        main(args)
        traces(path, args)
    else:
        main(args)
