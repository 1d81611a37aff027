"""``ktune.report`` and ``Study.report``: the HTML report from Python, for a stored study, a
study kept in memory, and the committed fixture; Jupyter's views; clear errors."""

import pathlib
import shutil

import pytest

import ktune

FIXTURE = pathlib.Path(__file__).resolve().parents[2] / "ktune-report" / "tests" / "fixture" / "study.db"


def tuned(storage=None, n=30):
    study = ktune.Study({"x": list(range(16)), "y": ["a", "b", "c"]}, strategy="random", storage=storage, max_evals=n, seed=3)
    for _ in range(n):
        c = study.ask()
        if c is None:
            break
        if c["x"] % 4 == 3:
            study.tell(c, failure="compile", reason="x too large <for> this")
        else:
            study.tell(c, 1.0 + c["x"] + (0.5 if c["y"] == "b" else 0.0))
    return study


def test_a_stored_study_reports_every_record_with_its_facts(tmp_path):
    db = tmp_path / "s.db"
    study = tuned(f"sqlite:///{db}")
    out = study.report(tmp_path / "r.html")
    html = pathlib.Path(out).read_text()
    ok = sum(r["status"] == "ok" for r in study.results)
    assert html.count('class="pt ok"') == ok
    assert html.count('class="fail f-compile"') == 30 - ok
    assert "x too large &lt;for&gt; this" in html
    assert "<script" not in html
    # The same from the file, and from its URL.
    for source in (db, f"sqlite:///{db}"):
        again = pathlib.Path(ktune.report(source, tmp_path / "again.html")).read_text()
        assert again.count('class="pt ok"') == ok


def test_a_study_in_memory_reports_its_own_records(tmp_path):
    study = tuned(None)
    html = pathlib.Path(study.report(str(tmp_path / "m.html"), top=5)).read_text()
    assert html.count('class="top-row"') == 5
    assert "<b id=\"n-evaluations\">30</b>" in html


def test_the_fixture_and_the_notebook_views(tmp_path):
    db = tmp_path / "fixture.db"
    shutil.copy(FIXTURE, db)
    html = pathlib.Path(ktune.report(db, tmp_path / "f.html", study="fixture", max_points=10)).read_text()
    assert "Drawn: " in html and "of 65 successful measurements (the lowest and highest" in html
    study = tuned(None, n=12)
    view = study._repr_html_()
    assert "ktune study" in view and view.count("<tr>") == 6  # a head and the best five
    table = study.results._repr_html_()
    assert table.count("<tr>") == 13
    assert ("&lt;for&gt;" in table) == any(r["status"] == "compile" for r in study.results)
    long = tuned(None, n=45).results
    assert long._repr_html_(limit=40).count("<tr>") == 41 and "and 5 more" in long._repr_html_(limit=40)


def test_bad_sources_are_named(tmp_path):
    with pytest.raises(ktune.KtuneError, match="nothing.db"):
        ktune.report(tmp_path / "nothing.db", tmp_path / "r.html")
    with pytest.raises(ValueError, match="not a path or a storage URL"):
        ktune.report(42, tmp_path / "r.html")
    copy = tmp_path / "copy.db"
    shutil.copy(FIXTURE, copy)
    with pytest.raises(ktune.KtuneError, match="no-such-study"):
        ktune.report(copy, tmp_path / "r.html", study="no-such-study")
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(OSError, match="no/such/folder"):
        tuned(None, n=3).report(tmp_path / "no" / "such" / "folder" / "r.html")


SHARED = pathlib.Path(__file__).resolve().parents[4] / "shared" / "data" / "spaces" / "dedispersion_A100.json.gz"


@pytest.mark.skipif(not SHARED.exists(), reason="no ../shared/data/spaces beside the checkout")
def test_a_kernel_tuner_cache_is_reported(tmp_path):
    html = pathlib.Path(ktune.report(SHARED, tmp_path / "c.html")).read_text()
    assert "Kernel Tuner cache" in html and 'id="n-evaluations"' in html
