/*
 * A cuBLAS program, linked against libcublas as any other, that checks hyblas's cuBLAS layer
 * when run with LD_PRELOAD=libhyblas.so:
 *
 *   - each routine is called by its normal name (cublasSgemv_v2, ...: with hyblas preloaded
 *     these resolve to hyblas's exports) and, on the same random data, through the real
 *     cuBLAS function taken with dlsym(dlopen("libcublas.so.<major>", RTLD_LOCAL), name);
 *     one PASS/FAIL line per routine;
 *   - interception is shown twice: dladdr() names the object dlsym(RTLD_DEFAULT, name) comes
 *     from, and, when HYBLAS_TRACE names a file, that file must hold one hyblas line per
 *     intercepted routine (its route= is printed).
 *
 * Usage: cublas_preload [--expect hyblas|cublas] [--require-hyblas]
 *   --expect hyblas   the names must resolve into libhyblas (default)
 *   --expect cublas   control run without the preload: they must resolve into libcublas
 *   --require-hyblas  every traced call must have run on hyblas (route=hyblas, not declined)
 * Exit status: 0 all passed, 1 a check failed, 2 setup error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define STR2(x) #x
#define STR(x) STR2(x)
#define CUBLAS_SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)

static void *cublas_lib;
static cublasHandle_t handle;
static cudaStream_t stream;
static int failures;
static int expect_hyblas = 1;

/* ---- the real functions ---- */

static void *real_sym(const char *name) {
    void *p = dlsym(cublas_lib, name);
    if (!p) {
        fprintf(stderr, "%s not found in %s: %s\n", name, CUBLAS_SONAME, dlerror());
        exit(2);
    }
    return p;
}

/* real_<name>: a pointer of the same type as <name>, loaded from libcublas itself. */
#define DECL_REAL(fn) static __typeof__(&fn) real_##fn
#define LOAD_REAL(fn) (*(void **)(&real_##fn) = real_sym(#fn))

DECL_REAL(cublasSaxpy_v2);
DECL_REAL(cublasDaxpy_v2);
DECL_REAL(cublasZaxpy_v2);
DECL_REAL(cublasDscal_v2);
DECL_REAL(cublasZdscal_v2);
DECL_REAL(cublasScopy_v2);
DECL_REAL(cublasDswap_v2);
DECL_REAL(cublasSdot_v2);
DECL_REAL(cublasDdot_v2);
DECL_REAL(cublasZdotc_v2);
DECL_REAL(cublasDnrm2_v2);
DECL_REAL(cublasScasum_v2);
DECL_REAL(cublasIdamax_v2);
DECL_REAL(cublasSgemv_v2);
DECL_REAL(cublasDgemv_v2);
DECL_REAL(cublasCgemv_v2);
DECL_REAL(cublasZgemv_v2);
DECL_REAL(cublasDger_v2);
DECL_REAL(cublasZgerc_v2);
DECL_REAL(cublasStrmv_v2);
DECL_REAL(cublasDtrmv_v2);
DECL_REAL(cublasZtrmv_v2);
DECL_REAL(cublasDaxpy_v2_64);
DECL_REAL(cublasSgemv_v2_64);
DECL_REAL(cublasIsamax_v2_64);
DECL_REAL(cublasSgemm_v2);
DECL_REAL(cublasDgemm_v2);
DECL_REAL(cublasCgemm_v2);
DECL_REAL(cublasZgemm_v2);
DECL_REAL(cublasDgemm_v2_64);
DECL_REAL(cublasGemmEx);
DECL_REAL(cublasGemmEx_64);
DECL_REAL(cublasSgemmStridedBatched);

static void load_reals(void) {
    LOAD_REAL(cublasSaxpy_v2);
    LOAD_REAL(cublasDaxpy_v2);
    LOAD_REAL(cublasZaxpy_v2);
    LOAD_REAL(cublasDscal_v2);
    LOAD_REAL(cublasZdscal_v2);
    LOAD_REAL(cublasScopy_v2);
    LOAD_REAL(cublasDswap_v2);
    LOAD_REAL(cublasSdot_v2);
    LOAD_REAL(cublasDdot_v2);
    LOAD_REAL(cublasZdotc_v2);
    LOAD_REAL(cublasDnrm2_v2);
    LOAD_REAL(cublasScasum_v2);
    LOAD_REAL(cublasIdamax_v2);
    LOAD_REAL(cublasSgemv_v2);
    LOAD_REAL(cublasDgemv_v2);
    LOAD_REAL(cublasCgemv_v2);
    LOAD_REAL(cublasZgemv_v2);
    LOAD_REAL(cublasDger_v2);
    LOAD_REAL(cublasZgerc_v2);
    LOAD_REAL(cublasStrmv_v2);
    LOAD_REAL(cublasDtrmv_v2);
    LOAD_REAL(cublasZtrmv_v2);
    LOAD_REAL(cublasDaxpy_v2_64);
    LOAD_REAL(cublasSgemv_v2_64);
    LOAD_REAL(cublasIsamax_v2_64);
    LOAD_REAL(cublasSgemm_v2);
    LOAD_REAL(cublasDgemm_v2);
    LOAD_REAL(cublasCgemm_v2);
    LOAD_REAL(cublasZgemm_v2);
    LOAD_REAL(cublasDgemm_v2_64);
    LOAD_REAL(cublasGemmEx);
    LOAD_REAL(cublasGemmEx_64);
    LOAD_REAL(cublasSgemmStridedBatched);
}

/* The names this program calls, checked for interception and in the trace. */
static const char *const NAMES[] = {
    "cublasSaxpy_v2",  "cublasDaxpy_v2",  "cublasZaxpy_v2",    "cublasDscal_v2",     "cublasZdscal_v2",
    "cublasScopy_v2",  "cublasDswap_v2",  "cublasSdot_v2",     "cublasDdot_v2",      "cublasZdotc_v2",
    "cublasDnrm2_v2",  "cublasScasum_v2", "cublasIdamax_v2",   "cublasSgemv_v2",     "cublasDgemv_v2",
    "cublasCgemv_v2",  "cublasZgemv_v2",  "cublasDger_v2",     "cublasZgerc_v2",     "cublasStrmv_v2",
    "cublasDtrmv_v2",  "cublasZtrmv_v2",  "cublasDaxpy_v2_64", "cublasSgemv_v2_64", "cublasIsamax_v2_64",
    "cublasSgemm_v2",  "cublasDgemm_v2",  "cublasCgemm_v2",    "cublasZgemm_v2",     "cublasDgemm_v2_64",
    "cublasGemmEx",    "cublasGemmEx_64", "cublasSgemmStridedBatched",
};
#define NNAMES (sizeof(NAMES) / sizeof(NAMES[0]))


/* ---- data ---- */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

/* Uniform in [-1, 1) (xorshift64*). */
static double urand(void) {
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static float *rand_s(size_t n) {
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (float)urand();
    return v;
}
static double *rand_d(size_t n) {
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = urand();
    return v;
}
static cuComplex *rand_c(size_t n) {
    cuComplex *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = make_cuComplex((float)urand(), (float)urand());
    return v;
}
static cuDoubleComplex *rand_z(size_t n) {
    cuDoubleComplex *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = make_cuDoubleComplex(urand(), urand());
    return v;
}

/* A device copy of host data, complete before any later work on `stream` starts. */
static void *upload(const void *h, size_t bytes) {
    void *d;
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    return d;
}

/* Host copy of device data after everything on `stream` finished. */
static void *download(const void *d, size_t bytes) {
    void *h = malloc(bytes);
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    return h;
}

/* ---- comparison ---- */

/* Compare `n` reals (complex data: 2n) of hyblas's result `a` with cuBLAS's `b`:
 * max|a-b| <= tol * max(1, max|b|), tol = 64 eps sqrt(k + 1) for k-term sums (k = 0: exact). */
static void compare(const char *what, const void *a, const void *b, size_t n, int dbl, size_t k) {
    double err = 0.0, scale = 1.0;
    for (size_t i = 0; i < n; i++) {
        double x = dbl ? ((const double *)a)[i] : ((const float *)a)[i];
        double y = dbl ? ((const double *)b)[i] : ((const float *)b)[i];
        double d = fabs(x - y);
        if (isnan(x) != isnan(y)) d = INFINITY;
        if (d > err || isnan(d)) err = d;
        if (fabs(y) > scale) scale = fabs(y);
    }
    double eps = dbl ? 2.220446049250313e-16 : 1.1920928955078125e-07;
    double tol = k == 0 ? 0.0 : 64.0 * eps * sqrt((double)k + 1.0);
    int ok = err <= tol * scale;
    printf("%s %-34s max|hyblas - cublas| = %.3g, allowed %.3g\n", ok ? "PASS" : "FAIL", what, err, tol * scale);
    if (!ok) failures++;
}

static void status_pair(const char *what, cublasStatus_t ours, cublasStatus_t theirs) {
    if (ours != theirs || ours != CUBLAS_STATUS_SUCCESS) {
        int same = ours == theirs;
        printf("%s %-34s status hyblas %d, cublas %d\n", same ? "PASS" : "FAIL", what, (int)ours, (int)theirs);
        if (!same) failures++;
    }
}

static void set_mode(cublasPointerMode_t m) {
    if (cublasSetPointerMode_v2(handle, m) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasSetPointerMode_v2 failed\n");
        exit(2);
    }
}

/* ---- Level 1 ---- */

#define N1 ((size_t)1 << 17) /* above hyblas's default Level 1 threshold (2^16) */

static void level1(void) {
    const size_t n = N1;
    cublasStatus_t s1, s2;

    { /* saxpy, contiguous */
        float *x = rand_s(n), *y = rand_s(n), alpha = 0.75f;
        float *dx = upload(x, n * 4), *y1 = upload(y, n * 4), *y2 = upload(y, n * 4);
        s1 = cublasSaxpy_v2(handle, (int)n, &alpha, dx, 1, y1, 1);
        s2 = real_cublasSaxpy_v2(handle, (int)n, &alpha, dx, 1, y2, 1);
        status_pair("cublasSaxpy_v2", s1, s2);
        float *a = download(y1, n * 4), *b = download(y2, n * 4);
        compare("cublasSaxpy_v2", a, b, n, 0, 2);
        free(x), free(y), free(a), free(b), cudaFree(dx), cudaFree(y1), cudaFree(y2);
    }
    { /* daxpy, strided and negative increments */
        size_t lx = 2 * (n - 1) + 1;
        double *x = rand_d(lx), *y = rand_d(n), alpha = -1.25;
        double *dx = upload(x, lx * 8), *y1 = upload(y, n * 8), *y2 = upload(y, n * 8);
        s1 = cublasDaxpy_v2(handle, (int)n, &alpha, dx, 2, y1, -1);
        s2 = real_cublasDaxpy_v2(handle, (int)n, &alpha, dx, 2, y2, -1);
        status_pair("cublasDaxpy_v2", s1, s2);
        double *a = download(y1, n * 8), *b = download(y2, n * 8);
        compare("cublasDaxpy_v2 incx=2 incy=-1", a, b, n, 1, 2);
        free(x), free(y), free(a), free(b), cudaFree(dx), cudaFree(y1), cudaFree(y2);
    }
    { /* zaxpy */
        cuDoubleComplex *x = rand_z(n), *y = rand_z(n), alpha = make_cuDoubleComplex(0.5, -0.25);
        size_t bytes = n * sizeof *x;
        void *dx = upload(x, bytes), *y1 = upload(y, bytes), *y2 = upload(y, bytes);
        s1 = cublasZaxpy_v2(handle, (int)n, &alpha, dx, 1, y1, 1);
        s2 = real_cublasZaxpy_v2(handle, (int)n, &alpha, dx, 1, y2, 1);
        status_pair("cublasZaxpy_v2", s1, s2);
        double *a = download(y1, bytes), *b = download(y2, bytes);
        compare("cublasZaxpy_v2", a, b, 2 * n, 1, 2);
        free(x), free(y), free(a), free(b), cudaFree(dx), cudaFree(y1), cudaFree(y2);
    }
    { /* dscal, zdscal */
        double *x = rand_d(n), alpha = 1.5;
        double *x1 = upload(x, n * 8), *x2 = upload(x, n * 8);
        s1 = cublasDscal_v2(handle, (int)n, &alpha, x1, 1);
        s2 = real_cublasDscal_v2(handle, (int)n, &alpha, x2, 1);
        status_pair("cublasDscal_v2", s1, s2);
        double *a = download(x1, n * 8), *b = download(x2, n * 8);
        compare("cublasDscal_v2", a, b, n, 1, 1);
        free(x), free(a), free(b), cudaFree(x1), cudaFree(x2);

        cuDoubleComplex *z = rand_z(n);
        size_t bytes = n * sizeof *z;
        void *z1 = upload(z, bytes), *z2 = upload(z, bytes);
        s1 = cublasZdscal_v2(handle, (int)n, &alpha, z1, 1);
        s2 = real_cublasZdscal_v2(handle, (int)n, &alpha, z2, 1);
        status_pair("cublasZdscal_v2", s1, s2);
        a = download(z1, bytes), b = download(z2, bytes);
        compare("cublasZdscal_v2", a, b, 2 * n, 1, 1);
        free(z), free(a), free(b), cudaFree(z1), cudaFree(z2);
    }
    { /* scopy (exact), dswap (exact) */
        float *x = rand_s(n), *y = rand_s(n);
        float *dx = upload(x, n * 4), *y1 = upload(y, n * 4), *y2 = upload(y, n * 4);
        s1 = cublasScopy_v2(handle, (int)n, dx, 1, y1, 1);
        s2 = real_cublasScopy_v2(handle, (int)n, dx, 1, y2, 1);
        status_pair("cublasScopy_v2", s1, s2);
        float *a = download(y1, n * 4), *b = download(y2, n * 4);
        compare("cublasScopy_v2", a, b, n, 0, 0);
        free(x), free(y), free(a), free(b), cudaFree(dx), cudaFree(y1), cudaFree(y2);

        double *u = rand_d(n), *v = rand_d(n);
        double *u1 = upload(u, n * 8), *v1 = upload(v, n * 8), *u2 = upload(u, n * 8), *v2 = upload(v, n * 8);
        s1 = cublasDswap_v2(handle, (int)n, u1, 1, v1, 1);
        s2 = real_cublasDswap_v2(handle, (int)n, u2, 1, v2, 1);
        status_pair("cublasDswap_v2", s1, s2);
        double *a1 = download(u1, n * 8), *b1 = download(u2, n * 8), *a2 = download(v1, n * 8), *b2 = download(v2, n * 8);
        compare("cublasDswap_v2 (x)", a1, b1, n, 1, 0);
        compare("cublasDswap_v2 (y)", a2, b2, n, 1, 0);
        free(u), free(v), free(a1), free(b1), free(a2), free(b2);
        cudaFree(u1), cudaFree(v1), cudaFree(u2), cudaFree(v2);
    }
    { /* sdot (host result), ddot (device result), zdotc */
        float *x = rand_s(n), *y = rand_s(n), r1 = -1, r2 = -2;
        float *dx = upload(x, n * 4), *dy = upload(y, n * 4);
        s1 = cublasSdot_v2(handle, (int)n, dx, 1, dy, 1, &r1);
        s2 = real_cublasSdot_v2(handle, (int)n, dx, 1, dy, 1, &r2);
        status_pair("cublasSdot_v2", s1, s2);
        compare("cublasSdot_v2", &r1, &r2, 1, 0, n);
        free(x), free(y), cudaFree(dx), cudaFree(dy);

        double *u = rand_d(n), *v = rand_d(n), init = -7.0;
        double *du = upload(u, n * 8), *dv = upload(v, n * 8), *d1 = upload(&init, 8), *d2 = upload(&init, 8);
        set_mode(CUBLAS_POINTER_MODE_DEVICE);
        s1 = cublasDdot_v2(handle, (int)n, du, 1, dv, 1, d1);
        s2 = real_cublasDdot_v2(handle, (int)n, du, 1, dv, 1, d2);
        set_mode(CUBLAS_POINTER_MODE_HOST);
        status_pair("cublasDdot_v2 (device result)", s1, s2);
        double *a = download(d1, 8), *b = download(d2, 8);
        compare("cublasDdot_v2 (device result)", a, b, 1, 1, n);
        free(u), free(v), free(a), free(b), cudaFree(du), cudaFree(dv), cudaFree(d1), cudaFree(d2);

        cuDoubleComplex *zx = rand_z(n), *zy = rand_z(n), q1, q2;
        size_t bytes = n * sizeof *zx;
        void *dzx = upload(zx, bytes), *dzy = upload(zy, bytes);
        s1 = cublasZdotc_v2(handle, (int)n, dzx, 1, dzy, 1, &q1);
        s2 = real_cublasZdotc_v2(handle, (int)n, dzx, 1, dzy, 1, &q2);
        status_pair("cublasZdotc_v2", s1, s2);
        compare("cublasZdotc_v2", &q1, &q2, 2, 1, n);
        free(zx), free(zy), cudaFree(dzx), cudaFree(dzy);
    }
    { /* dnrm2, scasum, idamax */
        double *x = rand_d(n), r1 = -1, r2 = -2;
        double *dx = upload(x, n * 8);
        s1 = cublasDnrm2_v2(handle, (int)n, dx, 1, &r1);
        s2 = real_cublasDnrm2_v2(handle, (int)n, dx, 1, &r2);
        status_pair("cublasDnrm2_v2", s1, s2);
        compare("cublasDnrm2_v2", &r1, &r2, 1, 1, n);

        int i1 = -1, i2 = -2;
        s1 = cublasIdamax_v2(handle, (int)n, dx, 1, &i1);
        s2 = real_cublasIdamax_v2(handle, (int)n, dx, 1, &i2);
        status_pair("cublasIdamax_v2", s1, s2);
        double f1 = i1, f2 = i2;
        compare("cublasIdamax_v2", &f1, &f2, 1, 1, 0);
        free(x), cudaFree(dx);

        cuComplex *c = rand_c(n);
        float q1 = -1, q2 = -2;
        void *dc = upload(c, n * sizeof *c);
        s1 = cublasScasum_v2(handle, (int)n, dc, 1, &q1);
        s2 = real_cublasScasum_v2(handle, (int)n, dc, 1, &q2);
        status_pair("cublasScasum_v2", s1, s2);
        compare("cublasScasum_v2", &q1, &q2, 1, 0, 2 * n);
        free(c), cudaFree(dc);
    }
    { /* the 64-bit entry points */
        double *x = rand_d(n), *y = rand_d(n), alpha = 0.375;
        double *dx = upload(x, n * 8), *y1 = upload(y, n * 8), *y2 = upload(y, n * 8);
        s1 = cublasDaxpy_v2_64(handle, (int64_t)n, &alpha, dx, 1, y1, 1);
        s2 = real_cublasDaxpy_v2_64(handle, (int64_t)n, &alpha, dx, 1, y2, 1);
        status_pair("cublasDaxpy_v2_64", s1, s2);
        double *a = download(y1, n * 8), *b = download(y2, n * 8);
        compare("cublasDaxpy_v2_64", a, b, n, 1, 2);
        free(x), free(y), free(a), free(b), cudaFree(dx), cudaFree(y1), cudaFree(y2);

        float *s = rand_s(n);
        float *ds = upload(s, n * 4);
        int64_t j1 = -1, j2 = -2;
        s1 = cublasIsamax_v2_64(handle, (int64_t)n, ds, 1, &j1);
        s2 = real_cublasIsamax_v2_64(handle, (int64_t)n, ds, 1, &j2);
        status_pair("cublasIsamax_v2_64", s1, s2);
        double f1 = (double)j1, f2 = (double)j2;
        compare("cublasIsamax_v2_64", &f1, &f2, 1, 1, 0);
        free(s), cudaFree(ds);
    }
}

/* ---- Level 2 ---- */

#define N2 2048 /* above hyblas's default GEMV/GER threshold (1024) */

static void level2(void) {
    const int m = N2 + 3, n = N2, lda = N2 + 8;
    const size_t asz = (size_t)lda * n;
    cublasStatus_t s1, s2;

    { /* sgemv N and T, sgemv_64 T */
        float *a = rand_s(asz), *x = rand_s(m), *y = rand_s(m), alpha = 1.25f, beta = -0.5f;
        float *da = upload(a, asz * 4), *dx = upload(x, m * 4);
        for (int t = 0; t < 2; t++) {
            cublasOperation_t op = t ? CUBLAS_OP_T : CUBLAS_OP_N;
            int ylen = t ? n : m;
            float *y1 = upload(y, ylen * 4), *y2 = upload(y, ylen * 4);
            s1 = cublasSgemv_v2(handle, op, m, n, &alpha, da, lda, dx, 1, &beta, y1, 1);
            s2 = real_cublasSgemv_v2(handle, op, m, n, &alpha, da, lda, dx, 1, &beta, y2, 1);
            const char *what = t ? "cublasSgemv_v2 T" : "cublasSgemv_v2 N";
            status_pair(what, s1, s2);
            float *r1 = download(y1, ylen * 4), *r2 = download(y2, ylen * 4);
            compare(what, r1, r2, ylen, 0, t ? m : n);
            free(r1), free(r2), cudaFree(y1), cudaFree(y2);
        }
        float *y1 = upload(y, n * 4), *y2 = upload(y, n * 4);
        s1 = cublasSgemv_v2_64(handle, CUBLAS_OP_T, m, n, &alpha, da, lda, dx, 1, &beta, y1, 1);
        s2 = real_cublasSgemv_v2_64(handle, CUBLAS_OP_T, m, n, &alpha, da, lda, dx, 1, &beta, y2, 1);
        status_pair("cublasSgemv_v2_64 T", s1, s2);
        float *r1 = download(y1, n * 4), *r2 = download(y2, n * 4);
        compare("cublasSgemv_v2_64 T", r1, r2, n, 0, m);
        free(r1), free(r2), cudaFree(y1), cudaFree(y2);

        /* A bad argument: the same status from both. (cuBLAS 13.1 writes y for an
           out-of-range trans, differently from one call to the next, so y is not compared.) */
        y1 = upload(y, n * 4), y2 = upload(y, n * 4);
        s1 = cublasSgemv_v2(handle, (cublasOperation_t)7, m, n, &alpha, da, lda, dx, 1, &beta, y1, 1);
        s2 = real_cublasSgemv_v2(handle, (cublasOperation_t)7, m, n, &alpha, da, lda, dx, 1, &beta, y2, 1);
        status_pair("cublasSgemv_v2 trans=7", s1, s2);
        cudaFree(y1), cudaFree(y2);
        free(a), free(x), free(y), cudaFree(da), cudaFree(dx);
    }
    { /* dgemv T, device pointer mode */
        double *a = rand_d(asz), *x = rand_d(m), *y = rand_d(n), ab[2] = {0.5, 2.0};
        double *da = upload(a, asz * 8), *dx = upload(x, m * 8), *dab = upload(ab, 16);
        double *y1 = upload(y, n * 8), *y2 = upload(y, n * 8);
        set_mode(CUBLAS_POINTER_MODE_DEVICE);
        s1 = cublasDgemv_v2(handle, CUBLAS_OP_T, m, n, dab, da, lda, dx, 1, dab + 1, y1, 1);
        s2 = real_cublasDgemv_v2(handle, CUBLAS_OP_T, m, n, dab, da, lda, dx, 1, dab + 1, y2, 1);
        set_mode(CUBLAS_POINTER_MODE_HOST);
        status_pair("cublasDgemv_v2 T (device scalars)", s1, s2);
        double *r1 = download(y1, n * 8), *r2 = download(y2, n * 8);
        compare("cublasDgemv_v2 T (device scalars)", r1, r2, n, 1, m);
        free(r1), free(r2), free(a), free(x), free(y);
        cudaFree(da), cudaFree(dx), cudaFree(dab), cudaFree(y1), cudaFree(y2);
    }
    { /* cgemv C, zgemv N with strides */
        cuComplex *a = rand_c(asz), *x = rand_c(m), *y = rand_c(n);
        cuComplex alpha = make_cuComplex(0.5f, 1.0f), beta = make_cuComplex(0.0f, 0.0f);
        void *da = upload(a, asz * 8), *dx = upload(x, m * 8), *y1 = upload(y, n * 8), *y2 = upload(y, n * 8);
        s1 = cublasCgemv_v2(handle, CUBLAS_OP_C, m, n, &alpha, da, lda, dx, 1, &beta, y1, 1);
        s2 = real_cublasCgemv_v2(handle, CUBLAS_OP_C, m, n, &alpha, da, lda, dx, 1, &beta, y2, 1);
        status_pair("cublasCgemv_v2 C", s1, s2);
        float *r1 = download(y1, n * 8), *r2 = download(y2, n * 8);
        compare("cublasCgemv_v2 C", r1, r2, 2 * (size_t)n, 0, m);
        free(r1), free(r2), free(a), free(x), free(y), cudaFree(da), cudaFree(dx), cudaFree(y1), cudaFree(y2);

        cuDoubleComplex *za = rand_z(asz), *zx = rand_z(2 * (size_t)n), *zy = rand_z(m);
        cuDoubleComplex zal = make_cuDoubleComplex(-0.75, 0.25), zbe = make_cuDoubleComplex(0.5, 0.5);
        void *dza = upload(za, asz * 16), *dzx = upload(zx, 2 * (size_t)n * 16);
        void *z1 = upload(zy, (size_t)m * 16), *z2 = upload(zy, (size_t)m * 16);
        s1 = cublasZgemv_v2(handle, CUBLAS_OP_N, m, n, &zal, dza, lda, dzx, 2, &zbe, z1, -1);
        s2 = real_cublasZgemv_v2(handle, CUBLAS_OP_N, m, n, &zal, dza, lda, dzx, 2, &zbe, z2, -1);
        status_pair("cublasZgemv_v2 N incx=2 incy=-1", s1, s2);
        double *q1 = download(z1, (size_t)m * 16), *q2 = download(z2, (size_t)m * 16);
        compare("cublasZgemv_v2 N incx=2 incy=-1", q1, q2, 2 * (size_t)m, 1, n);
        free(q1), free(q2), free(za), free(zx), free(zy), cudaFree(dza), cudaFree(dzx), cudaFree(z1), cudaFree(z2);
    }
    { /* dger, zgerc */
        double *a = rand_d(asz), *x = rand_d(m), *y = rand_d(n), alpha = 0.25;
        double *dx = upload(x, m * 8), *dy = upload(y, n * 8), *a1 = upload(a, asz * 8), *a2 = upload(a, asz * 8);
        s1 = cublasDger_v2(handle, m, n, &alpha, dx, 1, dy, 1, a1, lda);
        s2 = real_cublasDger_v2(handle, m, n, &alpha, dx, 1, dy, 1, a2, lda);
        status_pair("cublasDger_v2", s1, s2);
        double *r1 = download(a1, asz * 8), *r2 = download(a2, asz * 8);
        compare("cublasDger_v2", r1, r2, asz, 1, 2);
        free(r1), free(r2), free(a), free(x), free(y), cudaFree(dx), cudaFree(dy), cudaFree(a1), cudaFree(a2);

        cuDoubleComplex *za = rand_z(asz), *zx = rand_z(m), *zy = rand_z(n), zal = make_cuDoubleComplex(0.5, -1.0);
        void *dzx = upload(zx, (size_t)m * 16), *dzy = upload(zy, (size_t)n * 16);
        void *z1 = upload(za, asz * 16), *z2 = upload(za, asz * 16);
        s1 = cublasZgerc_v2(handle, m, n, &zal, dzx, 1, dzy, 1, z1, lda);
        s2 = real_cublasZgerc_v2(handle, m, n, &zal, dzx, 1, dzy, 1, z2, lda);
        status_pair("cublasZgerc_v2", s1, s2);
        double *q1 = download(z1, asz * 16), *q2 = download(z2, asz * 16);
        compare("cublasZgerc_v2", q1, q2, 2 * asz, 1, 2);
        free(q1), free(q2), free(za), free(zx), free(zy), cudaFree(dzx), cudaFree(dzy), cudaFree(z1), cudaFree(z2);
    }
    { /* strmv L N N, dtrmv U T U, ztrmv L C N (hyblas's default route at every size) */
        const int tn = N2;
        float *a = rand_s(asz), *x = rand_s(tn);
        float *da = upload(a, asz * 4), *x1 = upload(x, tn * 4), *x2 = upload(x, tn * 4);
        s1 = cublasStrmv_v2(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, tn, da, lda, x1, 1);
        s2 = real_cublasStrmv_v2(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, tn, da, lda, x2, 1);
        status_pair("cublasStrmv_v2 L N N", s1, s2);
        float *r1 = download(x1, tn * 4), *r2 = download(x2, tn * 4);
        compare("cublasStrmv_v2 L N N", r1, r2, tn, 0, tn);
        free(r1), free(r2), free(a), free(x), cudaFree(da), cudaFree(x1), cudaFree(x2);

        double *b = rand_d(asz), *u = rand_d(tn);
        double *db = upload(b, asz * 8), *u1 = upload(u, tn * 8), *u2 = upload(u, tn * 8);
        s1 = cublasDtrmv_v2(handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, tn, db, lda, u1, 1);
        s2 = real_cublasDtrmv_v2(handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, tn, db, lda, u2, 1);
        status_pair("cublasDtrmv_v2 U T U", s1, s2);
        double *q1 = download(u1, tn * 8), *q2 = download(u2, tn * 8);
        compare("cublasDtrmv_v2 U T U", q1, q2, tn, 1, tn);
        free(q1), free(q2), free(b), free(u), cudaFree(db), cudaFree(u1), cudaFree(u2);

        cuDoubleComplex *za = rand_z(asz), *zx = rand_z(tn);
        void *dza = upload(za, asz * 16), *z1 = upload(zx, (size_t)tn * 16), *z2 = upload(zx, (size_t)tn * 16);
        s1 = cublasZtrmv_v2(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_C, CUBLAS_DIAG_NON_UNIT, tn, dza, lda, z1, 1);
        s2 = real_cublasZtrmv_v2(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_C, CUBLAS_DIAG_NON_UNIT, tn, dza, lda, z2, 1);
        status_pair("cublasZtrmv_v2 L C N", s1, s2);
        double *w1 = download(z1, (size_t)tn * 16), *w2 = download(z2, (size_t)tn * 16);
        compare("cublasZtrmv_v2 L C N", w1, w2, 2 * (size_t)tn, 1, tn);
        free(w1), free(w2), free(za), free(zx), cudaFree(dza), cudaFree(z1), cudaFree(z2);
    }
}

/* ---- Level 3: GEMM ---- */

/* Small outputs with long k (split-k's shapes; forced or predicted), then one big square product
   (cuBLAS's shape: the routing model forwards it), GemmEx for covered and forwarded type
   combinations, and a strided batched GEMM (always forwarded). The small-output call of each
   name comes first, so the trace check sees its route. */
static void level3(void) {
    cublasStatus_t s1, s2;

    { /* sgemm T,N 16x16, k = 2^17 + 3 (the Gram-matrix layout) */
        const int m = 16, n = 16, k = (1 << 17) + 3;
        float *a = rand_s((size_t)k * m), *b = rand_s((size_t)k * n), *c = rand_s((size_t)m * n);
        float alpha = 1.25f, beta = -0.5f;
        float *da = upload(a, (size_t)k * m * 4), *db = upload(b, (size_t)k * n * 4);
        float *c1 = upload(c, (size_t)m * n * 4), *c2 = upload(c, (size_t)m * n * 4);
        s1 = cublasSgemm_v2(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, k, db, k, &beta, c1, m);
        s2 = real_cublasSgemm_v2(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, k, db, k, &beta, c2, m);
        status_pair("cublasSgemm_v2 T,N 16x16 k=2^17+3", s1, s2);
        float *r1 = download(c1, (size_t)m * n * 4), *r2 = download(c2, (size_t)m * n * 4);
        compare("cublasSgemm_v2 T,N 16x16 k=2^17+3", r1, r2, (size_t)m * n, 0, k);
        free(r1), free(r2), free(a), free(b), free(c);
        cudaFree(da), cudaFree(db), cudaFree(c1), cudaFree(c2);
    }
    { /* dgemm N,N 16x16, k = 2^20 (the headline shape); then T,N with device scalars */
        const int m = 16, n = 16, k = 1 << 20;
        double *a = rand_d((size_t)m * k), *b = rand_d((size_t)k * n), *c = rand_d((size_t)m * n);
        double ab[2] = {0.75, 0.0};
        double *da = upload(a, (size_t)m * k * 8), *db = upload(b, (size_t)k * n * 8), *dab = upload(ab, 16);
        double *c1 = upload(c, (size_t)m * n * 8), *c2 = upload(c, (size_t)m * n * 8);
        s1 = cublasDgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &ab[0], da, m, db, k, &ab[1], c1, m);
        s2 = real_cublasDgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &ab[0], da, m, db, k, &ab[1], c2, m);
        status_pair("cublasDgemm_v2 N,N 16x16 k=2^20", s1, s2);
        double *r1 = download(c1, (size_t)m * n * 8), *r2 = download(c2, (size_t)m * n * 8);
        compare("cublasDgemm_v2 N,N 16x16 k=2^20", r1, r2, (size_t)m * n, 1, k);
        free(r1), free(r2);

        /* T,N 8x32 with k = 100003 (A stored k x 8, B k x 32), alpha and beta in device memory */
        const int m2 = 8, n2 = 32, k2 = 100003;
        set_mode(CUBLAS_POINTER_MODE_DEVICE);
        s1 = cublasDgemm_v2(handle, CUBLAS_OP_T, CUBLAS_OP_N, m2, n2, k2, dab, da, k2, db, k2, dab + 1, c1, m2);
        s2 = real_cublasDgemm_v2(handle, CUBLAS_OP_T, CUBLAS_OP_N, m2, n2, k2, dab, da, k2, db, k2, dab + 1, c2, m2);
        set_mode(CUBLAS_POINTER_MODE_HOST);
        status_pair("cublasDgemm_v2 T,N 8x32 (device scalars)", s1, s2);
        r1 = download(c1, (size_t)m2 * n2 * 8), r2 = download(c2, (size_t)m2 * n2 * 8);
        compare("cublasDgemm_v2 T,N 8x32 (device scalars)", r1, r2, (size_t)m2 * n2, 1, k2);
        free(r1), free(r2);

        /* the 64-bit entry point, N,T 12x4 */
        const int64_t m3 = 12, n3 = 4, k3 = 77777;
        double one = 1.0, half = 0.5;
        s1 = cublasDgemm_v2_64(handle, CUBLAS_OP_N, CUBLAS_OP_T, m3, n3, k3, &one, da, m3, db, n3, &half, c1, m3);
        s2 = real_cublasDgemm_v2_64(handle, CUBLAS_OP_N, CUBLAS_OP_T, m3, n3, k3, &one, da, m3, db, n3, &half, c2, m3);
        status_pair("cublasDgemm_v2_64 N,T 12x4", s1, s2);
        r1 = download(c1, (size_t)(m3 * n3) * 8), r2 = download(c2, (size_t)(m3 * n3) * 8);
        compare("cublasDgemm_v2_64 N,T 12x4", r1, r2, (size_t)(m3 * n3), 1, (size_t)k3);
        free(r1), free(r2), free(a), free(b), free(c);
        cudaFree(da), cudaFree(db), cudaFree(dab), cudaFree(c1), cudaFree(c2);
    }
    { /* cgemm C,N 8x8 k = 50001, zgemm N,C 4x12 k = 30001 (conjugation on either side) */
        const int m = 8, n = 8, k = 50001;
        cuComplex *a = rand_c((size_t)k * m), *b = rand_c((size_t)k * n), *c = rand_c((size_t)m * n);
        cuComplex alpha = make_cuComplex(0.5f, -1.0f), beta = make_cuComplex(0.25f, 0.5f);
        void *da = upload(a, (size_t)k * m * 8), *db = upload(b, (size_t)k * n * 8);
        void *c1 = upload(c, (size_t)m * n * 8), *c2 = upload(c, (size_t)m * n * 8);
        s1 = cublasCgemm_v2(handle, CUBLAS_OP_C, CUBLAS_OP_N, m, n, k, &alpha, da, k, db, k, &beta, c1, m);
        s2 = real_cublasCgemm_v2(handle, CUBLAS_OP_C, CUBLAS_OP_N, m, n, k, &alpha, da, k, db, k, &beta, c2, m);
        status_pair("cublasCgemm_v2 C,N 8x8", s1, s2);
        float *r1 = download(c1, (size_t)m * n * 8), *r2 = download(c2, (size_t)m * n * 8);
        compare("cublasCgemm_v2 C,N 8x8", r1, r2, 2 * (size_t)m * n, 0, k);
        free(r1), free(r2), free(a), free(b), free(c), cudaFree(da), cudaFree(db), cudaFree(c1), cudaFree(c2);

        const int zm = 4, zn = 12, zk = 30001;
        cuDoubleComplex *za = rand_z((size_t)zm * zk), *zb = rand_z((size_t)zn * zk), *zc = rand_z((size_t)zm * zn);
        cuDoubleComplex zal = make_cuDoubleComplex(-0.75, 0.25), zbe = make_cuDoubleComplex(0.0, 0.0);
        void *dza = upload(za, (size_t)zm * zk * 16), *dzb = upload(zb, (size_t)zn * zk * 16);
        void *z1 = upload(zc, (size_t)zm * zn * 16), *z2 = upload(zc, (size_t)zm * zn * 16);
        s1 = cublasZgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_C, zm, zn, zk, &zal, dza, zm, dzb, zn, &zbe, z1, zm);
        s2 = real_cublasZgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_C, zm, zn, zk, &zal, dza, zm, dzb, zn, &zbe, z2, zm);
        status_pair("cublasZgemm_v2 N,C 4x12 beta=0", s1, s2);
        double *q1 = download(z1, (size_t)zm * zn * 16), *q2 = download(z2, (size_t)zm * zn * 16);
        compare("cublasZgemm_v2 N,C 4x12 beta=0", q1, q2, 2 * (size_t)zm * zn, 1, zk);
        free(q1), free(q2), free(za), free(zb), free(zc), cudaFree(dza), cudaFree(dzb), cudaFree(z1), cudaFree(z2);
    }
    { /* cublasGemmEx: R_32F/COMPUTE_32F and R_64F/COMPUTE_64F (hyblas's), the _64 form, then
         TF32 compute (forwarded: exactly cuBLAS's bits) */
        const int m = 16, n = 16, k = 1 << 16;
        float *a = rand_s((size_t)k * m), *b = rand_s((size_t)k * n), *c = rand_s((size_t)m * n);
        float alpha = 1.0f, beta = 0.0f;
        void *da = upload(a, (size_t)k * m * 4), *db = upload(b, (size_t)k * n * 4);
        void *c1 = upload(c, (size_t)m * n * 4), *c2 = upload(c, (size_t)m * n * 4);
        s1 = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, k, db, CUDA_R_32F, k,
                          &beta, c1, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        s2 = real_cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, k, db, CUDA_R_32F, k,
                               &beta, c2, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        status_pair("cublasGemmEx R_32F COMPUTE_32F", s1, s2);
        float *r1 = download(c1, (size_t)m * n * 4), *r2 = download(c2, (size_t)m * n * 4);
        compare("cublasGemmEx R_32F COMPUTE_32F", r1, r2, (size_t)m * n, 0, k);
        free(r1), free(r2);

        s1 = cublasGemmEx_64(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, k, db, CUDA_R_32F, k,
                             &beta, c1, CUDA_R_32F, m, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
        s2 = real_cublasGemmEx_64(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, k, db, CUDA_R_32F,
                                  k, &beta, c2, CUDA_R_32F, m, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
        status_pair("cublasGemmEx_64 R_32F COMPUTE_32F_PEDANTIC", s1, s2);
        r1 = download(c1, (size_t)m * n * 4), r2 = download(c2, (size_t)m * n * 4);
        compare("cublasGemmEx_64 R_32F COMPUTE_32F_PEDANTIC", r1, r2, (size_t)m * n, 0, k);
        free(r1), free(r2);

        s1 = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, k, db, CUDA_R_32F, k,
                          &beta, c1, CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
        s2 = real_cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, k, db, CUDA_R_32F, k,
                               &beta, c2, CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
        status_pair("cublasGemmEx TF32 (forwarded)", s1, s2);
        r1 = download(c1, (size_t)m * n * 4), r2 = download(c2, (size_t)m * n * 4);
        compare("cublasGemmEx TF32 (forwarded, exact)", r1, r2, (size_t)m * n, 0, 0);
        free(r1), free(r2), free(a), free(b), free(c), cudaFree(da), cudaFree(db), cudaFree(c1), cudaFree(c2);

        double *e = rand_d((size_t)m * k), *f = rand_d((size_t)k * n), *g = rand_d((size_t)m * n), one = 1.0, half = 0.5;
        void *de = upload(e, (size_t)m * k * 8), *df = upload(f, (size_t)k * n * 8);
        void *g1 = upload(g, (size_t)m * n * 8), *g2 = upload(g, (size_t)m * n * 8);
        s1 = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, de, CUDA_R_64F, m, df, CUDA_R_64F, k, &half,
                          g1, CUDA_R_64F, m, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
        s2 = real_cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, de, CUDA_R_64F, m, df, CUDA_R_64F, k,
                               &half, g2, CUDA_R_64F, m, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
        status_pair("cublasGemmEx R_64F COMPUTE_64F", s1, s2);
        double *q1 = download(g1, (size_t)m * n * 8), *q2 = download(g2, (size_t)m * n * 8);
        compare("cublasGemmEx R_64F COMPUTE_64F", q1, q2, (size_t)m * n, 1, k);
        free(q1), free(q2), free(e), free(f), free(g), cudaFree(de), cudaFree(df), cudaFree(g1), cudaFree(g2);
    }
    { /* a big square product: the model forwards it to cuBLAS (any route must be right) */
        const int n = 2048;
        const size_t sz = (size_t)n * n;
        double *a = rand_d(sz), *b = rand_d(sz), *c = rand_d(sz), alpha = 1.0, beta = 0.5;
        double *da = upload(a, sz * 8), *db = upload(b, sz * 8), *c1 = upload(c, sz * 8), *c2 = upload(c, sz * 8);
        s1 = cublasDgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, da, n, db, n, &beta, c1, n);
        s2 = real_cublasDgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, da, n, db, n, &beta, c2, n);
        status_pair("cublasDgemm_v2 N,T 2048^3", s1, s2);
        double *r1 = download(c1, sz * 8), *r2 = download(c2, sz * 8);
        compare("cublasDgemm_v2 N,T 2048^3", r1, r2, sz, 1, n);
        free(r1), free(r2), free(a), free(b), free(c), cudaFree(da), cudaFree(db), cudaFree(c1), cudaFree(c2);
    }
    { /* sgemm strided batched (k = 1000: cuBLAS's by default, hyblas's small-product kernel under
         HYBLAS_CUBLAS=hyblas; within rounding of the real one), and a bad argument (same status) */
        const int m = 8, n = 6, k = 1000, batch = 3;
        const long long sa = (long long)m * k + 5, sb = (long long)k * n + 7, sc = (long long)m * n + 1;
        float *a = rand_s((size_t)(sa * batch)), *b = rand_s((size_t)(sb * batch)), *c = rand_s((size_t)(sc * batch));
        float alpha = 0.5f, beta = 1.5f;
        void *da = upload(a, (size_t)(sa * batch) * 4), *db = upload(b, (size_t)(sb * batch) * 4);
        void *c1 = upload(c, (size_t)(sc * batch) * 4), *c2 = upload(c, (size_t)(sc * batch) * 4);
        s1 = cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, sa, db, k, sb, &beta,
                                       c1, m, sc, batch);
        s2 = real_cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, sa, db, k, sb,
                                            &beta, c2, m, sc, batch);
        status_pair("cublasSgemmStridedBatched", s1, s2);
        float *r1 = download(c1, (size_t)(sc * batch) * 4), *r2 = download(c2, (size_t)(sc * batch) * 4);
        compare("cublasSgemmStridedBatched", r1, r2, (size_t)(sc * batch), 0, k);
        free(r1), free(r2);

        /* lda < m: cuBLAS's own status from both */
        s1 = cublasSgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m - 1, db, k, &beta, c1, m);
        s2 = real_cublasSgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m - 1, db, k, &beta, c2, m);
        status_pair("cublasSgemm_v2 lda < m", s1, s2);
        free(a), free(b), free(c), cudaFree(da), cudaFree(db), cudaFree(c1), cudaFree(c2);
    }
}

/* ---- interception ---- */

static void check_interception(void) {
    for (size_t i = 0; i < NNAMES; i++) {
        void *p = dlsym(RTLD_DEFAULT, NAMES[i]);
        Dl_info info;
        const char *file = (p && dladdr(p, &info) && info.dli_fname) ? info.dli_fname : "(not found)";
        int in_hyblas = strstr(file, "hyblas") != NULL;
        int ok = expect_hyblas ? in_hyblas && p != real_sym(NAMES[i]) : !in_hyblas && p == real_sym(NAMES[i]);
        printf("%s interception %-22s -> %s\n", ok ? "PASS" : "FAIL", NAMES[i], file);
        if (!ok) failures++;
    }
}

/* HYBLAS_TRACE=<file>: the trace file, emptied at the start; NULL when tracing elsewhere. */
static const char *trace_file(void) {
    const char *t = getenv("HYBLAS_TRACE");
    if (!t || !*t || !strcmp(t, "stderr") || !strcmp(t, "1") || !strcmp(t, "0") || !strcmp(t, "off")) return NULL;
    return t;
}

static void check_trace(int require_hyblas) {
    const char *path = trace_file();
    if (!path || !expect_hyblas) return;
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("FAIL trace: %s was not written\n", path);
        failures++;
        return;
    }
    static char line[4096];
    int seen[NNAMES] = {0};
    char route[NNAMES][40];
    while (fgets(line, sizeof line, f)) {
        for (size_t i = 0; i < NNAMES; i++) {
            char key[64];
            snprintf(key, sizeof key, "hyblas: %s ", NAMES[i]);
            if (strstr(line, key) && !seen[i]) {
                const char *r = strstr(line, "route=");
                seen[i] = 1;
                snprintf(route[i], sizeof route[i], "%s", r ? r : "route=?");
                route[i][strcspn(route[i], " \n")] = 0;
            }
        }
    }
    fclose(f);
    for (size_t i = 0; i < NNAMES; i++) {
        int ok = seen[i] && (!require_hyblas || !strcmp(route[i], "route=hyblas"));
        printf("%s trace %-22s %s\n", ok ? "PASS" : "FAIL", NAMES[i], seen[i] ? route[i] : "(no line)");
        if (!ok) failures++;
    }
}

int main(int argc, char **argv) {
    int require_hyblas = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect") && i + 1 < argc) {
            expect_hyblas = strcmp(argv[++i], "cublas") != 0;
        } else if (!strcmp(argv[i], "--require-hyblas")) {
            require_hyblas = 1;
        } else {
            fprintf(stderr, "usage: %s [--expect hyblas|cublas] [--require-hyblas]\n", argv[0]);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with hyblas's trace on stderr */
    const char *trace = trace_file();
    if (trace) {
        FILE *f = fopen(trace, "w"); /* hyblas appends; start empty */
        if (f) fclose(f);
    }
    cublas_lib = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!cublas_lib) {
        fprintf(stderr, "dlopen(%s): %s\n", CUBLAS_SONAME, dlerror());
        return 2;
    }
    load_reals();
    check_interception();

    cublasStatus_t st = cublasCreate_v2(&handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate_v2 failed: status %d (no GPU or driver?)\n", (int)st);
        return 2;
    }
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (cublasSetStream_v2(handle, stream) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasSetStream_v2 failed\n");
        return 2;
    }
    level1();
    level2();
    level3();
    CK(cudaStreamSynchronize(stream));
    cublasDestroy_v2(handle);
    CK(cudaStreamDestroy(stream));
    check_trace(require_hyblas);

    printf("%s: %d failure(s)\n", failures ? "FAILED" : "ALL PASSED", failures);
    return failures ? 1 : 0;
}
