# One library, one routine, timed for SECS: prints p10 and median per-call ms (for alternating-process A/B).
import ctypes, sys, time, os, numpy as np
path=sys.argv[1]; n=int(sys.argv[2]); secs=float(sys.argv[3]); rout=os.environ.get('ROUT','dtrsm'); v=os.environ.get('V','LLNN')
lib=ctypes.CDLL(path, mode=os.RTLD_LOCAL)
dt=np.float64 if rout[0]=='d' else np.float32
rng=np.random.default_rng(1)
a=np.asfortranarray(rng.standard_normal((n,n)).astype(dt)+n*np.eye(n,dtype=dt))
b0=np.asfortranarray(rng.standard_normal((n,n)).astype(dt)); b=b0.copy(order='F')
c=ctypes.c_char; i=ctypes.c_int; al=(ctypes.c_double if dt==np.float64 else ctypes.c_float)(1.0); N=i(n)
f=getattr(lib,rout+'_')
def call():
    if rout.endswith('gemm'):
        be=type(al)(0.5)
        return f(ctypes.byref(c(v[0].encode())),ctypes.byref(c(v[1].encode())),ctypes.byref(N),ctypes.byref(N),ctypes.byref(N),ctypes.byref(al),a.ctypes.data_as(ctypes.c_void_p),ctypes.byref(N),b0.ctypes.data_as(ctypes.c_void_p),ctypes.byref(N),ctypes.byref(be),b.ctypes.data_as(ctypes.c_void_p),ctypes.byref(N))
    side,uplo,tr,dg=v
    f(ctypes.byref(c(side.encode())),ctypes.byref(c(uplo.encode())),ctypes.byref(c(tr.encode())),ctypes.byref(c(dg.encode())),ctypes.byref(N),ctypes.byref(N),ctypes.byref(al),a.ctypes.data_as(ctypes.c_void_p),ctypes.byref(N),b.ctypes.data_as(ctypes.c_void_p),ctypes.byref(N))
for _ in range(10): b[:]=b0; call()
ts=[]; t_end=time.time()+secs
while time.time()<t_end:
    b[:]=b0; t=time.perf_counter(); call(); ts.append(time.perf_counter()-t)
v=np.array(ts); fl=(2 if rout.endswith("gemm") else 1)
print(f"{np.percentile(v,10)*1e3:.4f} {np.median(v)*1e3:.4f} {len(v)}")
