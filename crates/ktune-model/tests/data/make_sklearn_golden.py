#!/usr/bin/env python3
"""Generates sklearn_golden.json: reference posteriors from scikit-learn.

GaussianProcessRegressor(kernel, alpha=noise, normalize_y=True, optimizer=None)
with fixed hyperparameters, on a few random problems per kernel kind.

Usage (throwaway venv):
    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install scikit-learn numpy
    /tmp/skl/bin/python make_sklearn_golden.py > sklearn_golden.json
"""
import json
import sys

import numpy as np
import sklearn
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

KINDS = {
    "Matern32": lambda ls: Matern(length_scale=ls, length_scale_bounds="fixed", nu=1.5),
    "Matern52": lambda ls: Matern(length_scale=ls, length_scale_bounds="fixed", nu=2.5),
    "Rbf": lambda ls: RBF(length_scale=ls, length_scale_bounds="fixed"),
}

# (n_train, dims, lengthscales, output_scale, noise, y_offset, y_scale)
SETTINGS = [
    (8, 1, [0.3], 1.0, 1e-10, 0.0, 1.0),
    (12, 3, [0.6], 2.5, 1e-10, 1e3, 5.0),
    (15, 4, [0.5, 1.0, 2.0, 0.8], 1.0, 1e-3, -40.0, 0.01),
    (10, 2, [0.4, 0.9], 0.7, 1e-6, 7.0, 300.0),
]


def main():
    rng = np.random.default_rng(20240611)
    problems = []
    for kind, make in KINDS.items():
        for n, d, ls, os_, noise, off, scale in SETTINGS:
            x = rng.uniform(0.0, 1.0, size=(n, d))
            y = off + scale * (np.sin(3.0 * x).sum(axis=1) + 0.3 * rng.standard_normal(n))
            xt = rng.uniform(-0.2, 1.2, size=(9, d))
            ls_arg = ls[0] if len(ls) == 1 else np.array(ls)
            kernel = ConstantKernel(os_, constant_value_bounds="fixed") * make(ls_arg)
            gp = GaussianProcessRegressor(
                kernel=kernel, alpha=noise, normalize_y=True, optimizer=None
            ).fit(x, y)
            mean, std = gp.predict(xt, return_std=True)
            # Condition number of K + noise·I: errors of any solver scale with it.
            cond = float(np.linalg.cond(gp.kernel_(x) + noise * np.eye(n)))
            problems.append(
                {
                    "kind": kind,
                    "lengthscales": ls,
                    "output_scale": os_,
                    "noise": noise,
                    "x": x.tolist(),
                    "y": y.tolist(),
                    "x_test": xt.tolist(),
                    "mean": mean.tolist(),
                    "std": std.tolist(),
                    "log_marginal_likelihood": float(gp.log_marginal_likelihood_value_),
                    "cond": cond,
                }
            )
    json.dump(
        {"sklearn_version": sklearn.__version__, "problems": problems},
        sys.stdout,
        separators=(",", ":"),
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
