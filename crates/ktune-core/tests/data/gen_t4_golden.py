"""Writes kt_convolution_A100.t4.json: Kernel Tuner 1.5's own T4 export of a few records of
../shared/data/spaces/convolution_A100.json.gz (5 valid, 2 failed), for ktune's T4 import test.

    ~/.venvs/kt/bin/python gen_t4_golden.py
"""
import gzip
import json
import os

from kernel_tuner.file_utils import get_t4_results

here = os.path.dirname(os.path.abspath(__file__))
cache = json.load(gzip.open(os.path.join(here, "../../../../../shared/data/spaces/convolution_A100.json.gz")))
records = list(cache["cache"].values())
valid = [r for r in records if not isinstance(r["time"], str)][:5]
failed = [r for r in records if isinstance(r["time"], str)][:2]
for r in valid + failed:
    r.setdefault("strategy_time", 0)
out = get_t4_results(valid + failed, cache["tune_params"], "time")
with open(os.path.join(here, "kt_convolution_A100.t4.json"), "w") as f:
    json.dump(out, f, indent=1)
