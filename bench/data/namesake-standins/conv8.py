import gzip, json, sys
import os
# kt-peer beside the checkout (../shared/tools/kt-peer), or where KT_PEER says.
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("KT_PEER", os.path.join(here, "..", "..", "..", "..", "shared", "tools", "kt-peer")))
from spaces import read_cache_file
src = sys.argv[1]; shm = int(sys.argv[2]); out = sys.argv[3]
d = read_cache_file(src)
keys = d["tune_params_keys"]
drop = ["use_shmem", "use_cmem"]
nk = [k for k in keys if k not in drop]
cache = {}
for k, r in d["cache"].items():
    if r["use_shmem"] != shm: continue
    r = {a: b for a, b in r.items() if a not in drop}
    cache[",".join(str(r[x]) for x in nk)] = r
tp = {k: v for k, v in d["tune_params"].items() if k not in drop}
d2 = dict(d); d2.update(tune_params_keys=nk, tune_params=tp, cache=cache)
json.dump(d2, open(out, "w"))
import itertools
cart = 1
for v in tp.values(): cart *= len(v)
print(out, len(cache), "cartesian", cart, "density", len(cache)/cart, {k: len(v) for k, v in tp.items()})
