# Interleaved A/B of BLAS builds in one process: interleave.py THREADS N SECS name=path ... (first is the base).
# ROUT ([sdcz]trsm|[sdcz]trmm|[sdcz]gemm), V (side/uplo/trans/diag or transa/transb), M (rows, default N).
# Rounds: each lib 3 calls in turn; prints p10/median ms per lib and the median (and 25-75%)
# of per-round ratios base_time/lib_time. SETTLE (seconds, default 0.005) is slept before each
# library's calls: a multithreaded library's idle workers spin after a call (libgomp under MKL
# for about a millisecond), and the library timed next in the rotation would share cores with
# them (session 59: on 2 threads the library right after MKL ran up to 10% slower).
import ctypes, sys, time, os, numpy as np
nt=int(sys.argv[1]); n=int(sys.argv[2]); secs=float(sys.argv[3]); rout=os.environ.get('ROUT','dtrsm'); v=os.environ.get('V','LLNN')
m=int(os.environ.get('M',n)); settle=float(os.environ.get('SETTLE','0.005'))
libs=[]
for s in sys.argv[4:]:
    nm,p=s.split('=',1); l=ctypes.CDLL(p, mode=os.RTLD_LOCAL)
    if hasattr(l,'hyblas_set_num_threads'): l.hyblas_set_num_threads(ctypes.c_int(nt))
    elif hasattr(l,'MKL_Set_Num_Threads'): l.MKL_Set_Num_Threads(ctypes.c_int(nt))
    libs.append((nm,getattr(l,rout+'_')))
p0=rout[0]; dt={'s':np.float32,'d':np.float64,'c':np.complex64,'z':np.complex128}[p0]
rng=np.random.default_rng(1)
def rnd(r,c_):
    x=rng.standard_normal((r,c_))
    if p0 in 'cz': x=x+1j*rng.standard_normal((r,c_))
    return x
side=v[0]
ka = (m if side=='L' else n) if not rout.endswith('gemm') else n
a=np.asfortranarray((rnd(ka,ka)+ka*np.eye(ka)).astype(dt)); b0=np.asfortranarray(rnd(m,n).astype(dt)); b=b0.copy(order='F')
if rout.endswith('gemm'):
    a=np.asfortranarray(rnd(n,n).astype(dt)); b0=np.asfortranarray(rnd(n,n).astype(dt)); b=b0.copy(order='F'); m=n
c=ctypes.c_char; N=ctypes.c_int(n); Mi=ctypes.c_int(m); KA=ctypes.c_int(ka)
if p0=='s': al=np.array([1.0],np.float32); be=np.array([0.5],np.float32)
elif p0=='d': al=np.array([1.0]); be=np.array([0.5])
elif p0=='c': al=np.array([1.0+0.5j],np.complex64); be=np.array([0.5],np.complex64)
else: al=np.array([1.0+0.5j]); be=np.array([0.5+0j])
P=lambda x: x.ctypes.data_as(ctypes.c_void_p); R=ctypes.byref
ch=[R(c(x.encode())) for x in v]
def call(f):
    if rout.endswith('gemm'): f(ch[0],ch[1],R(N),R(N),R(N),P(al),P(a),R(N),P(b0),R(N),P(be),P(b),R(N))
    else: f(ch[0],ch[1],ch[2],ch[3],R(Mi),R(N),P(al),P(a),R(KA),P(b),R(Mi))
for nm,f in libs:
    for _ in range(5): b[:]=b0; call(f)
ts={nm:[] for nm,_ in libs}; rounds=[]
t_end=time.time()+secs
while time.time()<t_end:
    r={}
    for nm,f in libs:
        time.sleep(settle)
        x=[]
        for _ in range(3):
            b[:]=b0; t=time.perf_counter(); call(f); x.append(time.perf_counter()-t)
        ts[nm]+=x; r[nm]=min(x)
    rounds.append(r)
base=libs[0][0]
for nm,_ in libs:
    v_=np.array(ts[nm]); rr=np.array([q[base]/q[nm] for q in rounds])
    print(f"  {nm:6s} p10 {np.percentile(v_,10)*1e3:.3f} ms med {np.median(v_)*1e3:.3f}  speed vs {base}: {np.median(rr):.3f} [{np.percentile(rr,25):.3f}-{np.percentile(rr,75):.3f}] rounds {len(rounds)}")
