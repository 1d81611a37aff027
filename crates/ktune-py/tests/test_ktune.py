"""Tests of the ktune Python package: a real interpreter on the compiled extension."""

import itertools
import os
import sqlite3

import pytest

import ktune

PARAMS = {"bx": [16, 32, 64, 128], "by": [1, 2, 4, 8], "mode": ["a", "b"]}
RESTRICTIONS = ["bx * by <= 256"]


def brute_force(params, keep):
    names = list(params)
    return [
        dict(zip(names, values))
        for values in itertools.product(*params.values())
        if keep(dict(zip(names, values)))
    ]


def test_the_version_is_the_installed_distribution_s():
    from importlib.metadata import version

    assert ktune.__version__ == version("ktune")
    assert ktune.__version__.count(".") == 2


def test_the_space_holds_exactly_the_valid_configurations():
    space = ktune.SearchSpace(PARAMS, RESTRICTIONS)
    expected = brute_force(PARAMS, lambda c: c["bx"] * c["by"] <= 256)
    assert len(space) == space.size == len(expected)
    assert space.params == ["bx", "by", "mode"]
    listed = [space[i] for i in range(len(space))]
    assert sorted(map(repr, listed)) == sorted(map(repr, expected))
    assert space[-1] == listed[-1]
    for c in expected:
        assert c in space
    assert {"bx": 128, "by": 8, "mode": "a"} not in space
    assert {"bx": 17, "by": 1, "mode": "a"} not in space
    with pytest.raises(IndexError, match="out of range"):
        space[len(space)]


def test_sampling_is_distinct_valid_and_reproducible():
    space = ktune.SearchSpace(PARAMS, RESTRICTIONS)
    a = space.sample(10, seed=7)
    assert a == space.sample(10, seed=7)
    assert len({repr(c) for c in a}) == 10
    assert all(c in space for c in a)
    assert len(space.sample(1000, seed=1)) == len(space)


def test_neighbours_differ_in_one_parameter_and_are_valid():
    space = ktune.SearchSpace(PARAMS, RESTRICTIONS)
    c = {"bx": 32, "by": 2, "mode": "a"}
    ns = space.neighbours(c)
    assert ns and all(n in space for n in ns)
    assert all(sum(n[k] != c[k] for k in c) == 1 for n in ns)
    with pytest.raises(ValueError, match="hamming"):
        space.neighbours(c, kind="diagonal")


def test_bad_input_is_a_clear_python_error():
    with pytest.raises(ValueError) as e:
        ktune.SearchSpace({"x": [1, 2]}, ["x <= y"])
    message = str(e.value)
    assert "unknown name `y`" in message and "^" in message and "did you mean `x`" in message
    with pytest.raises(TypeError, match="not an int, float, bool or str"):
        ktune.SearchSpace({"x": [1, None]})
    with pytest.raises(TypeError, match="must be a list"):
        ktune.SearchSpace({"x": 3})
    with pytest.raises(ValueError, match="direction"):
        ktune.Study({"x": [1, 2]}, direction="down")
    with pytest.raises(ValueError, match="nonexistent"):
        ktune.Study({"x": [1, 2]}, strategy="nonexistent")
    with pytest.raises(ValueError, match="has no `x`"):
        ktune.SearchSpace({"x": [1, 2]}).neighbours({"y": 1})
    # Counts and time limits are named when they are out of range (a NaN time limit would
    # never be reached).
    with pytest.raises(ValueError, match="n must be a whole number, at least 0, not -1"):
        ktune.SearchSpace({"x": [1, 2]}).sample(-1)
    with pytest.raises(ValueError, match="max_evals must be a whole number, at least 0, not -2"):
        ktune.Study({"x": [1, 2]}, max_evals=-2)
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds, not -1"):
        ktune.Study({"x": [1, 2]}, time_limit=-1)
    ktune.Study({"x": [1, 2]}, time_limit=float("inf"))  # no limit
    study = ktune.Study({"x": [1, 2]}, strategy="random")
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds, not NaN"):
        study.optimize(lambda c: 1.0, time_limit=float("nan"))
    with pytest.raises(ValueError, match="n must be a whole number"):
        study.ask_batch(-3)
    assert len(study) == 0
    # One restriction may be given as a string (as Kernel Tuner takes it); anything else that
    # is not a list of strings is named.
    assert len(ktune.SearchSpace({"x": [1, 2, 3]}, "x > 1")) == 2
    assert len(ktune.Study({"x": [1, 2, 3]}, "x > 1", strategy="random").space) == 2
    with pytest.raises(TypeError, match=r"restrictions must be a list of strings .*\['x > 1', 3\]"):
        ktune.SearchSpace({"x": [1, 2]}, ["x > 1", 3])
    with pytest.raises(ValueError, match="storage URL `mysql://x`: not a storage URL"):
        ktune.Study({"x": [1, 2]}, storage="mysql://x")
    # Integers out of range name their argument (pyo3 alone raises a bare OverflowError).
    with pytest.raises(ValueError, match="seed must be a whole number, at least 0, not -1"):
        ktune.Study({"x": [1, 2]}, seed=-1)
    with pytest.raises(ValueError, match="max_evals is too large"):
        ktune.Study({"x": [1, 2]}, max_evals=10**30)
    with pytest.raises(TypeError, match="seed"):
        ktune.Study({"x": [1, 2]}, seed="3")
    with pytest.raises(IndexError, match="out of range"):
        ktune.SearchSpace({"x": [1, 2]})[10**30]
    with pytest.raises(ValueError, match="seed must be"):
        ktune.SearchSpace({"x": [1, 2]}).sample(1, seed=-5)
    with pytest.raises(ValueError, match="objective .* cannot be empty"):
        ktune.Study({"x": [1, 2]}, objective="")
    with pytest.raises(ValueError, match="seconds .* not -1"):
        study.tell({"x": 1}, 1.0, seconds=-1)
    with pytest.raises(ValueError, match="study_name cannot be empty"):
        ktune.Study({"x": [1, 2]}, storage="sqlite:///tmp/never.db", study_name="")
    with pytest.raises(ValueError, match="device .*control character"):
        ktune.Study({"x": [1, 2]}, storage="sqlite:///tmp/never.db", device="gpu\x1b[2J")
    assert len(study) == 0


def objective(c):
    return (c["x"] - 7) ** 2 + c["y"] + 1.0


GRID = {"x": list(range(20)), "y": list(range(10))}


def test_ask_and_tell_record_values_and_failures():
    study = ktune.Study(GRID, ["x + y < 25"], strategy="random", max_evals=6, seed=1)
    told = []
    while (c := study.ask()) is not None:
        if c["x"] % 2:
            study.tell(c, failure="compile", reason="odd x does not compile")
        else:
            study.tell(c, objective(c))
        told.append(c)
    assert len(told) == 6 and study.stopped == "evaluations"
    # Names as documented (snake_case), not the enum's run-together spelling.
    small = ktune.Study({"x": [1, 2]}, strategy="random", seed=1)
    while (c := small.ask()) is not None:
        small.tell(c, float(c["x"]))
    assert small.stopped == "space_exhausted"
    results = study.results
    assert [r["config"] for r in results] == told
    for r in results:
        if r["config"]["x"] % 2:
            assert r["status"] == "compile" and r["value"] is None
            assert r["reason"] == "odd x does not compile"
        else:
            assert r["status"] == "ok" and r["value"] == objective(r["config"])
    ok = [r for r in results if r["status"] == "ok"]
    if ok:
        assert study.best["value"] == min(r["value"] for r in ok)
    with pytest.raises(ValueError, match="either a value or a failure"):
        study.tell(told[0], 1.0, failure="runtime")
    with pytest.raises(ValueError, match="failure must be"):
        study.tell(told[0], failure="exploded")
    # A configuration is recorded once: telling it again is an error, not a silent drop.
    first = results[0]
    with pytest.raises(ValueError, match="is already recorded") as again:
        study.tell(told[0], 0.5)
    assert str(first["config"]) in str(again.value)
    assert study.results[0] == first and len(study.results) == 6
    # Outside the space (x + y < 25 broken), it is refused, naming the restriction.
    with pytest.raises(ValueError, match=r"not in the search space: it breaks `x \+ y < 25`"):
        study.tell({"x": 19, "y": 9}, 0.0)
    assert len(study.results) == 6
    assert study.best is None or study.best["value"] != 0.0


def test_optimize_records_exceptions_and_keeps_going():
    def flaky(c):
        if c["x"] == 3:
            raise RuntimeError("x = 3 crashes the kernel")
        if c["x"] == 4:
            return "fast"
        return objective(c)

    study = ktune.Study(GRID, strategy="brute_force", max_evals=60, seed=0)
    best = study.optimize(flaky)
    results = study.results
    assert len(results) == 60
    crashed = [r for r in results if r["config"]["x"] == 3]
    assert crashed and all(
        r["status"] == "runtime" and r["reason"] == "RuntimeError: x = 3 crashes the kernel"
        for r in crashed
    )
    odd = [r for r in results if r["config"]["x"] == 4]
    assert odd and all("not a number" in r["reason"] for r in odd)
    # A huge result is named briefly, with why it is no float.
    study = ktune.Study(GRID, strategy="brute_force", max_evals=1, seed=0)
    study.optimize(lambda c: 10**400)
    reason = study.results[0]["reason"]
    assert reason.startswith("the objective returned 1000") and len(reason) < 200, reason
    assert "too large" in reason, reason
    assert best["value"] == min(r["value"] for r in results if r["value"] is not None)


def test_bayes_opt_finds_the_optimum_and_is_deterministic_per_seed():
    def run(seed):
        study = ktune.Study(GRID, strategy="bayes_opt", max_evals=40, seed=seed)
        study.optimize(objective)
        return study

    a, b = run(5), run(5)
    assert [r["config"] for r in a.results] == [r["config"] for r in b.results]
    assert a.best["value"] <= 2.0
    assert [r["config"] for r in run(6).results] != [r["config"] for r in a.results]


def test_optimize_stops_at_its_own_limits():
    study = ktune.Study(GRID, strategy="random", seed=2)
    study.optimize(objective, max_evals=5)
    assert len(study) == 5
    study.optimize(objective, max_evals=3)
    assert len(study) == 8
    # Why this call returned; the study goes on.
    assert study.stopped == "evaluations"
    assert study.ask() is not None
    slow = lambda c: __import__("time").sleep(0.01) or objective(c)
    study.optimize(slow, time_limit=0.05)
    assert study.stopped == "time"
    assert 9 < len(study) < 200


def test_a_study_is_used_from_several_threads():
    import concurrent.futures

    study = ktune.Study(GRID, strategy="auto", max_evals=24, seed=5)
    # One thread asks, a pool measures and tells.
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = []
        while (c := study.ask()) is not None:
            futures.append(pool.submit(lambda c: study.tell(c, objective(c)), c))
            if len(futures) % 4 == 0:
                for f in futures[-4:]:
                    f.result()
        for f in futures:
            f.result()
    assert len(study) == 24

    # Every thread asks and tells; each configuration once, the budget held.
    shared = ktune.Study(GRID, strategy="random", max_evals=30, seed=6)

    def work():
        told = []
        while (c := shared.ask()) is not None:
            shared.tell(c, objective(c))
            told.append(c)
        return told

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        told = [c for f in [pool.submit(work) for _ in range(4)] for c in f.result()]
    assert len(shared) == 30 == len(told)
    assert len({tuple(sorted(c.items())) for c in told}) == 30

    # optimize in one thread while another reads the study.
    third = ktune.Study(GRID, strategy="random", max_evals=40, seed=7)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        run = pool.submit(third.optimize, objective)
        while not run.done():
            assert len(third.results) <= 40
        assert run.result() is not None
    assert len(third) == 40


def test_the_objective_may_read_the_study_and_system_exit_stops_it():
    study = ktune.Study(GRID, strategy="random", seed=8)
    seen = []

    def reads(c):
        seen.append(len(study.results))
        assert (study.best is None) == (len(seen) == 1)
        if len(seen) == 6:
            raise SystemExit(3)
        return objective(c)

    with pytest.raises(SystemExit):
        study.optimize(reads)
    assert seen == [0, 1, 2, 3, 4, 5]
    # What ran before the exit is recorded, the interrupted one is not.
    assert len(study) == 5


def test_a_study_resumes_from_its_storage(tmp_path):
    url = f"sqlite:///{tmp_path}/tuning.db"
    first = ktune.Study(GRID, strategy="random", storage=url, max_evals=20, seed=1)
    first.optimize(objective, max_evals=8)
    done = [r["config"] for r in first.results]
    del first
    again = ktune.Study(GRID, strategy="random", storage=url, max_evals=20, seed=1)
    assert [r["config"] for r in again.results] == done
    again.optimize(objective)
    configs = [repr(r["config"]) for r in again.results]
    assert len(configs) == 20 and len(set(configs)) == 20
    rows = sqlite3.connect(tmp_path / "tuning.db").execute("SELECT COUNT(*) FROM evaluations").fetchone()
    assert rows[0] == 20
    # A configuration an earlier run (or another process) recorded keeps its first record:
    # told again here it is a warning, not an error; told twice by the same study, an error.
    first_config, first_value = again.results[0]["config"], again.results[0]["value"]
    with pytest.warns(RuntimeWarning, match="already recorded .* by another process or an earlier run"):
        again.tell(first_config, first_value + 100.0)
    assert again.results[0]["value"] == first_value and len(again.results) == 20
    last = again.results[-1]["config"]
    with pytest.raises(ValueError, match="is already recorded"):
        again.tell(last, 0.0)


def test_processes_of_a_shared_study_draw_their_own_random_numbers(tmp_path):
    url = f"sqlite:///{tmp_path}/tuning.db"
    alone = ktune.Study(GRID, strategy="random", seed=7)
    stream = [alone.ask() for _ in range(6)]
    first = ktune.Study(GRID, strategy="random", storage=url, seed=7)
    second = ktune.Study(GRID, strategy="random", storage=url, seed=7)
    # The first to join proposes what the study alone proposes with that seed.
    assert first.ask() == stream[0]
    # The second, started with the same seed, has a stream of its own: with the first's
    # stream it would skip the claimed configuration and follow it step for step.
    theirs = [second.ask() for _ in range(5)]
    assert len({repr(c) for c in theirs}) == 5
    assert theirs != stream[1:6]
    assert len({repr(c) for c in theirs} & {repr(c) for c in stream}) <= 1


def test_a_storage_refuses_another_problem(tmp_path):
    url = f"sqlite:///{tmp_path}/tuning.db"
    ktune.Study(GRID, storage=url, strategy="random").optimize(objective, max_evals=2)
    with pytest.raises(ktune.KtuneError, match="different tuning problem"):
        ktune.Study({"x": [1, 2, 3]}, storage=url)
    # Another study name in the same file is a new study.
    other = ktune.Study({"x": [1, 2, 3]}, storage=url, study_name="other", strategy="random")
    assert len(other) == 0


def test_ctrl_c_in_the_objective_stops_with_everything_recorded(tmp_path):
    url = f"sqlite:///{tmp_path}/tuning.db"
    calls = []

    def interrupted(c):
        calls.append(c)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return objective(c)

    study = ktune.Study(GRID, strategy="random", storage=url, seed=4)
    with pytest.raises(KeyboardInterrupt):
        study.optimize(interrupted)
    assert len(study) == 4
    del study
    resumed = ktune.Study(GRID, strategy="random", storage=url, seed=4)
    assert [r["config"] for r in resumed.results] == calls[:4]


SPACES = __import__("pathlib").Path(__file__).resolve().parents[4] / "shared" / "data" / "spaces"


def test_simulate_replays_a_brute_forced_space_deterministically():
    cache = SPACES / "convolution_A100.json.gz"
    if not cache.exists():
        pytest.skip(f"the shared data set is not beside the checkout ({cache})")
    a = ktune.simulate(str(cache), "bayes_opt", seeds=2, budget=40)
    assert a["space"] == "convolution_A100" and a["valid"] <= a["configurations"] == 4362
    assert a["optimum"] < a["median"] and a["budget"] == 40
    assert [r["seed"] for r in a["runs"]] == [0, 1]
    for r in a["runs"]:
        assert len(r["values"]) == 40 and r["simulated_seconds"] > 0
        assert min(v for v in r["values"] if v is not None) >= a["optimum"]
    b = ktune.simulate(str(cache), "bayes_opt", seeds=2, budget=40)
    assert [r["values"] for r in a["runs"]] == [r["values"] for r in b["runs"]]
    # Bayesian optimisation beats random search on this space, seed for seed, by its score.
    rnd = ktune.simulate(str(cache), "random", seeds=2, budget=40)
    assert sum(r["score"] for r in a["runs"]) > sum(r["score"] for r in rnd["runs"])


def test_simulate_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="missing.json"):
        ktune.simulate(str(tmp_path / "missing.json"))
    cache = SPACES / "convolution_A100.json.gz"
    if cache.exists():
        with pytest.raises(ValueError, match="nonexistent"):
            ktune.simulate(str(cache), "nonexistent")
        with pytest.raises(ValueError, match="popsize|pop_size|unknown"):
            ktune.simulate(str(cache), "genetic_algorithm", {"no_such_option": 3})
        with pytest.raises(ValueError, match="seeds must be a whole number, at least 0, not -1"):
            ktune.simulate(str(cache), "random", seeds=-1)
        with pytest.raises(ValueError, match="budget must be a whole number, at least 0, not -5"):
            ktune.simulate(str(cache), "random", seeds=1, budget=-5)
        with pytest.raises(ValueError, match="budget=0 evaluates nothing"):
            ktune.simulate(str(cache), "random", seeds=1, budget=0)
        with pytest.raises(ValueError, match="too many"):
            ktune.simulate(str(cache), "random", seeds=10**12)


def test_results_convert_to_pandas_where_it_is_installed():
    study = ktune.Study({"x": [1, 2, 3]}, strategy="brute_force")
    study.optimize(lambda c: 1 / (c["x"] - 2))
    results = study.results
    assert isinstance(results, ktune.ResultList) and len(results) == 3
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            results.to_pandas()
        return
    frame = results.to_pandas()
    assert list(frame.columns) == ["x", "value", "status", "reason"]
    assert list(frame["status"]) == ["ok", "runtime", "ok"]


def test_the_ask_tell_example_runs_and_resumes(tmp_path):
    import subprocess
    import sys

    example = __import__("pathlib").Path(__file__).resolve().parents[3] / "examples" / "python" / "ask_tell.py"
    first = subprocess.run([sys.executable, str(example)], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert "0 results already stored" in first.stdout
    assert "60 evaluations (1 failed), stopped: evaluations" in first.stdout
    again = subprocess.run([sys.executable, str(example)], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert "60 results already stored" in again.stdout
    assert first.stdout.splitlines()[-1] == again.stdout.splitlines()[-1]


SPEC = """
constraints = ["x * y <= 64"]

[[parameter]]
name = "x"
values = [1, 2, 4, 8]

[[parameter]]
name = "y"
values = [1, 2, 4, 8, 16]

[runner]
run = "./bench {x} {y}"
objective = { name = "GFLOP/s", regex = 'g: (?P<value>[0-9.]+)' }

[strategy]
name = "random"

[budget]
max_evaluations = 6

[storage]
url = "sqlite:///STUDY_DB"
study = "from-python"
"""


PERMUTATION_SPEC = """
constraints = ["order.index('i') < order.index('k')"]

[[parameter]]
name = "order"
type = "permutation"
items = ["i", "j", "k"]

[[parameter]]
name = "tile"
values = [1, 2]

[runner]
run = "./prog {order} {tile}"
objective = { name = "time", regex = 't: (?P<value>[0-9.]+)' }
"""


def test_permutations_are_their_items_in_ask_tell_optimize_and_results(tmp_path):
    spec = tmp_path / "ktune.toml"
    spec.write_text(PERMUTATION_SPEC)
    study = ktune.Study.from_spec(str(spec), strategy="random", max_evals=6, seed=3)
    c = study.ask()
    # The items in order, as the README shows them, and the constraint holds on them.
    assert sorted(c["order"]) == ["i", "j", "k"]
    assert c["order"].index("i") < c["order"].index("k")
    # The value handed out is accepted back, as are a tuple and the command runner's text.
    study.tell(c, 1.0)
    for form in (tuple, ",".join):
        d = study.ask()
        study.tell({"order": form(d["order"]), "tile": d["tile"]}, 2.0)
    seen = []
    study.optimize(lambda c: seen.append(c["order"]) or float(len(seen)))
    assert all(sorted(o) == ["i", "j", "k"] for o in seen) and len(study) == 6
    assert [r["config"]["order"] for r in study.results][0] == c["order"]
    assert study.best["config"] == c
    # Misspelt, repeated or missing items are named.
    fresh = ktune.Study.from_spec(str(spec), strategy="random", seed=3)
    for bad, words in [
        (["i", "q", "k"], "no item `q`"),
        (["i", "i", "k"], "an item twice"),
        (["i", "k"], "2 of 3 items"),
        (7, "a list of the item names"),
    ]:
        with pytest.raises(ValueError, match="order"):
            try:
                fresh.tell({"order": bad, "tile": 1}, 1.0)
            except ValueError as e:
                assert words in str(e), str(e)
                raise


def test_a_study_from_a_problem_file_takes_its_sections(tmp_path):
    spec = tmp_path / "ktune.toml"
    spec.write_text(SPEC.replace("/STUDY_DB", str(tmp_path / "study.db")))
    study = ktune.Study.from_spec(str(spec))
    assert study.space.size == 19
    assert study.objective == "GFLOP/s"
    best = study.optimize(lambda c: float(c["x"] * c["y"]))
    # [budget] max_evaluations = 6, and GFLOP/s is maximised.
    assert len(study) == 6
    assert best["value"] == max(r["value"] for r in study.results)
    # The [storage] study resumes: its budget is spent.
    again = ktune.Study.from_spec(str(spec))
    assert len(again) == 6
    assert again.ask() is None
    # Keyword arguments override the file. The study's budget is spent, so a larger one
    # raises it; the strategy is the study's own business per process, with a warning.
    with pytest.warns(RuntimeWarning) as said:
        more = ktune.Study.from_spec(str(spec), max_evals=8, strategy="brute_force")
    assert [str(w.message) for w in said] == [
        "study `from-python` was started with strategy random; this process runs brute_force",
        "study `from-python`: its budget of 6 evaluations was spent; it is now 8",
    ]
    more.optimize(lambda c: float(c["x"] * c["y"]))
    assert len(more) == 8


def test_a_bad_problem_file_names_the_section():
    import tempfile, os

    with tempfile.TemporaryDirectory() as d:
        spec = os.path.join(d, "ktune.toml")
        with open(spec, "w") as f:
            f.write(SPEC.replace('name = "random"', 'name = "annealing-ish"'))
        with pytest.raises(ValueError, match=r"\[strategy\] section of .*unknown strategy `annealing-ish`"):
            ktune.Study.from_spec(spec)
        with pytest.raises(ValueError, match="cannot read"):
            ktune.Study.from_spec(os.path.join(d, "missing.toml"))


WORKER = """
import sys, time, ktune
url, name, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
study = ktune.Study({"x": list(range(12)), "y": list(range(8))}, strategy="random",
                    storage=url, study_name=name, max_evals=40, seed=seed)
def f(c):
    time.sleep(0.01)
    return float((c["x"] - 5) ** 2 + c["y"])
study.optimize(f)
print(len(study))
"""


def shared_study_by_processes(url, name, processes=4):
    import subprocess
    import sys

    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, url, name, str(i)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for i in range(processes)
    ]
    for w in workers:
        out, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    # Every process saw the whole study; together they measured exactly its budget, each
    # configuration once.
    study = ktune.Study({"x": list(range(12)), "y": list(range(8))}, strategy="random",
                        storage=url, study_name=name, max_evals=40)
    configs = [tuple(r["config"].values()) for r in study.results]
    assert len(configs) == 40
    assert len(set(configs)) == 40
    assert study.ask() is None


def test_processes_share_an_sqlite_study(tmp_path):
    shared_study_by_processes(f"sqlite:///{tmp_path / 'shared.db'}", "four")


def test_processes_share_a_postgresql_study():
    import uuid

    url = os.environ.get("KTUNE_PG_URL")
    if not url:
        pytest.skip("no PostgreSQL server: KTUNE_PG_URL is not set (scripts/test.sh starts one)")
    shared_study_by_processes(url, f"py-{uuid.uuid4().hex[:12]}")


def test_a_postgresql_study_over_verified_tls():
    url = os.environ.get("KTUNE_PG_URL")
    tls = os.environ.get("KTUNE_PG_TLS")
    if not url or not tls:
        pytest.skip("no PostgreSQL server with TLS: "
                    + (os.environ.get("KTUNE_PG_SKIP") or os.environ.get("KTUNE_PG_TLS_SKIP")
                       or "KTUNE_PG_URL or KTUNE_PG_TLS is not set (scripts/test.sh sets both)"))
    import uuid

    checked = url.replace("127.0.0.1", "localhost") + f"?sslmode=verify-full&sslrootcert={tls}/ca.pem"
    name = f"py-tls-{uuid.uuid4().hex[:12]}"
    space = {"x": list(range(10))}
    study = ktune.Study(space, strategy="random", storage=checked, study_name=name, max_evals=4)
    study.optimize(lambda c: float(c["x"]))
    assert len(ktune.Study(space, strategy="random", storage=checked, study_name=name,
                           max_evals=4).results) == 4
    # The server's certificate names `localhost`, not the address.
    with pytest.raises(ktune.KtuneError, match="not valid for name"):
        ktune.Study(space, storage=url + f"?sslmode=verify-full&sslrootcert={tls}/ca.pem",
                    study_name=name)
    with pytest.raises(ktune.KtuneError, match="sslrootcert=/path/to/ca.pem"):
        ktune.Study(space, storage=url + "?sslmode=verify-ca", study_name=name)


def test_the_studies_of_a_storage_are_summarised(tmp_path):
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    space = {"x": list(range(10))}
    a = ktune.Study(space, strategy="random", storage=url, study_name="slow", max_evals=3)
    a.optimize(lambda c: float(c["x"]) + 1.0)
    b = ktune.Study(space, strategy="random", storage=url, study_name="fast", max_evals=2,
                    direction="maximize")
    b.tell(b.ask(), 5.0)
    b.tell(b.ask(), failure="compile")
    studies = ktune.study_summaries(url)
    assert [s["name"] for s in studies] == ["slow", "fast"]
    slow, fast = studies
    assert (slow["evaluations"], slow["failed"], slow["budget"]) == (3, 0, 3)
    assert slow["best"] == min(r["value"] for r in a.results)
    assert (fast["evaluations"], fast["failed"], fast["best"]) == (2, 1, 5.0)
    assert fast["direction"] == "maximize"
    with pytest.raises(ktune.KtuneError, match="no results database"):
        ktune.study_summaries(f"sqlite:///{tmp_path / 'none.db'}")
    with pytest.raises(ValueError, match="not a storage URL"):
        ktune.study_summaries("mysql://h/db")


def test_configurations_handed_out_and_dropped_go_back(tmp_path):
    import gc

    url = f"sqlite:///{tmp_path / 'claims.db'}"
    space = {"x": list(range(10))}
    a = ktune.Study(space, strategy="random", storage=url, max_evals=3)
    held = [a.ask() for _ in range(3)]
    assert all(held)
    # While `a` holds all three claims, the budget is spent for others too...
    del a
    gc.collect()
    # ...and once it is gone its claims are released: another study measures the budget.
    b = ktune.Study(space, strategy="random", storage=url, max_evals=3, seed=1)
    b.optimize(lambda c: float(c["x"]))
    assert len(b) == 3


def test_a_study_refuses_workers_on_other_hardware_unless_allowed(tmp_path):
    url = f"sqlite:///{tmp_path / 'hw.db'}"
    space = {"x": list(range(10))}
    a = ktune.Study(space, strategy="random", storage=url, max_evals=2, device="GPU A")
    a.optimize(lambda c: float(c["x"]))
    with pytest.raises(ktune.KtuneError, match="GPU A"):
        ktune.Study(space, strategy="random", storage=url, max_evals=4, device="GPU B")
    b = ktune.Study(space, strategy="random", storage=url, max_evals=4, device="GPU B",
                    allow_mixed_hardware=True)
    b.optimize(lambda c: float(c["x"]))
    assert len(b) == 4
    with pytest.raises(ValueError, match="lease"):
        ktune.Study(space, storage=url, lease=0)


SLOW_SPACE = """
import signal
import ktune
# A shell without job control starts background commands with Ctrl-C ignored, and Python
# keeps it ignored: a terminal's Ctrl-C is what is tested, so take it as a terminal does.
signal.signal(signal.SIGINT, signal.default_int_handler)
params = {f"p{i}": list(range(10)) for i in range(8)}
params["p8"] = list(range(7))
print("building", flush=True)
ktune.SearchSpace(params, ["(" + " + ".join(params) + ") % 1000 == 999"])
print("built", flush=True)
"""


def test_ctrl_c_interrupts_a_long_search_space_build():
    import signal
    import subprocess
    import sys

    # About 7e8 constraint checks: many seconds even on a fast machine.
    p = subprocess.Popen([sys.executable, "-c", SLOW_SPACE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "building"
    import time

    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    # Uninterrupted, the build runs for minutes in the debug build the tests use (about 20 s
    # in a release build): ending within the timeout means Ctrl-C stopped it.
    try:
        out, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("Ctrl-C did not interrupt the search-space build")
    assert "KeyboardInterrupt" in err, err
    assert "built" not in out


# A problem the command line tunes: `ktune tune` on a Python script that prints the time.
CLI_SPEC = """
[[parameter]]
name = "x"
values = [1, 2, 3, 4, 5, 6, 7, 8]

[[parameter]]
name = "y"
values = [1, 2, 3, 4]

[runner]
run = ["PYTHON", "bench.py", "{x}", "{y}"]
repeat = 1
objective = { name = "time", regex = 'time: (?P<value>[0-9.]+)' }

[strategy]
name = "random"

[storage]
url = "sqlite:///STUDY_DB"
study = "shared"
"""

BENCH = """
import sys, time
time.sleep(float(SLEEP))
print("time:", int(sys.argv[1]) * int(sys.argv[2]))
"""


def cli_study(tmp_path, *args, sleep=0.0):
    """Runs `ktune tune` on CLI_SPEC in `tmp_path` with `args`; skips when the command is not
    built (the workspace's test run builds it first)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[3]
    binary = next((repo / "target" / kind / "ktune" for kind in ("debug", "release")
                   if (repo / "target" / kind / "ktune").exists()), None)
    if binary is None:
        pytest.skip("no ktune command built in target/ (cargo build -p ktune-cli)")
    spec = tmp_path / "ktune.toml"
    spec.write_text(CLI_SPEC.replace("PYTHON", sys.executable)
                    .replace("/STUDY_DB", str(tmp_path / "study.db")))
    (tmp_path / "bench.py").write_text(BENCH.replace("SLEEP", repr(sleep)))
    subprocess.run([str(binary), "tune", str(spec), "--quiet", *args], cwd=tmp_path,
                   check=True, capture_output=True, text=True)
    return spec


def test_a_study_joining_a_command_line_study_with_another_direction_is_refused(tmp_path):
    spec = cli_study(tmp_path, "--max-evals", "4")
    with pytest.raises(ktune.KtuneError) as refused:
        ktune.Study.from_spec(str(spec), direction="maximize")
    message = str(refused.value)
    assert "study `shared` minimizes its objective and this process would maximize it" in message
    # Refused before anything was recorded or changed: the study is as the CLI left it.
    same = ktune.Study.from_spec(str(spec))
    assert len(same) == 4
    assert same.best["value"] == min(r["value"] for r in same.results)


def test_a_study_joining_a_command_line_study_with_another_budget_keeps_the_studys(tmp_path):
    # The command line stops at its time limit with its budget of 10 evaluations unspent.
    spec = cli_study(tmp_path, "--max-evals", "10", "--time-limit", "1", sleep=0.3)
    import sqlite3

    db = sqlite3.connect(tmp_path / "study.db")
    held = db.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
    assert 0 < held < 10
    with pytest.warns(RuntimeWarning, match="has a budget of 10 evaluations; this process's 20 is ignored"):
        study = ktune.Study.from_spec(str(spec), max_evals=20)
    study.optimize(lambda c: float(c["x"] * c["y"]))
    assert len(study) == 10
    stored = db.execute(
        "SELECT value FROM study_meta WHERE key = 'max_evaluations'").fetchone()[0]
    assert stored == "10"
