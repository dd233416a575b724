/* CBLAS through the installed cblas.h: dgemm/zgemm in both layouts and every transpose,
 * Level 1 (ddot, daxpy, dnrm2, idamax, zdotc_sub) and Level 2 (dgemv, zgemv), all against
 * naive loops on random data. Checks padding outside the output is untouched and that
 * beta == 0 overwrites NaN. */
#include <cblas.h>

#include "common.h"

/* Offset of element (i, j) of a matrix stored in `layout` with leading dimension ld. */
static size_t at(CBLAS_LAYOUT layout, int ld, int i, int j) {
    return layout == CblasColMajor ? (size_t)i + (size_t)j * (size_t)ld : (size_t)i * (size_t)ld + (size_t)j;
}

/* Offset of element i of a BLAS vector of length n with increment inc (inc < 0 runs backwards). */
static size_t vi(int i, int n, int inc) { return inc > 0 ? (size_t)i * (size_t)inc : (size_t)(n - 1 - i) * (size_t)(-inc); }

static const char *lname(CBLAS_LAYOUT l) { return l == CblasRowMajor ? "row" : "col"; }
static char tname(CBLAS_TRANSPOSE t) { return t == CblasNoTrans ? 'N' : t == CblasTrans ? 'T' : 'C'; }

/* Storage of an r x c matrix in `layout` with 3 spare rows/columns of padding. */
static int ld_for(CBLAS_LAYOUT layout, int r, int c) { return (layout == CblasColMajor ? r : c) + 3; }
static size_t size_for(CBLAS_LAYOUT layout, int r, int c) {
    return (size_t)ld_for(layout, r, c) * (size_t)(layout == CblasColMajor ? c : r);
}

static void test_dgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
                       double beta) {
    int ar = ta == CblasNoTrans ? m : k, ac = ta == CblasNoTrans ? k : m;
    int br = tb == CblasNoTrans ? k : n, bc = tb == CblasNoTrans ? n : k;
    int lda = ld_for(layout, ar, ac), ldb = ld_for(layout, br, bc), ldc = ld_for(layout, m, n);
    size_t asz = size_for(layout, ar, ac), bsz = size_for(layout, br, bc), csz = size_for(layout, m, n);
    double *a = xmalloc(asz * sizeof *a), *b = xmalloc(bsz * sizeof *b);
    double *c = xmalloc(csz * sizeof *c), *c0 = xmalloc(csz * sizeof *c0);
    fill_d(a, asz);
    fill_d(b, bsz);
    fill_d(c, csz);
    if (beta == 0.0) poison_d(c, csz); /* must be overwritten, NaN must not survive */
    memcpy(c0, c, csz * sizeof *c);

    cblas_dgemm(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);

    int bad = 0;
    for (int i = 0; i < m && !bad; i++) {
        for (int j = 0; j < n && !bad; j++) {
            double s = 0.0, scale = 0.0;
            for (int l = 0; l < k; l++) {
                double x = ta == CblasNoTrans ? a[at(layout, lda, i, l)] : a[at(layout, lda, l, i)];
                double y = tb == CblasNoTrans ? b[at(layout, ldb, l, j)] : b[at(layout, ldb, j, l)];
                s += x * y;
                scale += fabs(x * y);
            }
            double old = beta == 0.0 ? 0.0 : beta * c0[at(layout, ldc, i, j)];
            double want = alpha * s + old;
            double got = c[at(layout, ldc, i, j)];
            if (!close_d(got, want, fabs(alpha) * scale + fabs(old), k)) {
                CHECK(0, "dgemm %s %c%c m=%d n=%d k=%d alpha=%g beta=%g: C(%d,%d) = %.17g, want %.17g", lname(layout),
                      tname(ta), tname(tb), m, n, k, alpha, beta, i, j, got, want);
                bad = 1;
            }
        }
    }
    if (!bad) CHECK(1, "dgemm");
    /* The padding rows/columns of C are not part of the output: bit-identical. */
    for (size_t p = 0; p < csz; p++) {
        size_t major = p / (size_t)ldc, minor = p % (size_t)ldc;
        int inside = layout == CblasColMajor ? (minor < (size_t)m && major < (size_t)n)
                                             : (minor < (size_t)n && major < (size_t)m);
        if (!inside && memcmp(&c[p], &c0[p], sizeof c[p]) != 0) {
            CHECK(0, "dgemm %s %c%c m=%d n=%d k=%d wrote outside C at offset %zu", lname(layout), tname(ta), tname(tb),
                  m, n, k, p);
            break;
        }
    }
    free(a);
    free(b);
    free(c);
    free(c0);
}

static double complex opz(CBLAS_TRANSPOSE t, const double complex *a, CBLAS_LAYOUT layout, int ld, int i, int j) {
    if (t == CblasNoTrans) return a[at(layout, ld, i, j)];
    if (t == CblasTrans) return a[at(layout, ld, j, i)];
    return conj(a[at(layout, ld, j, i)]);
}

static void test_zgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                       double complex alpha, double complex beta) {
    int ar = ta == CblasNoTrans ? m : k, ac = ta == CblasNoTrans ? k : m;
    int br = tb == CblasNoTrans ? k : n, bc = tb == CblasNoTrans ? n : k;
    int lda = ld_for(layout, ar, ac), ldb = ld_for(layout, br, bc), ldc = ld_for(layout, m, n);
    size_t asz = size_for(layout, ar, ac), bsz = size_for(layout, br, bc), csz = size_for(layout, m, n);
    double complex *a = xmalloc(asz * sizeof *a), *b = xmalloc(bsz * sizeof *b);
    double complex *c = xmalloc(csz * sizeof *c), *c0 = xmalloc(csz * sizeof *c0);
    fill_z(a, asz);
    fill_z(b, bsz);
    fill_z(c, csz);
    if (beta == 0.0) poison_z(c, csz);
    memcpy(c0, c, csz * sizeof *c);

    cblas_zgemm(layout, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);

    int bad = 0;
    for (int i = 0; i < m && !bad; i++) {
        for (int j = 0; j < n && !bad; j++) {
            double complex s = 0.0;
            double scale = 0.0;
            for (int l = 0; l < k; l++) {
                double complex x = opz(ta, a, layout, lda, i, l), y = opz(tb, b, layout, ldb, l, j);
                s += x * y;
                scale += cabs(x) * cabs(y);
            }
            double complex old = beta == 0.0 ? 0.0 : beta * c0[at(layout, ldc, i, j)];
            double complex want = alpha * s + old;
            double complex got = c[at(layout, ldc, i, j)];
            if (!close_z(got, want, cabs(alpha) * scale + cabs(old), 4 * k)) {
                CHECK(0, "zgemm %s %c%c m=%d n=%d k=%d: C(%d,%d) = (%.17g,%.17g), want (%.17g,%.17g)", lname(layout),
                      tname(ta), tname(tb), m, n, k, i, j, creal(got), cimag(got), creal(want), cimag(want));
                bad = 1;
            }
        }
    }
    if (!bad) CHECK(1, "zgemm");
    free(a);
    free(b);
    free(c);
    free(c0);
}

static void test_level1(void) {
    enum { N = 37 };
    double x[2 * N], y[2 * N], y0[2 * N];
    fill_d(x, 2 * N);
    fill_d(y, 2 * N);
    memcpy(y0, y, sizeof y);

    /* ddot with incx = 2, incy = -1 */
    double want = 0.0, scale = 0.0;
    for (int i = 0; i < N; i++) {
        want += x[vi(i, N, 2)] * y[vi(i, N, -1)];
        scale += fabs(x[vi(i, N, 2)] * y[vi(i, N, -1)]);
    }
    double got = cblas_ddot(N, x, 2, y, -1);
    CHECK(close_d(got, want, scale, N), "cblas_ddot: %.17g, want %.17g", got, want);

    /* daxpy with incx = -2, incy = 1 */
    cblas_daxpy(N, 0.75, x, -2, y, 1);
    int ok = 1;
    for (int i = 0; i < N; i++) {
        double w = y0[vi(i, N, 1)] + 0.75 * x[vi(i, N, -2)];
        if (!close_d(y[vi(i, N, 1)], w, fabs(w) + 1.0, 2)) ok = 0;
    }
    for (int i = N; i < 2 * N; i++) ok &= memcmp(&y[i], &y0[i], sizeof y[i]) == 0;
    CHECK(ok, "cblas_daxpy with incx = -2");

    /* dnrm2 and idamax with a stride */
    double ss = 0.0, best = -1.0;
    size_t besti = 0;
    for (int i = 0; i < N; i++) {
        double v = x[vi(i, N, 2)];
        ss += v * v;
        if (fabs(v) > best) {
            best = fabs(v);
            besti = (size_t)i;
        }
    }
    got = cblas_dnrm2(N, x, 2);
    CHECK(close_d(got, sqrt(ss), sqrt(ss), N), "cblas_dnrm2: %.17g, want %.17g", got, sqrt(ss));
    CBLAS_INDEX idx = cblas_idamax(N, x, 2);
    CHECK(idx == besti, "cblas_idamax: %zu, want %zu (0-based)", (size_t)idx, besti);
    CHECK(cblas_idamax(0, x, 1) == 0, "cblas_idamax(n = 0) must be 0");

    /* zdotc_sub: sum conj(x_i) * y_i */
    double complex zx[N], zy[N], zr = 0.0, zwant = 0.0;
    fill_z(zx, N);
    fill_z(zy, N);
    double zscale = 0.0;
    for (int i = 0; i < N; i++) {
        zwant += conj(zx[i]) * zy[vi(i, N, -1)];
        zscale += cabs(zx[i]) * cabs(zy[vi(i, N, -1)]);
    }
    cblas_zdotc_sub(N, zx, 1, zy, -1, &zr);
    CHECK(close_z(zr, zwant, zscale, 4 * N), "cblas_zdotc_sub: (%.17g,%.17g), want (%.17g,%.17g)", creal(zr), cimag(zr),
          creal(zwant), cimag(zwant));
}

static void test_dgemv(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE t, int m, int n, int incx, int incy, double alpha,
                       double beta) {
    int lda = ld_for(layout, m, n);
    size_t asz = size_for(layout, m, n);
    int lx = t == CblasNoTrans ? n : m, ly = t == CblasNoTrans ? m : n;
    size_t xsz = (size_t)(lx * abs(incx)) + 1, ysz = (size_t)(ly * abs(incy)) + 1;
    double *a = xmalloc(asz * sizeof *a), *x = xmalloc(xsz * sizeof *x);
    double *y = xmalloc(ysz * sizeof *y), *y0 = xmalloc(ysz * sizeof *y0);
    fill_d(a, asz);
    fill_d(x, xsz);
    fill_d(y, ysz);
    if (beta == 0.0) poison_d(y, ysz);
    memcpy(y0, y, ysz * sizeof *y);

    cblas_dgemv(layout, t, m, n, alpha, a, lda, x, incx, beta, y, incy);

    int ok = 1;
    for (int i = 0; i < ly; i++) {
        double s = 0.0, scale = 0.0;
        for (int j = 0; j < lx; j++) {
            double aij = t == CblasNoTrans ? a[at(layout, lda, i, j)] : a[at(layout, lda, j, i)];
            s += aij * x[vi(j, lx, incx)];
            scale += fabs(aij * x[vi(j, lx, incx)]);
        }
        double old = beta == 0.0 ? 0.0 : beta * y0[vi(i, ly, incy)];
        double want = alpha * s + old;
        if (!close_d(y[vi(i, ly, incy)], want, fabs(alpha) * scale + fabs(old), lx)) ok = 0;
    }
    CHECK(ok, "dgemv %s %c m=%d n=%d incx=%d incy=%d alpha=%g beta=%g", lname(layout), tname(t), m, n, incx, incy, alpha,
          beta);
    free(a);
    free(x);
    free(y);
    free(y0);
}

static void test_zgemv_conj_rowmajor(void) {
    enum { M = 9, N = 6 };
    int lda = N + 2;
    double complex a[M * (N + 2)], x[M], y[N], y0[N];
    double complex alpha = CMPLX(0.5, -1.25), beta = CMPLX(-0.75, 0.25);
    fill_z(a, M * (size_t)lda);
    fill_z(x, M);
    fill_z(y, N);
    memcpy(y0, y, sizeof y);
    /* y := alpha * A^H x + beta y, A row-major M x N */
    cblas_zgemv(CblasRowMajor, CblasConjTrans, M, N, &alpha, a, lda, x, 1, &beta, y, 1);
    int ok = 1;
    for (int j = 0; j < N; j++) {
        double complex s = 0.0;
        double scale = 0.0;
        for (int i = 0; i < M; i++) {
            s += conj(a[(size_t)i * (size_t)lda + (size_t)j]) * x[i];
            scale += cabs(a[(size_t)i * (size_t)lda + (size_t)j]) * cabs(x[i]);
        }
        double complex want = alpha * s + beta * y0[j];
        if (!close_z(y[j], want, cabs(alpha) * scale + cabs(beta * y0[j]), 4 * M)) ok = 0;
    }
    CHECK(ok, "zgemv row-major ConjTrans");
}

int main(void) {
    static const int sizes[][3] = {{1, 1, 1}, {2, 3, 4}, {7, 5, 9}, {16, 17, 15}, {33, 31, 64}, {70, 45, 130}};
    const CBLAS_LAYOUT layouts[] = {CblasColMajor, CblasRowMajor};
    const CBLAS_TRANSPOSE dtr[] = {CblasNoTrans, CblasTrans};
    const CBLAS_TRANSPOSE ztr[] = {CblasNoTrans, CblasTrans, CblasConjTrans};
    const double ab[][2] = {{1.0, 0.0}, {0.7, 1.0}, {-1.3, 0.4}, {0.0, 0.5}};

    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t l = 0; l < 2; l++)
            for (size_t ta = 0; ta < 2; ta++)
                for (size_t tb = 0; tb < 2; tb++)
                    for (size_t v = 0; v < sizeof ab / sizeof ab[0]; v++)
                        test_dgemm(layouts[l], dtr[ta], dtr[tb], sizes[s][0], sizes[s][1], sizes[s][2], ab[v][0],
                                   ab[v][1]);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t l = 0; l < 2; l++)
            for (size_t ta = 0; ta < 3; ta++)
                for (size_t tb = 0; tb < 3; tb++) {
                    test_zgemm(layouts[l], ztr[ta], ztr[tb], sizes[s][0], sizes[s][1], sizes[s][2], CMPLX(0.6, -0.8),
                               CMPLX(0.0, 0.0));
                    test_zgemm(layouts[l], ztr[ta], ztr[tb], sizes[s][0], sizes[s][1], sizes[s][2], CMPLX(1.0, 0.0),
                               CMPLX(-0.5, 1.5));
                }
    test_level1();
    for (size_t l = 0; l < 2; l++)
        for (size_t t = 0; t < 2; t++) {
            test_dgemv(layouts[l], dtr[t], 13, 7, 1, 1, 1.0, 0.0);
            test_dgemv(layouts[l], dtr[t], 5, 11, -2, 3, -0.6, 1.1);
            test_dgemv(layouts[l], dtr[t], 64, 65, 1, -1, 0.3, 1.0);
        }
    test_zgemv_conj_rowmajor();
    return finish("cblas_basic");
}
