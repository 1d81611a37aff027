import sys, json, math, collections
sys.path.insert(0, '/work/shared/tools/kt-peer')
import score
from spaces import load_spaces
spaces = load_spaces(("shared",))
stats = {s: score.SpaceStats(sp) for s, sp in spaces.items()}
def runs(path, strategy):
    d = {}
    for l in open(path):
        t = json.loads(l)
        if t['strategy'] == strategy and t['space'] in stats:
            d[(t['space'], t['seed'])] = score.score_run(t['values'], stats[t['space']])[0]
    return d
a = runs(sys.argv[1], sys.argv[2]); b = runs(sys.argv[3], sys.argv[4])
keys = sorted(set(a) & set(b))
seeds = sorted({k[1] for k in keys}); sp = sorted({k[0] for k in keys})
# per seed: mean over spaces of the difference
per_seed = [sum(a[(s, seed)] - b[(s, seed)] for s in sp) / len(sp) for seed in seeds]
m = sum(per_seed) / len(per_seed)
se = math.sqrt(sum((x - m) ** 2 for x in per_seed) / (len(per_seed) - 1) / len(per_seed))
print(f"{sys.argv[2]} - {sys.argv[4]}: {m:+.3f} ± {se:.3f} (paired over {len(seeds)} seeds x {len(sp)} spaces)")
