"""The GP hyperparameter fit of scikit-learn beside ktune's, on the same data: 200 random
configurations of a brute-forced space (parameters normalised to [0, 1], log run times,
standardised), Matérn 5/2 with one lengthscale per parameter, an output scale and a noise term.

    python3 bench/gp_fit_sklearn.py ../shared/data/spaces/dedispersion_A100.json.gz --out gp-data.json
    cargo run --release -p ktune-model --example gp_fit_time -- gp-data.json

This script writes the data set and prints scikit-learn's time per fit (L-BFGS-B from the
initial kernel plus `restarts` random restarts, as BaCO's multistart does); the example times
ktune's fit (a first fit and a warm refit) on the same file.
"""
import argparse
import gzip
import json
import time

import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

ap = argparse.ArgumentParser()
ap.add_argument("space")
ap.add_argument("--n", type=int, default=200)
ap.add_argument("--restarts", type=int, default=5)
ap.add_argument("--repeats", type=int, default=5)
ap.add_argument("--out", default="gp-data.json")
args = ap.parse_args()

with gzip.open(args.space, "rt") as f:
    data = json.load(f)
params = {k: v for k, v in data["tune_params"].items() if len(v) > 1}
rows = [e for e in data["cache"].values() if isinstance(e.get("time"), (int, float))]
rng = np.random.default_rng(1)
pick = rng.choice(len(rows), size=args.n, replace=False)
X = np.array([[(rows[i][k] - min(v)) / (max(v) - min(v)) for k, v in params.items()] for i in pick])
y = np.log(np.array([rows[i]["time"] for i in pick]))
y = (y - y.mean()) / y.std()
with open(args.out, "w") as f:
    json.dump({"x": X.tolist(), "y": y.tolist()}, f)

kernel = ConstantKernel(1.0) * Matern(length_scale=np.ones(X.shape[1]), nu=2.5) + WhiteKernel(1e-3)
times = []
for r in range(args.repeats):
    gp = GaussianProcessRegressor(kernel=kernel, n_restarts_optimizer=args.restarts, random_state=r)
    t = time.perf_counter()
    gp.fit(X, y)
    times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({
    "tool": "scikit-learn " + __import__("sklearn").__version__,
    "n": args.n,
    "dims": X.shape[1],
    "restarts": args.restarts,
    "median_fit_ms": 1e3 * times[len(times) // 2],
    "log_marginal_likelihood": gp.log_marginal_likelihood_value_,
}))
