import itertools, numpy as np
tp = dict(MWG=[16,32,64,128], NWG=[16,32,64,128], KWG=[32], MDIMC=[8,16,32], NDIMC=[8,16,32],
          MDIMA=[8,16,32], NDIMB=[8,16,32], KWI=[2], VWM=[1,2,4,8], VWN=[1,2,4,8], STRM=[0], STRN=[0],
          SA=[0,1], SB=[0,1], PRECISION=[32])
names=list(tp)
def ok(p):
    return (p['KWG']%p['KWI']==0 and p['MWG']%(p['MDIMC']*p['VWM'])==0 and p['NWG']%(p['NDIMC']*p['VWN'])==0
        and p['MWG']%(p['MDIMA']*p['VWM'])==0 and p['NWG']%(p['NDIMB']*p['VWN'])==0
        and p['KWG']%((p['MDIMC']*p['NDIMC'])/p['MDIMA'])==0 and p['KWG']%((p['MDIMC']*p['NDIMC'])/p['NDIMB'])==0
        and not (p['MWG']==128 and p['NWG']==128 and p['MDIMC']==8 and p['NDIMC']==8))
idx_lists=[range(len(v)) for v in tp.values()]
valid=[]
for idx in itertools.product(*idx_lists):
    p={n:tp[n][i] for n,i in zip(names,idx)}
    if ok(p): valid.append(idx)
V=np.array(valid)
cart=np.prod([len(v) for v in tp.values()])
print("cartesian",cart,"valid",len(V),"density",len(V)/cart)
np.save("gemm_valid.npy",V)
