"""``ktune.select``: the shared fixtures of ``crates/ktune-select`` (the queries the Rust crate
and the C header answer too), and clear errors for a wisdom file that is cut off, of another
kernel, or missing."""

import json
import pathlib

import pytest

import ktune

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "ktune-select" / "tests" / "fixtures"


def records(path):
    lines = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    header, rows = lines[0], lines[1:]
    return header, rows


def test_the_shared_queries_are_answered_as_in_rust_and_c():
    queries = json.loads((FIXTURES / "queries.json").read_text())
    assert len(queries) >= 30
    for q in queries:
        path = FIXTURES / q["wisdom"]
        header, rows = records(path)
        names = header["tunable_parameters"]
        got = ktune.select(str(path), q["device"], q["size"])
        if q["index"] == -2:
            assert got is None, q
            continue
        expected = header["ktune"]["default"] if q["index"] == -1 else rows[q["index"]]["config"]
        assert got["matched"] == q["matched"], q
        assert got["config"] == dict(zip(names, expected)), q
        if q["index"] >= 0:
            assert got["device"] == rows[q["index"]]["environment"]["device_name"]
            assert got["objective"] == rows[q["index"]][header["objective"]]
        else:
            assert got["device"] is None and got["problem_size"] is None


def test_a_size_is_an_int_or_a_list_of_extents():
    path = str(FIXTURES / "tuned.wisdom")
    assert ktune.select(path, "NVIDIA RTX A4000", (4096, 4096, 2))["matched"] == "exact"
    assert ktune.select(path, "NVIDIA GeForce RTX 3090", 8192)["matched"] == "exact"
    # A fourth extent multiplies into the third.
    assert ktune.select(path, "NVIDIA RTX A4000", [4096, 4096, 1, 2])["matched"] == "exact"
    with pytest.raises(ValueError, match="problem_size holds -1"):
        ktune.select(path, "x", [-1])
    with pytest.raises(TypeError, match="problem_size holds '64', not a whole number"):
        ktune.select(path, "x", ["64"])


def test_broken_wisdom_is_a_clear_error(tmp_path):
    text = (FIXTURES / "tuned.wisdom").read_text()
    cut = tmp_path / "cut.wisdom"
    cut.write_text(text[: len(text) - 40])
    with pytest.raises(ktune.KtuneError, match=r"cut.wisdom`: line 11, column \d+: .*cut off"):
        ktune.select(str(cut), "NVIDIA H100 80GB HBM3", [4096, 4096])
    with pytest.raises(ktune.KtuneError, match="wisdom for kernel `matmul`, not `conv`"):
        ktune.select(str(FIXTURES / "tuned.wisdom"), "x", [1], kernel="conv")
    with pytest.raises(ktune.KtuneError, match="cannot read `.*missing.wisdom`"):
        ktune.select(str(tmp_path / "missing.wisdom"), "x", [1])
