#!/usr/bin/env python3
"""Writes large specs for timing `ktune space` (issue 14): a Kernel Tuner cache with N records
of a parameter with N values, a T1 problem whose parameter is `[i for i in range(N)]`, and
`explode-K.toml` for K = 7 and 12: K parameters of 10 values tied by one constraint (10^K
combinations; 7 builds, 12 is refused).

    python3 bench/big_specs.py --out /tmp/big 50000 100000 200000
    /usr/bin/time -f "%e s %M KiB" ktune space /tmp/big/cache-200000.json
"""
import argparse
import json
import os

ap = argparse.ArgumentParser()
ap.add_argument("sizes", type=int, nargs="+")
ap.add_argument("--out", default="big-specs")
args = ap.parse_args()
os.makedirs(args.out, exist_ok=True)
for n in args.sizes:
    cache = {f"{i},1": {"x": i, "y": 1, "time": 1.0 + i % 7} for i in range(n)}
    doc = {"tune_params_keys": ["x", "y"], "tune_params": {"x": list(range(n)), "y": [1, 2]},
           "objective": "time", "cache": cache}
    with open(os.path.join(args.out, f"cache-{n}.json"), "w") as f:
        json.dump(doc, f)
    t1 = {"General": {"BenchmarkName": "big", "OutputFormat": "JSON"},
          "ConfigurationSpace": {"TuningParameters": [
              {"Name": "x", "Type": "int", "Values": f"[i for i in range({n})]"},
              {"Name": "y", "Type": "int", "Values": "[1, 2]"}], "Conditions": []},
          "Search": {"Name": "Random"}}
    with open(os.path.join(args.out, f"t1-{n}.json"), "w") as f:
        json.dump(t1, f)
for k in (7, 12):
    names = [f"p{i}" for i in range(k)]
    with open(os.path.join(args.out, f"explode-{k}.toml"), "w") as f:
        f.write(f'constraints = ["{" + ".join(names)} <= 30"]\n')
        for n in names:
            f.write(f'[[parameter]]\nname = "{n}"\nvalues = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n')
