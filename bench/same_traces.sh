#!/usr/bin/env bash
# Whether two ktune binaries give the same fixed-seed traces on the 12 shared spaces, apart
# from timings: the check that a refactoring left every strategy's behaviour alone.
#   bash bench/same_traces.sh OLD_KTUNE NEW_KTUNE [OUT]     (run from the repository root)
# Four sets, each `ktune bench` on the 12 spaces of ../shared/data/spaces:
#   plain     10 strategies without a model, 2 seeds, the spaces' budgets (240 runs)
#   model     bayes_opt, auto, baco, 2 seeds, the spaces' budgets (72 runs)
#   variants  9 non-default option sets, 1 seed, 80 evaluations (108 runs)
#   workers   auto, bayes_opt, mls with 1 and 4 simulated workers, 1 seed, 80 evaluations (72 runs)
# Keys holding times (any key with "seconds", `wall`) and the binary's `tool` line are dropped;
# rows are sorted (runs finish in any order). Prints `SET same` or `SET DIFFERS`; exits 1 when
# any set differs. About 10 minutes on 2 cores (baco is most of it).
set -euo pipefail
old=$1 new=$2 out=${3:-$(mktemp -d /tmp/ktune-same-traces.XXXXXX)}
spaces=(../shared/data/spaces/*.json.gz)
[ -f "${spaces[0]}" ] || { echo "no spaces in ../shared/data/spaces" >&2; exit 2; }

traces() { # binary, folder
    local k=$1 o=$2
    "$k" bench "${spaces[@]}" -s random,brute_force,simulated_annealing,mls,greedy_ils,diff_evo,pso,firefly_algorithm,genetic_algorithm,tpe \
        --seeds 2 --out "$o/plain" --no-plots >/dev/null 2>&1
    "$k" bench "${spaces[@]}" -s bayes_opt,auto,baco --seeds 2 --out "$o/model" --no-plots >/dev/null 2>&1
    "$k" bench "${spaces[@]}" -s 'bayes_opt:kernel=matern52:initial_sampling=lhs:exploration=0.01,bayes_opt:alignment=validated:initial_sampling=random,bayes_opt:surrogate=cgp,mls:neighbour=adjacent:order=sequential,greedy_ils:neighbour=strictly-adjacent,simulated_annealing:neighbour=adjacent,diff_evo:method=rand1bin,auto:local=mls+annealing:initial_sampling=maximin,baco:kernel=rbf' \
        --seeds 1 --budget 80 --out "$o/variants" --no-plots >/dev/null 2>&1
    "$k" bench "${spaces[@]}" -s auto,bayes_opt,mls --workers 1,4 --seeds 1 --budget 80 \
        --out "$o/workers" --no-plots >/dev/null 2>&1
}

strip() { # folder: traces.jsonl -> traces.stripped
    python3 - "$1" <<'EOF'
import json, pathlib, sys
def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items() if 'seconds' not in k and k not in ('wall', 'tool')}
    return x
for f in sorted(pathlib.Path(sys.argv[1]).rglob('traces.jsonl')):
    rows = sorted(json.dumps(clean(json.loads(l)), sort_keys=True) for l in f.read_text().splitlines())
    f.with_name('traces.stripped').write_text('\n'.join(rows) + '\n')
EOF
}

traces "$old" "$out/old" && strip "$out/old"
traces "$new" "$out/new" && strip "$out/new"
status=0
for set in plain model variants workers; do
    if cmp -s "$out/old/$set/traces.stripped" "$out/new/$set/traces.stripped"; then
        echo "$set same ($(wc -l <"$out/new/$set/traces.stripped") runs)"
    else
        echo "$set DIFFERS: diff $out/old/$set/traces.stripped $out/new/$set/traces.stripped"
        status=1
    fi
done
exit $status
