"""Priors from Python: ``Study(priors=...)``, ``Study.from_spec(priors=...)``, a stored study
that records them and uses them again when reopened, ``simulate(priors=...)``, and clear errors
for what cannot be a prior."""

import gzip
import json
import pathlib
import warnings

import pytest

import ktune

TUNE_PARAMS = {"x": [1, 2, 4, 8], "y": [1, 2, 4, 8, 16]}
RESTRICTIONS = ["x * y <= 64"]


def time(x, y):
    """The prior's time: faster with more work, ties broken by x; (4, 16) failed there."""
    return None if (x, y) == (4, 16) else 100.0 / (x * y) + 0.01 * x


def write_cache(path, fn=time):
    cache = {}
    for x in TUNE_PARAMS["x"]:
        for y in TUNE_PARAMS["y"]:
            if x * y <= 64:
                t = fn(x, y)
                cache[f"{x},{y}"] = {"x": x, "y": y, "time": "RuntimeFailedConfig" if t is None else t}
    doc = {"kernel_name": "k", "tune_params_keys": ["x", "y"], "tune_params": TUNE_PARAMS, "cache": cache}
    text = json.dumps(doc)
    if str(path).endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def prior_order():
    measured = [(time(x, y), {"x": x, "y": y}) for x in TUNE_PARAMS["x"] for y in TUNE_PARAMS["y"] if x * y <= 64]
    return [c for t, c in sorted(((t, c) for t, c in measured if t is not None), key=lambda tc: tc[0])]


def test_a_study_asks_first_what_its_priors_rank_best(tmp_path):
    cache = write_cache(tmp_path / "a100.json.gz")
    study = ktune.Study(TUNE_PARAMS, RESTRICTIONS, strategy="prior_rank", priors=[cache])
    assert [study.ask() for _ in range(3)] == prior_order()[:3]
    (p,) = study.priors
    assert p["source"] == str(cache.resolve())
    assert (p["measurements"], p["matched"], p["configurations"]) == (19, 19, 19)
    # One path alone is a list of one; `auto` with priors finds the prior's best at once.
    study = ktune.Study(TUNE_PARAMS, RESTRICTIONS, priors=str(cache), seed=3)
    best = study.optimize(lambda c: 100.0 / (c["x"] * c["y"]), max_evals=5)
    assert best["value"] == 100.0 / 64


def test_a_stored_study_records_its_priors_and_reopens_with_them(tmp_path):
    cache = write_cache(tmp_path / "a100.json")
    url = f"sqlite:///{tmp_path / 'h100.db'}"
    first = ktune.Study(TUNE_PARAMS, RESTRICTIONS, strategy="prior_rank", storage=url, priors=[cache])
    order = prior_order()
    for c in [first.ask() for _ in range(2)]:
        first.tell(c, 1.0)
    assert [c for c in (r["config"] for r in first.results)] == order[:2]
    del first
    again = ktune.Study(TUNE_PARAMS, RESTRICTIONS, strategy="prior_rank", storage=url)
    assert [p["source"] for p in again.priors] == [str(cache.resolve())]
    assert again.ask() == order[2]
    del again
    # The prior changed on disk: reopening says so instead of using another prior silently.
    write_cache(cache, lambda x, y: 1.0 / (x * y))
    with pytest.raises(ktune.KtuneError, match="changed since the study recorded it"):
        ktune.Study(TUNE_PARAMS, RESTRICTIONS, strategy="prior_rank", storage=url)
    # Naming it again takes it as it is now, with a warning that it differs.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ktune.Study(TUNE_PARAMS, RESTRICTIONS, strategy="prior_rank", storage=url, priors=[cache])
    assert any("was started with priors" in str(w.message) for w in caught), caught


def test_a_spec_names_its_priors_and_keywords_replace_them(tmp_path):
    write_cache(tmp_path / "a100.json")
    spec = tmp_path / "ktune.toml"
    spec.write_text(
        'constraints = ["x * y <= 64"]\n'
        '[[parameter]]\nname = "x"\nvalues = [1, 2, 4, 8]\n'
        '[[parameter]]\nname = "y"\nvalues = [1, 2, 4, 8, 16]\n'
        '[runner]\nrun = "true"\nobjective = { name = "time", regex = "t: (?P<value>[0-9.]+)" }\n'
        '[strategy]\nname = "prior_rank"\n'
        '[transfer]\npriors = ["a100.json"]\n'
    )
    study = ktune.Study.from_spec(str(spec))
    assert [p["source"] for p in study.priors] == [str((tmp_path / "a100.json").resolve())]
    assert study.ask() == prior_order()[0]
    assert ktune.Study.from_spec(str(spec), priors=[]).priors == []


def test_simulate_tells_every_run_its_priors(tmp_path):
    target = write_cache(tmp_path / "target.json", lambda x, y: None if (x, y) == (4, 16) else 50.0 / (x * y) + 0.02 * y)
    prior = write_cache(tmp_path / "prior.json")
    cold = ktune.simulate(str(target), "prior_rank", seeds=2, budget=3)
    warm = ktune.simulate(str(target), "prior_rank", seeds=2, budget=3, priors=[prior])
    assert warm["priors"] == [str(prior.resolve())] and cold["priors"] == []
    # The prior's best is the target's best: found at once in every run.
    assert all(r["found_optimum_at"] == 1 for r in warm["runs"]), warm["runs"]


def test_what_cannot_be_a_prior_is_a_clear_error(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("x = 8 was fast\n")
    with pytest.raises(ValueError, match="notes.txt.*not a ktune study, a Kernel Tuner cache or a T4"):
        ktune.Study(TUNE_PARAMS, priors=[notes])
    with pytest.raises(ValueError, match="missing.json.*cannot read"):
        ktune.Study(TUNE_PARAMS, priors="missing.json")
    with pytest.raises(TypeError, match="a prior is a file path or a storage URL"):
        ktune.Study(TUNE_PARAMS, priors=[3])
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tune_params_keys": ["tile"], "tune_params": {"tile": [1, 2]},
                                 "cache": {"1": {"tile": 1, "time": 1.0}}}))
    with pytest.raises(ValueError, match="shares no parameter"):
        ktune.Study(TUNE_PARAMS, priors=[other])
    with pytest.raises(ValueError, match="maxim|minim"):
        ktune.Study(TUNE_PARAMS, direction="maximize", objective="GFLOP/s", priors=[write_cache(tmp_path / "t.json")])
