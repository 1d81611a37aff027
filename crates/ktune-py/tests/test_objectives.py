"""Studies of several objectives from Python: `objectives=`, values as dicts or sequences, the
Pareto front, and a stored study held to its objectives."""

import pytest

import ktune

PARAMS = {"x": [1, 2, 4, 8], "y": [1, 2, 3]}


def time_and_energy(c):
    # Time falls and energy rises with x; y only adds to both: the front is y = 1.
    return {"time": 100 / c["x"] + c["y"], "energy": 3 * c["x"] + c["y"]}


def test_a_study_of_two_objectives_records_both_and_gives_its_front():
    study = ktune.Study(PARAMS, strategy="auto", objectives={"time": "minimize", "energy": "minimize"}, max_evals=12)
    assert study.objectives == {"time": "minimize", "energy": "minimize"}
    assert study.objective == "time"
    study.optimize(time_and_energy)
    results = study.results
    assert len(results) == 12
    r = next(r for r in results if r["config"] == {"x": 2, "y": 3})
    assert r["value"] == 53.0 and r["objectives"] == {"time": 53.0, "energy": 9.0}
    front = study.pareto_front
    assert [(f["config"]["x"], f["config"]["y"]) for f in front] == [(8, 1), (4, 1), (2, 1), (1, 1)]
    # The best is the best of the first objective; a goal picks among the objectives.
    assert study.best["config"] == {"x": 8, "y": 1}
    assert study.pick("energy within 100% of time")["config"] == {"x": 4, "y": 1}
    assert study.pick("weighted time=1, energy=4")["config"] == {"x": 2, "y": 1}
    with pytest.raises(ValueError, match="`power` is not an objective"):
        study.pick("power within 5% of time")


def test_values_come_as_dicts_or_sequences_and_wrong_shapes_are_named():
    # Kernel Tuner 1.5's spelling: True where higher is better.
    study = ktune.Study(PARAMS, strategy="random", objectives={"time": False, "GFLOP/s": True}, max_evals=12)
    assert study.objectives == {"time": "minimize", "GFLOP/s": "maximize"}
    study.tell({"x": 1, "y": 1}, [2.0, 10.0])
    study.tell({"x": 2, "y": 1}, (1.0, 5.0))
    study.tell({"x": 4, "y": 1}, {"GFLOP/s": 20.0, "time": 3.0})
    # GFLOP/s is maximised: (1 s, 5), (2 s, 10) and (3 s, 20) each trade time for throughput.
    assert len(study.pareto_front) == 3
    study.tell({"x": 8, "y": 1}, (0.5, 30.0))  # dominates every other
    assert [f["config"] for f in study.pareto_front] == [{"x": 8, "y": 1}]
    for wrong, said in [
        (1.5, "give a dict with a number for each"),
        ([1.0], "a sequence of 2 numbers"),
        ({"time": 1.0}, "has no `GFLOP/s`"),
        ({"time": 1.0, "GFLOP/s": "fast"}, "`GFLOP/s` was 'fast', not a number"),
        ("12", "give a dict"),
    ]:
        with pytest.raises(ValueError, match=said.replace("(", r"\(").replace(")", r"\)")):
            study.tell({"x": 1, "y": 2}, wrong)
    # A value that is not finite is a failure, as with one objective.
    study.tell({"x": 1, "y": 3}, [float("nan"), 1.0])
    failed = [r for r in study.results if r["config"] == {"x": 1, "y": 3}][0]
    assert failed["status"] == "runtime" and "`time` was NaN" in failed["reason"]
    # In optimize, a wrong shape fails the configuration and tuning goes on.
    study.optimize(lambda c: 1.0, max_evals=1)
    assert any("give a dict" in (r["reason"] or "") for r in study.results)


def test_objectives_are_checked_and_one_objective_has_no_front():
    for objectives, said in [
        ({}, "empty"),
        ({"time": "fastest"}, "minimize"),
        ({"time": 3}, "True where higher is better"),
        (["time", "time"], "given twice"),
        ("time", "a dict of names"),
    ]:
        with pytest.raises(ValueError, match=said):
            ktune.Study(PARAMS, objectives=objectives)
    with pytest.raises(ValueError, match="not both"):
        ktune.Study(PARAMS, objective="speed", objectives=["time", "energy"])
    one = ktune.Study(PARAMS, max_evals=2)
    assert one.objectives == {"time": "minimize"}
    with pytest.raises(ValueError, match="one objective"):
        one.pareto_front
    with pytest.raises(ValueError, match="one objective"):
        one.pick("weighted time=1")
    # A list of names guesses the directions (rates are maximised).
    assert ktune.Study(PARAMS, objectives=["time", "GFLOP/s"]).objectives == {"time": "minimize", "GFLOP/s": "maximize"}


def test_a_stored_study_keeps_its_objectives(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    first = ktune.Study(PARAMS, objectives=["time", "energy"], storage=url, max_evals=6)
    first.optimize(time_and_energy)
    del first
    again = ktune.Study(PARAMS, objectives=["time", "energy"], storage=url, max_evals=12)
    assert len(again.results) == 6
    again.optimize(time_and_energy)
    assert len(again.results) == 12
    assert [f["config"]["y"] for f in again.pareto_front] == [1, 1, 1, 1]
    with pytest.raises(ktune.KtuneError, match="different tuning problem"):
        ktune.Study(PARAMS, objectives=["time", "power"], storage=url)


def test_a_goal_is_sought_checked_and_kept_by_a_stored_study(tmp_path):
    study = ktune.Study(PARAMS, objectives=["time", "energy"], goal="energy within 100% of time", max_evals=12)
    assert study.goal == "energy within 100% of time"
    study.optimize(time_and_energy)
    # The study's goal picks when none is given; another may be given.
    assert study.pick()["config"] == {"x": 4, "y": 1}
    assert study.pick("weighted time=1, energy=4")["config"] == {"x": 2, "y": 1}
    assert ktune.Study(PARAMS, objectives=["time", "energy"]).goal is None
    # A strategy that cannot seek a goal says so; the goal still picks.
    with pytest.warns(RuntimeWarning, match="strategy random does not seek the goal"):
        blind = ktune.Study(PARAMS, strategy="random", objectives=["time", "energy"], goal="energy within 100% of time", max_evals=12)
    blind.optimize(time_and_energy)
    assert blind.pick()["config"] == {"x": 4, "y": 1}
    with pytest.raises(ValueError, match="seeks no goal"):
        ktune.Study(PARAMS, objectives=["time", "energy"]).pick()
    for kwargs, said in [
        ({"objectives": ["time", "energy"], "goal": "power within 5% of time"}, "`power` is not an objective"),
        ({"goal": "weighted time=1"}, "give objectives= too"),
    ]:
        with pytest.raises(ValueError, match=said):
            ktune.Study(PARAMS, **kwargs)
    # A stored study records its goal: reopened without one, it seeks the same.
    url = f"sqlite:///{tmp_path / 'g.db'}"
    first = ktune.Study(PARAMS, objectives=["time", "energy"], goal="weighted time=1, energy=4", storage=url, max_evals=12)
    first.optimize(time_and_energy)
    del first
    again = ktune.Study(PARAMS, objectives=["time", "energy"], storage=url)
    assert again.goal == "weighted time=1, energy=4"
    assert again.pick()["config"] == {"x": 2, "y": 1}
    with pytest.warns(RuntimeWarning, match="started seeking `weighted time=1, energy=4`"):
        other = ktune.Study(PARAMS, objectives=["time", "energy"], goal="energy within 5% of time", storage=url)
    assert other.goal == "energy within 5% of time"
