/* The Fortran BLAS ABI called from C, as gfortran-compiled callers (LAPACK, scipy, Julia...)
 * see it: every argument by reference, CHARACTER arguments followed by hidden lengths (which
 * C callers often omit), COMPLEX functions returning by value (`double _Complex`), REAL
 * functions returning float. Plus the ILP64 twins (dgemm_64_, zdotc_64_ with int64_t) and
 * cblas_dgemm64_ from cblas64.h. Results are checked against naive loops. */
#include <cblas64.h>

#include "common.h"

/* gfortran prototypes, with the hidden CHARACTER lengths as size_t at the end. */
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc, size_t la, size_t lb);
void dgemm_64_(const char *transa, const char *transb, const int64_t *m, const int64_t *n, const int64_t *k,
               const double *alpha, const double *a, const int64_t *lda, const double *b, const int64_t *ldb,
               const double *beta, double *c, const int64_t *ldc, size_t la, size_t lb);
double complex zdotc_(const int *n, const double complex *x, const int *incx, const double complex *y, const int *incy);
double complex zdotc_64_(const int64_t *n, const double complex *x, const int64_t *incx, const double complex *y,
                         const int64_t *incy);
double complex zdotu_(const int *n, const double complex *x, const int *incx, const double complex *y, const int *incy);
float complex cdotc_(const int *n, const float complex *x, const int *incx, const float complex *y, const int *incy);
float sdot_(const int *n, const float *x, const int *incx, const float *y, const int *incy);
float snrm2_(const int *n, const float *x, const int *incx);
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);
double dnrm2_(const int *n, const double *x, const int *incx);
int idamax_(const int *n, const double *x, const int *incx);
int64_t idamax_64_(const int64_t *n, const double *x, const int64_t *incx);

/* The same dgemm_ called the way many C programs declare it: no hidden lengths. */
typedef void (*dgemm_nolen_t)(const char *, const char *, const int *, const int *, const int *, const double *,
                              const double *, const int *, const double *, const int *, const double *, double *,
                              const int *);

static size_t vi(int i, int n, int inc) { return inc > 0 ? (size_t)i * (size_t)inc : (size_t)(n - 1 - i) * (size_t)(-inc); }

/* Column-major reference: C := alpha op(A) op(B) + beta C. */
static void ref_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double *a, int lda, const double *b,
                      int ldb, double beta, double *c, int ldc, double *scale) {
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0.0, sc = 0.0;
            for (int l = 0; l < k; l++) {
                double x = ta == 'N' ? a[i + (size_t)l * lda] : a[l + (size_t)i * lda];
                double y = tb == 'N' ? b[l + (size_t)j * ldb] : b[j + (size_t)l * ldb];
                s += x * y;
                sc += fabs(x * y);
            }
            double old = beta == 0.0 ? 0.0 : beta * c[i + (size_t)j * ldc];
            c[i + (size_t)j * ldc] = alpha * s + old;
            scale[i + (size_t)j * ldc] = fabs(alpha) * sc + fabs(old);
        }
}

enum { WIDTH_32, WIDTH_32_NOLEN, WIDTH_64, WIDTH_CBLAS64 };

static void test_dgemm(int width, char ta, char tb, int m, int n, int k, double alpha, double beta) {
    /* What the library must make of the characters: only the first byte, any case. */
    const char na = (ta == 'N' || ta == 'n') ? 'N' : 'T', nb = (tb == 'N' || tb == 'n') ? 'N' : 'T';
    int lda = (na == 'N' ? m : k) + 1, ldb = (nb == 'N' ? k : n) + 2, ldc = m + 1;
    size_t asz = (size_t)lda * (size_t)(na == 'N' ? k : m), bsz = (size_t)ldb * (size_t)(nb == 'N' ? n : k);
    size_t csz = (size_t)ldc * (size_t)n;
    double *a = xmalloc(asz * sizeof *a), *b = xmalloc(bsz * sizeof *b), *c = xmalloc(csz * sizeof *c);
    double *want = xmalloc(csz * sizeof *want), *scale = xmalloc(csz * sizeof *scale);
    fill_d(a, asz);
    fill_d(b, bsz);
    fill_d(c, csz);
    if (beta == 0.0) poison_d(c, csz);
    memcpy(want, c, csz * sizeof *c);
    ref_dgemm(na, nb, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc, scale);

    const char *how = "";
    if (width == WIDTH_32) {
        how = "dgemm_";
        dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
    } else if (width == WIDTH_32_NOLEN) {
        how = "dgemm_ (no hidden lengths)";
        /* Through void(*)(void) so -Wcast-function-type accepts the deliberate mismatch. */
        dgemm_nolen_t f = (dgemm_nolen_t)(void (*)(void))dgemm_;
        f(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    } else if (width == WIDTH_64) {
        how = "dgemm_64_";
        int64_t m8 = m, n8 = n, k8 = k, lda8 = lda, ldb8 = ldb, ldc8 = ldc;
        dgemm_64_(&ta, &tb, &m8, &n8, &k8, &alpha, a, &lda8, b, &ldb8, &beta, c, &ldc8, 1, 1);
    } else {
        how = "cblas_dgemm64_ (col-major)";
        cblas_dgemm64_(CblasColMajor, na == 'N' ? CblasNoTrans : CblasTrans, nb == 'N' ? CblasNoTrans : CblasTrans,
                       (int64_t)m, (int64_t)n, (int64_t)k, alpha, a, (int64_t)lda, b, (int64_t)ldb, beta, c,
                       (int64_t)ldc);
    }

    int ok = 1;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < m; i++) {
            size_t p = (size_t)i + (size_t)j * (size_t)ldc;
            if (!close_d(c[p], want[p], scale[p], k)) ok = 0;
        }
        /* the padding row of C stays as it was (want still holds the old value there) */
        size_t pad = (size_t)m + (size_t)j * (size_t)ldc;
        if (memcmp(&c[pad], &want[pad], sizeof c[pad]) != 0) ok = 0;
    }
    CHECK(ok, "%s %c%c m=%d n=%d k=%d alpha=%g beta=%g", how, ta, tb, m, n, k, alpha, beta);
    free(a);
    free(b);
    free(c);
    free(want);
    free(scale);
}

/* Row-major ILP64 CBLAS: C is m x n with ldc >= n. */
static void test_cblas_dgemm64_rowmajor(void) {
    enum { M = 11, N = 7, K = 5 };
    double a[M * K], b[K * N], c[M * N], want[M * N];
    fill_d(a, sizeof a / sizeof a[0]);
    fill_d(b, sizeof b / sizeof b[0]);
    fill_d(c, sizeof c / sizeof c[0]);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int l = 0; l < K; l++) s += a[i * K + l] * b[l * N + j];
            want[i * N + j] = 2.0 * s - c[i * N + j];
        }
    cblas_dgemm64_(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 2.0, a, K, b, N, -1.0, c, N);
    int ok = 1;
    for (int p = 0; p < M * N; p++) ok &= close_d(c[p], want[p], 2.0 * K + 1.0, K);
    CHECK(ok, "cblas_dgemm64_ row-major");
}

static void test_functions(void) {
    enum { N = 29 };
    int n = N, one = 1, two = 2, mone = -1;
    int64_t n8 = N, one8 = 1, mone8 = -1;

    double complex zx[2 * N], zy[2 * N];
    fill_z(zx, 2 * N);
    fill_z(zy, 2 * N);
    double complex wc = 0.0, wu = 0.0;
    double zs = 0.0;
    for (int i = 0; i < N; i++) {
        wc += conj(zx[vi(i, N, 2)]) * zy[vi(i, N, -1)];
        wu += zx[vi(i, N, 2)] * zy[vi(i, N, -1)];
        zs += cabs(zx[vi(i, N, 2)]) * cabs(zy[vi(i, N, -1)]);
    }
    double complex gz = zdotc_(&n, zx, &two, zy, &mone);
    CHECK(close_z(gz, wc, zs, 4 * N), "zdotc_ by value: (%.17g,%.17g), want (%.17g,%.17g)", creal(gz), cimag(gz),
          creal(wc), cimag(wc));
    gz = zdotu_(&n, zx, &two, zy, &mone);
    CHECK(close_z(gz, wu, zs, 4 * N), "zdotu_ by value: (%.17g,%.17g), want (%.17g,%.17g)", creal(gz), cimag(gz),
          creal(wu), cimag(wu));
    int64_t two8 = 2;
    gz = zdotc_64_(&n8, zx, &two8, zy, &mone8);
    CHECK(close_z(gz, wc, zs, 4 * N), "zdotc_64_ by value: (%.17g,%.17g)", creal(gz), cimag(gz));

    float complex cx[N], cy[N];
    fill_c(cx, N);
    fill_c(cy, N);
    double complex cw = 0.0;
    double cs = 0.0;
    for (int i = 0; i < N; i++) {
        cw += conj((double complex)cx[i]) * (double complex)cy[i];
        cs += cabs((double complex)cx[i]) * cabs((double complex)cy[i]);
    }
    float complex gc = cdotc_(&n, cx, &one, cy, &one);
    CHECK(close_c(gc, (float complex)cw, cs, 4 * N), "cdotc_ by value: (%.9g,%.9g), want (%.9g,%.9g)", crealf(gc),
          cimagf(gc), creal(cw), cimag(cw));

    float sx[N], sy[N];
    fill_s(sx, N);
    fill_s(sy, N);
    double sw = 0.0, ss = 0.0, sn = 0.0;
    for (int i = 0; i < N; i++) {
        sw += (double)sx[i] * (double)sy[i];
        ss += fabs((double)sx[i] * (double)sy[i]);
        sn += (double)sx[i] * (double)sx[i];
    }
    float gs = sdot_(&n, sx, &one, sy, &one);
    CHECK(close_s(gs, sw, ss, N), "sdot_ returns float: %.9g, want %.9g", gs, sw);
    gs = snrm2_(&n, sx, &one);
    CHECK(close_s(gs, sqrt(sn), sqrt(sn), N), "snrm2_ returns float: %.9g, want %.9g", gs, sqrt(sn));

    double dx[2 * N], dy[N];
    fill_d(dx, 2 * N);
    fill_d(dy, N);
    double dw = 0.0, ds = 0.0, dn = 0.0, best = -1.0;
    int besti = 0;
    for (int i = 0; i < N; i++) {
        double v = dx[vi(i, N, 2)];
        dw += v * dy[i];
        ds += fabs(v * dy[i]);
        dn += v * v;
        if (fabs(v) > best) {
            best = fabs(v);
            besti = i + 1; /* Fortran: 1-based */
        }
    }
    double gd = ddot_(&n, dx, &two, dy, &one);
    CHECK(close_d(gd, dw, ds, N), "ddot_: %.17g, want %.17g", gd, dw);
    gd = dnrm2_(&n, dx, &two);
    CHECK(close_d(gd, sqrt(dn), sqrt(dn), N), "dnrm2_: %.17g, want %.17g", gd, sqrt(dn));
    int gi = idamax_(&n, dx, &two);
    CHECK(gi == besti, "idamax_: %d, want %d (1-based)", gi, besti);
    int64_t gi8 = idamax_64_(&n8, dx, &two8);
    CHECK(gi8 == besti, "idamax_64_: %lld, want %d", (long long)gi8, besti);
    int zero = 0;
    CHECK(idamax_(&zero, dx, &one) == 0, "idamax_(n = 0) must be 0");
    (void)one8;
}

int main(void) {
    static const int sizes[][3] = {{1, 1, 1}, {3, 2, 5}, {9, 13, 4}, {32, 31, 33}, {67, 40, 101}};
    /* Lower case must work too; 'C' means 'T' for real matrices. */
    const char tr[] = {'N', 'T', 'c', 'n'};
    for (int w = WIDTH_32; w <= WIDTH_CBLAS64; w++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t ta = 0; ta < 4; ta++)
                for (size_t tb = 0; tb < 4; tb++) {
                    char a = tr[ta], b = tr[tb];
                    if (w == WIDTH_CBLAS64 && (ta >= 2 || tb >= 2)) continue; /* enums: N and T only */
                    test_dgemm(w, a, b, sizes[s][0], sizes[s][1], sizes[s][2], 0.9, 0.0);
                    test_dgemm(w, a, b, sizes[s][0], sizes[s][1], sizes[s][2], -1.1, 0.35);
                }
    test_cblas_dgemm64_rowmajor();
    test_functions();
    return finish("fortran_abi");
}
