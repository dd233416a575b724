"""An unchanged CuPy program under LD_PRELOAD=libhyblas.so: cupy.cublas calls cuBLAS's
cublas*_v2 entry points, which hyblas answers (routing per HYBLAS_CUBLAS / the calibrated
table). Checks each result against NumPy on the host and prints one PASS/FAIL line per call.

    HYBLAS_TRACE=stderr LD_PRELOAD=gpu-stage/libhyblas.so python3 ctest/cupy/preload_cupy.py
"""
import sys

import cupy as cp
import numpy as np
from cupy import cublas

rng = np.random.default_rng(7)
fails = 0


def check(name, got, want, tol):
    global fails
    got, want = np.asarray(got), np.asarray(want)
    err = float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want)))))
    ok = err <= tol
    fails += not ok
    print(f"{'PASS' if ok else 'FAIL'} {name:<28} rel err {err:.2e} (tol {tol:.0e})")


for dt, tol in [(np.float32, 2e-4), (np.float64, 1e-12)]:
    n = 8192
    a = rng.standard_normal((n, n)).astype(dt)
    x = rng.standard_normal(n).astype(dt)
    y = rng.standard_normal(n).astype(dt)
    da, dx, dy = cp.asarray(a), cp.asarray(x), cp.asarray(y)
    # gemv: cupy passes C-order arrays to column-major cuBLAS as the transpose.
    # y is updated in place (op applies to the logical, C-ordered array).
    out = dy.copy()
    cublas.gemv("T", 1.5, da, dx, 0.5, out)
    check(f"gemv T {dt.__name__}", cp.asnumpy(out), 1.5 * (a.T @ x) + 0.5 * y, tol)
    out = dy.copy()
    cublas.gemv("N", 1.0, da, dx, 0.0, out)
    check(f"gemv N {dt.__name__}", cp.asnumpy(out), a @ x, tol)
    big = 1 << 24
    bx = rng.standard_normal(big).astype(dt)
    by = rng.standard_normal(big).astype(dt)
    dbx, dby = cp.asarray(bx), cp.asarray(by)
    cublas.axpy(0.25, dbx, dby)
    check(f"axpy n=2^24 {dt.__name__}", cp.asnumpy(dby), by + dt(0.25) * bx, tol)
    check(f"dot n=2^24 {dt.__name__}", float(cublas.dot(dbx, dbx)), float(np.dot(bx.astype(np.float64), bx)), tol * 10)
    check(f"nrm2 n=2^24 {dt.__name__}", float(cublas.nrm2(dbx)), float(np.linalg.norm(bx.astype(np.float64))), tol)
    check(f"asum n=2^24 {dt.__name__}", float(cublas.asum(dbx)), float(np.sum(np.abs(bx.astype(np.float64)))), tol * 10)
    check(f"iamax n=2^24 {dt.__name__}", int(cublas.iamax(dbx)), int(np.argmax(np.abs(bx))) + 1, 0)
    cp.cuda.Device().synchronize()

print("cupy under hyblas:", "all passed" if fails == 0 else f"{fails} FAILED")
sys.exit(1 if fails else 0)
