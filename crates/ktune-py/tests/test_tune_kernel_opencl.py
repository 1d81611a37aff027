"""``ktune.tune_kernel(..., lang="OpenCL")``: a Kernel Tuner OpenCL script tuned for real on
an OpenCL device (PoCL on the CPU, which the test script installs); where none is there, the
tests that need one are skipped with the reason."""

import pytest

np = pytest.importorskip("numpy")

import ktune
from ktune import KtuneError, tune_kernel

opencl = pytest.mark.skipif(not ktune.opencl_available(), reason="no OpenCL driver with a device here (PoCL: pocl-opencl-icd)")

VECTOR_ADD = """
__kernel void vector_add(__global float *c, __global const float *a, __global const float *b, const int n) {
    int i = get_global_id(0);
#if block_size_x == 96
    this does not build;
#endif
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

SIZE = 100_000


def vector_add_args():
    a = np.random.default_rng(1).standard_normal(SIZE).astype(np.float32)
    b = np.random.default_rng(2).standard_normal(SIZE).astype(np.float32)
    c = np.zeros_like(b)
    return [c, a, b, np.int32(SIZE)], [a + b, None, None, None]


def call(**overrides):
    args, answer = vector_add_args()
    kw = dict(
        kernel_name="vector_add",
        kernel_source=VECTOR_ADD,
        problem_size=SIZE,
        arguments=args,
        tune_params={"block_size_x": [32, 64, 96, 128, 256]},
        answer=answer,
        lang="OpenCL",
        quiet=True,
    )
    kw.update(overrides)
    return tune_kernel(**kw)


def test_what_opencl_cannot_do_is_refused_before_any_device_is_touched():
    with pytest.raises(ValueError, match='smem_args is not supported with lang="OpenCL"'):
        call(smem_args={"size": "block_size_x * 4"})
    with pytest.raises(ValueError, match='cmem_args is not supported with lang="OpenCL"'):
        call(cmem_args={"filter": np.zeros(9, np.float32)})
    with pytest.raises(ValueError, match="OpenCL C has no templates"):
        call(kernel_name="vector_add<float>")


@opencl
def test_a_kernel_tuner_opencl_script_tunes_on_the_device():
    results, env = call(strategy="brute_force")
    assert [r["block_size_x"] for r in results] == [32, 64, 96, 128, 256]
    failed = [r for r in results if "__error__" in r]
    assert [r["block_size_x"] for r in failed] == [96]
    assert failed[0]["__error__"] == "CompilationFailedConfig"
    assert "clBuildProgram" in failed[0]["__error_reason__"], failed[0]["__error_reason__"]
    ok = [r for r in results if "__error__" not in r]
    assert all(r["time"] > 0 and len(r["times"]) == 7 for r in ok)
    assert env["device_name"] and env["platform_name"]
    assert env["opencl_version"].startswith("OpenCL")
    assert env["best_config"]["block_size_x"] in (32, 64, 128, 256)


@opencl
def test_outputs_that_differ_from_the_answer_are_failed_configurations():
    args, answer = vector_add_args()
    wrong = [answer[0] + 1.0, None, None, None]
    results, _ = call(answer=wrong, tune_params={"block_size_x": [32, 64]}, strategy="brute_force")
    assert [r["__error__"] for r in results] == ["RuntimeFailedConfig"] * 2
    assert all("output `arguments[0]`: 100000 of 100000 elements differ" in r["__error_reason__"] for r in results)
    # Eight in a row with none matching: the answer is the likelier mistake, and the run stops.
    with pytest.raises(KtuneError, match="the first 8 configurations that ran all gave outputs different"):
        call(answer=wrong, tune_params={"block_size_x": [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]}, strategy="brute_force")


@opencl
def test_a_device_that_is_not_there_is_named():
    with pytest.raises(KtuneError, match="no device 5 on OpenCL platform 0"):
        call(device=5)
    with pytest.raises(KtuneError, match="no OpenCL platform 3"):
        call(platform=3)
