#!/usr/bin/env bash
# Fills .gpu/ (git-ignored) with what a GPU session carries to a machine that has an NVIDIA
# GPU, its driver, a CUDA toolkit and Python with numpy and pytest, but no Rust toolchain and
# no network: the stripped release `ktune`, the CUDA test binaries, and under .gpu/py the
# release `ktune` wheel and Kernel Tuner 1.5.0 with the dependencies that machine lacks,
# unpacked for its Python (default 3.12). Then, on the GPU machine, from the repository root:
#
#   tar xJf .gpu-pack/gpu.tar.xz
#   bash bench/cuda_gpu_check.sh .gpu "$OUT" "tests python kt:matmul:NVCUDA kt:matmul:ktune ..."
#
# (carry `.gpu-pack` with the device tool; see the end of this script). Usage: bash bench/gpu_carry.sh [python version]
set -euo pipefail
py=${1:-3.12}
cd "$(dirname "$0")/.."
maturin=${MATURIN:-$(command -v maturin || echo target/py-test-venv/bin/maturin)}
pip=${PIP:-$(command -v pip3 || echo target/py-test-venv/bin/pip)}

# One build at a time in one target folder (the wheel shares it).
cargo build --release -q -p ktune-cli
test_binary() { # package [test target]
    cargo test --release -q -p "$@" --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])' | tail -1
}
runners=$(test_binary ktune-runners --lib)
cli_cuda=$(test_binary ktune-cli --test cli)
"$maturin" build -q --release --manifest-path crates/ktune-py/Cargo.toml -o target/wheels-rel

rm -rf .gpu && mkdir -p .gpu/py .gpu/wheels
cp target/release/ktune "$runners" .gpu/
cp "$cli_cuda" .gpu/cli_cuda
strip .gpu/ktune .gpu/ktune_runners-* .gpu/cli_cuda

# The GPU image has numpy, scipy, scikit-learn, pandas, pytest and cuda-bindings already;
# Kernel Tuner's other dependencies are fetched here for its Python.
platforms=(--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64
    --platform manylinux_2_34_x86_64 --platform manylinux_2_39_x86_64)
"$pip" download -q -d .gpu/wheels --only-binary=:all: --python-version "$py" "${platforms[@]}" --no-deps \
    kernel_tuner==1.5.0 python-constraint2==2.9.0 xmltodict jsonschema jsonschema-specifications referencing rpds-py
cp target/wheels-rel/ktune-*.whl .gpu/wheels/
"$pip" install -q --no-deps --no-index --target .gpu/py --only-binary=:all: --python-version "$py" \
    "${platforms[@]}" .gpu/wheels/*.whl
rm -rf .gpu/wheels
# What travels is limited (64 MiB with the checkout): no C sources, caches or symbols.
find .gpu/py \( -name '*.c' -o -name __pycache__ \) -prune -exec rm -rf {} +
find .gpu/py -name '*.so' -exec strip --strip-unneeded {} +
du -sh .gpu
# The checkout (about 20 MiB) and .gpu (about 50 MiB) together exceed what travels: carry the
# packed copy (`.gpu-pack`, about 14 MiB) and unpack it there first (`tar xJf
# .gpu-pack/gpu.tar.xz`). Kernel Tuner's packages are only needed for the `kt:` steps:
# GPU_CARRY_LEAN=1 leaves them out.
if [[ ${GPU_CARRY_LEAN:-} == 1 ]]; then
    find .gpu/py -mindepth 1 -maxdepth 1 ! -name 'ktune' ! -name 'ktune-*' -exec rm -rf {} +
fi
mkdir -p .gpu-pack && tar cJf .gpu-pack/gpu.tar.xz .gpu
du -sh .gpu-pack
