#!/usr/bin/env bash
# ktune beside Kernel Tuner 1.5 on real OpenCL launches (issue 48): the three OpenCL examples
# (vector add, tiled matmul, 2-D convolution), the same Kernel Tuner script run by both tools
# (bench/kt_opencl.py, `--tool kernel_tuner` and `--tool ktune`: only the import differs),
# the same kernels, spaces, arguments, reference output, 7 timed runs per configuration, the
# same budget of distinct evaluations, seeds 0..SEEDS-1, PoCL's kernel cache off so that every
# program is built cold. Then the table (bench/opencl_summary.py).
#
#   PYTHON=/path/to/venv/bin/python bash bench/opencl_side_by_side.sh OUT [SEEDS] [STRATEGY[:KTUNE_STRATEGY]] [KERNELS]
#
# PYTHON needs numpy, kernel_tuner==1.5.0, pyopencl and the ktune wheel; an OpenCL device
# (PoCL: pocl-opencl-icd). STRATEGY (default random_sample) is given to both tools (ktune's
# tune_kernel maps Kernel Tuner's names onto its own strategies), or to Kernel Tuner only
# when KTUNE_STRATEGY names ktune's (`genetic_algorithm:auto`). KERNELS (default
# "vector_add matmul convolution") picks the examples. The tools alternate which
# goes first from seed to seed, so that drift of the machine hits both alike.
set -euo pipefail
out=${1:?usage: opencl_side_by_side.sh OUT [SEEDS] [STRATEGY]}
seeds=${2:-5}
strategy=${3:-random_sample}
kt_strategy=${strategy%%:*}
ktune_strategy=${strategy#*:}
kernels=${4:-vector_add matmul convolution}
python=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
declare -A evals=([vector_add]=20 [matmul]=30 [convolution]=30)
for kernel in $kernels; do
    for ((seed = 0; seed < seeds; seed++)); do
        tools=(kernel_tuner ktune)
        ((seed % 2)) && tools=(ktune kernel_tuner)
        for tool in "${tools[@]}"; do
            s=$kt_strategy
            [ "$tool" = ktune ] && s=$ktune_strategy
            echo "== $kernel seed $seed $tool $s" >&2
            "$python" "$here/kt_opencl.py" --tool "$tool" --kernel "$kernel" --strategy "$s" \
                --evals "${evals[$kernel]}" --seed "$seed" --no-build-cache \
                --reference "$out/reference-$kernel-$seed.npz" \
                --out "$out/$tool-$kernel-$s-$seed.json" >/dev/null
        done
    done
done
files=()
for kernel in $kernels; do
    files+=("$out"/kernel_tuner-"$kernel"-"$kt_strategy"-*.json "$out"/ktune-"$kernel"-"$ktune_strategy"-*.json)
done
"$python" "$here/opencl_summary.py" "${files[@]}"
