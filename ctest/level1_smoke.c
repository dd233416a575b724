/* ?axpy through every entry point: Fortran LP64/ILP64 (saxpy_, daxpy_, caxpy_, zaxpy_,
 * daxpy_64_) and CBLAS LP64/ILP64 (cblas_daxpy, cblas_zaxpy, cblas_daxpy64_), with positive
 * and negative increments, n = 0 and alpha = 0 (y untouched even when x holds NaN). */
#include <cblas64.h>

#include "common.h"

void saxpy_(const int *n, const float *alpha, const float *x, const int *incx, float *y, const int *incy);
void daxpy_(const int *n, const double *alpha, const double *x, const int *incx, double *y, const int *incy);
void caxpy_(const int *n, const float complex *alpha, const float complex *x, const int *incx, float complex *y,
            const int *incy);
void zaxpy_(const int *n, const double complex *alpha, const double complex *x, const int *incx, double complex *y,
            const int *incy);
void daxpy_64_(const int64_t *n, const double *alpha, const double *x, const int64_t *incx, double *y,
               const int64_t *incy);

static size_t vi(int i, int n, int inc) { return inc > 0 ? (size_t)i * (size_t)inc : (size_t)(n - 1 - i) * (size_t)(-inc); }

enum { NMAX = 300, LEN = 4 * NMAX };

enum { F32, F64, C32F, C64F, F64_ILP64, CB64, CBZ, CB64_ILP64 };
static const char *names[] = {"saxpy_", "daxpy_", "caxpy_", "zaxpy_", "daxpy_64_", "cblas_daxpy", "cblas_zaxpy",
                              "cblas_daxpy64_"};

static void run(int which, int n, int incx, int incy, double ar, double ai) {
    static double dx[LEN], dy[LEN], dy0[LEN];
    static float sx[LEN], sy[LEN], sy0[LEN];
    static double complex zx[LEN], zy[LEN], zy0[LEN];
    static float complex cx[LEN], cy[LEN], cy0[LEN];
    fill_d(dx, LEN);
    fill_d(dy, LEN);
    fill_s(sx, LEN);
    fill_s(sy, LEN);
    fill_z(zx, LEN);
    fill_z(zy, LEN);
    fill_c(cx, LEN);
    fill_c(cy, LEN);
    if (ar == 0.0 && ai == 0.0) { /* alpha = 0 must not even read x */
        poison_d(dx, LEN);
        poison_z(zx, LEN);
        for (int i = 0; i < LEN; i++) sx[i] = NAN, cx[i] = CMPLXF(NAN, NAN);
    }
    memcpy(dy0, dy, sizeof dy);
    memcpy(sy0, sy, sizeof sy);
    memcpy(zy0, zy, sizeof zy);
    memcpy(cy0, cy, sizeof cy);

    double da = ar;
    float sa = (float)ar;
    double complex za = CMPLX(ar, ai);
    float complex ca = CMPLXF((float)ar, (float)ai);
    int64_t n8 = n, incx8 = incx, incy8 = incy;
    switch (which) {
        case F32: saxpy_(&n, &sa, sx, &incx, sy, &incy); break;
        case F64: daxpy_(&n, &da, dx, &incx, dy, &incy); break;
        case C32F: caxpy_(&n, &ca, cx, &incx, cy, &incy); break;
        case C64F: zaxpy_(&n, &za, zx, &incx, zy, &incy); break;
        case F64_ILP64: daxpy_64_(&n8, &da, dx, &incx8, dy, &incy8); break;
        case CB64: cblas_daxpy(n, da, dx, incx, dy, incy); break;
        case CBZ: cblas_zaxpy(n, &za, zx, incx, zy, incy); break;
        default: cblas_daxpy64_(n8, da, dx, incx8, dy, incy8); break;
    }

    /* Expected y, element by element; everything not addressed by y stays bit-identical. */
    int ok = 1;
    static unsigned char touched[LEN];
    memset(touched, 0, sizeof touched);
    for (int i = 0; i < n; i++) {
        size_t px = vi(i, n, incx), py = vi(i, n, incy);
        touched[py] = 1;
        if (ar == 0.0 && ai == 0.0) continue;
        switch (which) {
            case F32: ok &= close_s(sy[py], (double)sy0[py] + (double)sa * (double)sx[px], 2.0, 2); break;
            case C32F: ok &= close_c(cy[py], cy0[py] + ca * cx[px], 4.0, 4); break;
            case C64F:
            case CBZ: ok &= close_z(zy[py], zy0[py] + za * zx[px], 4.0, 4); break;
            default: ok &= close_d(dy[py], dy0[py] + da * dx[px], 2.0, 2); break;
        }
    }
    for (size_t p = 0; p < LEN; p++) {
        if (touched[p] && !(ar == 0.0 && ai == 0.0)) continue;
        switch (which) {
            case F32: ok &= memcmp(&sy[p], &sy0[p], sizeof sy[p]) == 0; break;
            case C32F: ok &= memcmp(&cy[p], &cy0[p], sizeof cy[p]) == 0; break;
            case C64F:
            case CBZ: ok &= memcmp(&zy[p], &zy0[p], sizeof zy[p]) == 0; break;
            default: ok &= memcmp(&dy[p], &dy0[p], sizeof dy[p]) == 0; break;
        }
    }
    CHECK(ok, "%s n=%d incx=%d incy=%d alpha=(%g,%g)", names[which], n, incx, incy, ar, ai);
}

int main(void) {
    static const int ns[] = {0, 1, 2, 7, 31, 64, 257, NMAX};
    static const int incs[][2] = {{1, 1}, {2, 3}, {-1, 1}, {1, -2}, {-3, -1}};
    static const double alphas[][2] = {{0.0, 0.0}, {1.0, 0.0}, {-0.7, 0.45}};
    for (int w = F32; w <= CB64_ILP64; w++)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (size_t j = 0; j < sizeof incs / sizeof incs[0]; j++)
                for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; a++)
                    run(w, ns[i], incs[j][0], incs[j][1], alphas[a][0], alphas[a][1]);
    /* n < 0 is a quick return, not an error, for Level 1. */
    run(F64, -3, 1, 1, 1.0, 0.0);
    return finish("level1_smoke");
}
