/* A program built against the system BLAS (linked with -lblas: it records NEEDED libblas.so.3,
 * knows nothing of hyblas) that reports which library answers its BLAS calls and checks the
 * answers. Run with LD_LIBRARY_PATH=<prefix>/lib/hyblas or LD_PRELOAD=<prefix>/lib/libhyblas.so.0
 * and `--expect hyblas`, or plainly with `--expect other` (a control: the system BLAS answers).
 *
 * hyblas is recognised by its `hyblas_version` symbol living in the same object that defines
 * the dgemm_ and cblas_dgemm this program binds to. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>

#include <cblas.h>

#include "common.h"

void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc, size_t la, size_t lb);
double complex zdotc_(const int *n, const double complex *x, const int *incx, const double complex *y, const int *incy);

/* The file that defines `sym` in the global lookup order, resolved to a real path. */
static const char *provider(const char *sym, char *buf, size_t len) {
    void *p = dlsym(RTLD_DEFAULT, sym);
    Dl_info info;
    if (!p || !dladdr(p, &info) || !info.dli_fname) return NULL;
    if (!realpath(info.dli_fname, buf)) {
        strncpy(buf, info.dli_fname, len - 1);
        buf[len - 1] = '\0';
    }
    return buf;
}

int main(int argc, char **argv) {
    const char *expect = argc == 3 && strcmp(argv[1], "--expect") == 0 ? argv[2] : NULL;
    if (!expect || (strcmp(expect, "hyblas") != 0 && strcmp(expect, "other") != 0)) {
        fprintf(stderr, "usage: %s --expect hyblas|other\n", argv[0]);
        return 2;
    }

    char fgemm[PATH_MAX], cgemm[PATH_MAX], fdot[PATH_MAX], fver[PATH_MAX];
    const char *pg = provider("dgemm_", fgemm, sizeof fgemm);
    const char *pc = provider("cblas_dgemm", cgemm, sizeof cgemm);
    const char *pz = provider("zdotc_", fdot, sizeof fdot);
    const char *pv = provider("hyblas_version", fver, sizeof fver);
    printf("dgemm_      from %s\ncblas_dgemm from %s\nzdotc_      from %s\nhyblas_version %s%s\n", pg ? pg : "?",
           pc ? pc : "?", pz ? pz : "?", pv ? "in " : "not loaded", pv ? pv : "");

    int is_hyblas = pg && pc && pz && pv && strcmp(pg, pv) == 0 && strcmp(pc, pv) == 0 && strcmp(pz, pv) == 0;
    if (pv) {
        const char *(*version)(void);
        void *sym = dlsym(RTLD_DEFAULT, "hyblas_version");
        memcpy(&version, &sym, sizeof version); /* object -> function pointer, POSIX style */
        printf("hyblas %s answers\n", version());
    }
    if (strcmp(expect, "hyblas") == 0)
        CHECK(is_hyblas, "dgemm_, cblas_dgemm and zdotc_ should all come from hyblas");
    else
        CHECK(!pv, "hyblas is loaded, the control run expects the system BLAS");

    /* The calls work through whichever library answers. */
    enum { M = 5, N = 4, K = 6 };
    double a[M * K], b[K * N], c[M * N], w[M * N];
    fill_d(a, M * K);
    fill_d(b, K * N);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            double s = 0.0;
            for (int l = 0; l < K; l++) s += a[i + l * M] * b[l + j * K];
            w[i + j * M] = s;
        }
    int m = M, n = N, k = K;
    double one = 1.0, zero = 0.0;
    poison_d(c, M * N);
    dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m, 1, 1);
    int ok = 1;
    for (int p = 0; p < M * N; p++) ok &= close_d(c[p], w[p], (double)K, K);
    CHECK(ok, "dgemm_ result");
    poison_d(c, M * N);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, a, M, b, K, 0.0, c, M);
    ok = 1;
    for (int p = 0; p < M * N; p++) ok &= close_d(c[p], w[p], (double)K, K);
    CHECK(ok, "cblas_dgemm result");

    double complex x[K], y[K], want = 0.0;
    fill_z(x, K);
    fill_z(y, K);
    for (int i = 0; i < K; i++) want += conj(x[i]) * y[i];
    int inc = 1;
    double complex got = zdotc_(&k, x, &inc, y, &inc);
    CHECK(close_z(got, want, 2.0 * K, 4 * K), "zdotc_ result (%g,%g), want (%g,%g)", creal(got), cimag(got),
          creal(want), cimag(want));
    return finish(strcmp(expect, "hyblas") == 0 ? "dropin (hyblas)" : "dropin (control)");
}
