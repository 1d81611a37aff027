import json, numpy as np, math
from gemm_space import tp, names, V
rng = np.random.default_rng(4242)
noise = rng.lognormal(0, 0.05, len(V))
cache = {}; nfail = 0
for k, idx in enumerate(V):
    p = {n: tp[n][i] for n, i in zip(names, idx)}
    thr = p['MDIMC']*p['NDIMC']; wpt = p['MWG']*p['NWG']/thr
    rec = dict(p)
    if (wpt > 32 and thr >= 512) or (wpt >= 64 and p['SA'] and p['SB']):
        rec.update(time="RuntimeFailedConfig", compile_time=1.0, verification_time=0.0, benchmark_time=0.0); nfail += 1
    else:
        eff = math.exp(-0.5*(math.log2(wpt/16))**2/1.5)
        eff *= math.exp(-0.5*(math.log2(thr/256))**2/1.0)
        eff *= math.exp(-0.5*((math.log2(p['VWM'])-1.5)**2 + (math.log2(p['VWN'])-1.0)**2)/1.0)
        eff *= (1.3 if p['SA'] else 1.0) * (1.1 if p['SB'] else 1.0)
        eff *= 1 - 0.1*abs(math.log2(p['MDIMA']/p['MDIMC'])) - 0.1*abs(math.log2(p['NDIMB']/p['NDIMC']))
        eff *= 1 - 0.15*abs(math.log2(p['MWG']/p['NWG']))
        rec.update(time=10.0/max(eff,1e-3)*noise[k], compile_time=1.0, verification_time=0.0, benchmark_time=1.0)
    cache[",".join(str(p[n]) for n in names)] = rec
d = dict(device_name="synthetic3", kernel_name="Xgemm", problem_size=[1024,1024], tune_params_keys=names, tune_params=tp, objective="time", cache=cache)
json.dump(d, open("synthetic_gemm3.json","w"))
vals = sorted(c['time'] for c in cache.values() if not isinstance(c['time'], str))
best = min((c for c in cache.values() if not isinstance(c['time'], str)), key=lambda c: c['time'])
print(len(cache), "fail", nfail, "opt", vals[0], "median", vals[len(vals)//2], {n: best[n] for n in names})
