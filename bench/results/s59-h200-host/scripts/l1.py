# Interleaved Level 1 A/B: l1.py ROUT(daxpy|ddot) N SECS name=path[@prefix] ...
import ctypes, sys, time, os, numpy as np
rout=sys.argv[1]; n=int(sys.argv[2]); secs=float(sys.argv[3])
libs=[]
for s in sys.argv[4:]:
    nm,p=s.split('=',1); pre=''
    if '@' in p: p,pre=p.split('@')
    l=ctypes.CDLL(p, mode=os.RTLD_LOCAL)
    for f,a in [('hyblas_set_num_threads',1),('MKL_Set_Num_Threads',1),(pre+'openblas_set_num_threads',1)]:
        if hasattr(l,f): getattr(l,f)(ctypes.c_int(a))
    fn=getattr(l,pre+rout+'_'); fn.restype=ctypes.c_double if rout in ('ddot','dasum','dnrm2') else None
    libs.append((nm,fn))
x=np.random.rand(n); y=np.random.rand(n); al=ctypes.c_double(1e-9); sc=ctypes.c_double(1.0); N=ctypes.c_int(n); one=ctypes.c_int(1); R=ctypes.byref
P=lambda v: v.ctypes.data_as(ctypes.c_void_p)
def call(f):
    if rout=='daxpy': f(R(N),R(al),P(x),R(one),P(y),R(one))
    elif rout=='ddot': f(R(N),P(x),R(one),P(y),R(one))
    elif rout=='dscal': f(R(N),R(sc),P(y),R(one))
    else: f(R(N),P(x),R(one))
for nm,f in libs: call(f)
rounds=[]; t_end=time.time()+secs
while time.time()<t_end:
    r={}
    for nm,f in libs:
        ts=[]
        for _ in range(3):
            t=time.perf_counter(); call(f); ts.append(time.perf_counter()-t)
        r[nm]=min(ts)
    rounds.append(r)
byt={'daxpy':24,'ddot':16,'dscal':16,'dasum':8,'dnrm2':8}[rout]*n
base=libs[0][0]
for nm,_ in libs:
    rr=np.array([q[base]/q[nm] for q in rounds]); t=np.median([q[nm] for q in rounds])
    print(f"  {nm:8s} {byt/t/1e9:6.1f} GB/s  speed vs {base}: {np.median(rr):.3f} [{np.percentile(rr,25):.3f}-{np.percentile(rr,75):.3f}] rounds {len(rounds)}")
