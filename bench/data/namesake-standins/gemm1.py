"""GEMM stand-ins 1 and 2: `python gemm1.py` writes synthetic_gemm.json, `python gemm1.py 2`
synthetic_gemm2.json (another seed, less noise, vector width 8 penalised)."""
import json, numpy as np, math, sys
from gemm_space import tp, names, V
second = sys.argv[1:] == ["2"]
rng = np.random.default_rng(777 if second else 12345)
# synthetic GEMM-like objective (illustrative only)
noise = rng.lognormal(0, 0.04 if second else 0.12, len(V))
cache = {}
for k, idx in enumerate(V):
    p = {n: tp[n][i] for n, i in zip(names, idx)}
    thr = p['MDIMC']*p['NDIMC']
    wpt = p['MWG']*p['NWG']/thr
    eff = min(wpt, 32)**0.5
    if wpt > 64: eff *= 0.4
    eff *= (1 + 0.15*math.log2(p['VWM']) - (0.5 if second and p['VWM']==8 else 0)) * (1 + 0.12*math.log2(p['VWN']))
    eff *= (1.25 if p['SA'] else 1.0) * (1.15 if p['SB'] else 1.0)
    eff *= 1 - 0.15*abs(math.log2(thr/256))
    eff *= 1 - 0.08*abs(math.log2(p['MDIMA']/p['MDIMC'])) - 0.08*abs(math.log2(p['NDIMB']/p['NDIMC']))
    t = 10.0/eff*noise[k]
    key = ",".join(str(p[n]) for n in names)
    rec = dict(p); rec.update(time=t, compile_time=1.0, verification_time=0.0, benchmark_time=1.0)
    cache[key] = rec
d = dict(device_name="synthetic", kernel_name="Xgemm", problem_size=[1024,1024], tune_params_keys=names,
         tune_params=tp, objective="time", cache=cache)
json.dump(d, open("synthetic_gemm2.json" if second else "synthetic_gemm.json","w"))
vals = np.array([c['time'] for c in cache.values()])
print(len(cache), vals.min(), np.median(vals))
