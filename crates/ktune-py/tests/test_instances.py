"""``Study.optimize(fn, instances=...)``: one configuration for several instances (problem
sizes, inputs): ``fn`` sees each instance's variables beside the configuration, the value is
the geometric mean, each instance's value is observed, a failure on one fails the
configuration naming it, and mistaken instances are named before anything runs."""

import math

import pytest

import ktune

SPACE = {"X": [1, 2, 3, 4, 5]}


def cost(c):
    if c["X"] == 5 and c["N"] == 400:
        raise RuntimeError("crashed")
    d = c["X"] - c["N"] // 100
    return d * d + 1 + c["N"] // 100


def test_the_least_geometric_mean_wins_and_each_instance_is_kept():
    study = ktune.Study(SPACE, strategy="brute_force")
    best = study.optimize(cost, instances={"n100": {"N": 100}, "n400": {"N": 400}})
    # X = 2: 3 and 9, though each instance alone is best elsewhere (X = 1 and X = 4).
    assert best["config"] == {"X": 2}
    assert math.isclose(best["value"], math.sqrt(27))
    results = study.results
    by_x = {r["config"]["X"]: r for r in results}
    assert by_x[2]["observed"] == {"value@n100": 3.0, "value@n400": 9.0}
    assert by_x[5]["status"] == "runtime"
    assert by_x[5]["reason"] == "RuntimeError: instance n400: crashed"
    assert "N" not in by_x[1]["config"]


def test_mistaken_instances_are_named_before_anything_runs():
    study = ktune.Study(SPACE, strategy="brute_force")
    calls = []
    for bad, exc, said in [
        ([{"N": 1}], TypeError, "instances must be a dict of names to dicts of variables"),
        ({}, ValueError, "instances is empty"),
        ({"a": 3}, TypeError, r"instances\['a'\] must be a dict of variables, not 3"),
        ({"a": {"X": 1}}, ValueError, r"instances\['a'\]: variable 'X' is also a parameter"),
    ]:
        with pytest.raises(exc, match=said):
            study.optimize(lambda c: calls.append(c) or 1.0, instances=bad)
    assert calls == [] and study.results == []
    study.optimize(lambda c: -1.0, max_evals=1, instances={"a": {"N": 1}})
    (r,) = study.results
    assert "instance a: the objective returned -1" in r["reason"]
