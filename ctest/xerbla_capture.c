/* A program that defines its own xerbla_, xerbla_64_ and cblas_xerbla (as LAPACK and the
 * netlib testers do) must receive every error report of the library, with the reference
 * INFO, exactly once per bad call, and the bad call must not write its outputs. Valid calls
 * must not report anything. */
#include <cblas64.h>

#include "common.h"

void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc, size_t la, size_t lb);
void dgemm_64_(const char *transa, const char *transb, const int64_t *m, const int64_t *n, const int64_t *k,
               const double *alpha, const double *a, const int64_t *lda, const double *b, const int64_t *ldb,
               const double *beta, double *c, const int64_t *ldc, size_t la, size_t lb);
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a, const int *lda,
            const double *x, const int *incx, const double *beta, double *y, const int *incy, size_t lt);

/* What the last report said. */
static struct {
    int calls;
    char name[33];
    long info;
    int width; /* 32: xerbla_, 64: xerbla_64_, 0: cblas_xerbla */
} g_last;

static void record(const char *name, size_t len, long info, int width) {
    g_last.calls++;
    /* Trailing blanks of the Fortran name are padding; stop at a NUL too (C callers). */
    size_t n = 0;
    while (n < len && n < 32 && name[n] != '\0') n++;
    while (n > 0 && name[n - 1] == ' ') n--;
    memcpy(g_last.name, name, n);
    g_last.name[n] = '\0';
    g_last.info = info;
    g_last.width = width;
}

void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len) { record(srname, len, *info, 32); }
void xerbla_64_(const char *srname, const int64_t *info, size_t len);
void xerbla_64_(const char *srname, const int64_t *info, size_t len) { record(srname, len, (long)*info, 64); }
void cblas_xerbla(int p, const char *rout, const char *form, ...) {
    (void)form;
    record(rout, strlen(rout), p, 0);
}

static void reset(void) { memset(&g_last, 0, sizeof g_last); }

static int same_name(const char *got, const char *want) {
    size_t n = strlen(want);
    if (strlen(got) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char a = got[i], b = want[i];
        if (a >= 'a' && a <= 'z') a = (char)(a - 'a' + 'A');
        if (b >= 'a' && b <= 'z') b = (char)(b - 'a' + 'A');
        if (a != b) return 0;
    }
    return 1;
}

/* One report, from the expected handler, with the expected name and INFO. */
static void expect(const char *what, int width, const char *name, long info) {
    CHECK(g_last.calls == 1, "%s: %d error reports, want 1", what, g_last.calls);
    CHECK(g_last.width == width, "%s: reported through %s, want %s", what,
          g_last.width == 32 ? "xerbla_" : g_last.width == 64 ? "xerbla_64_" : "cblas_xerbla",
          width == 32 ? "xerbla_" : width == 64 ? "xerbla_64_" : "cblas_xerbla");
    /* Fortran names are compared case-insensitively; CBLAS names exactly. */
    int name_ok = width == 0 ? strcmp(g_last.name, name) == 0 : same_name(g_last.name, name);
    /* An ILP64 CBLAS routine may give its own symbol name. */
    if (!name_ok && width == 0 && strlen(g_last.name) == strlen(name) + 3)
        name_ok = strncmp(g_last.name, name, strlen(name)) == 0 && strcmp(g_last.name + strlen(name), "64_") == 0;
    CHECK(name_ok, "%s: routine name '%s', want '%s'", what, g_last.name, name);
    CHECK(g_last.info == info, "%s: INFO %ld, want %ld", what, g_last.info, info);
}

enum { M = 4, N = 3, K = 5 };
static double a[64], b[64], c[64], c0[64], x[64], y[64], y0[64];

static void unchanged(const char *what) {
    CHECK(memcmp(c, c0, sizeof c) == 0, "%s: C was written by a call that reported an error", what);
    CHECK(memcmp(y, y0, sizeof y) == 0, "%s: y was written by a call that reported an error", what);
}

int main(void) {
    fill_d(a, 64);
    fill_d(b, 64);
    fill_d(c, 64);
    fill_d(x, 64);
    fill_d(y, 64);
    memcpy(c0, c, sizeof c);
    memcpy(y0, y, sizeof y);
    const double one = 1.0, zero = 0.0;
    int m = M, n = N, k = K, lda = M, ldb = K, ldc = M, mneg = -1, ldabad = M - 2, inc1 = 1, inc0 = 0;

    /* dgemm_ with M < 0: INFO 3. */
    reset();
    dgemm_("N", "N", &mneg, &n, &k, &one, a, &lda, b, &ldb, &zero, c, &ldc, 1, 1);
    expect("dgemm_ M < 0", 32, "DGEMM", 3);
    unchanged("dgemm_ M < 0");

    /* dgemm_ with LDA < M (no transpose): INFO 8. */
    reset();
    dgemm_("N", "N", &m, &n, &k, &one, a, &ldabad, b, &ldb, &zero, c, &ldc, 1, 1);
    expect("dgemm_ LDA < M", 32, "DGEMM", 8);
    unchanged("dgemm_ LDA < M");

    /* dgemm_ with a bad TRANSA: INFO 1 (checked before everything else). */
    reset();
    dgemm_("X", "N", &mneg, &n, &k, &one, a, &lda, b, &ldb, &zero, c, &ldc, 1, 1);
    expect("dgemm_ TRANSA = 'X'", 32, "DGEMM", 1);
    unchanged("dgemm_ TRANSA = 'X'");

    /* dgemv_ with INCX = 0: INFO 8. */
    reset();
    dgemv_("N", &m, &n, &one, a, &lda, x, &inc0, &zero, y, &inc1, 1);
    expect("dgemv_ INCX = 0", 32, "DGEMV", 8);
    unchanged("dgemv_ INCX = 0");

    /* ILP64: dgemm_64_ with M < 0 goes to xerbla_64_ with INFO 3. */
    int64_t mneg8 = -1, n8 = N, k8 = K, lda8 = M, ldb8 = K, ldc8 = M;
    reset();
    dgemm_64_("N", "N", &mneg8, &n8, &k8, &one, a, &lda8, b, &ldb8, &zero, c, &ldc8, 1, 1);
    expect("dgemm_64_ M < 0", 64, "DGEMM", 3);
    unchanged("dgemm_64_ M < 0");

    /* CBLAS column-major M < 0: position 4 in the cblas_dgemm argument list. */
    reset();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, -1, N, K, 1.0, a, M, b, K, 0.0, c, M);
    expect("cblas_dgemm col-major M < 0", 0, "cblas_dgemm", 4);
    unchanged("cblas_dgemm col-major M < 0");

    /* CBLAS invalid layout: position 1. */
    reset();
    cblas_dgemm((CBLAS_LAYOUT)77, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, a, M, b, K, 0.0, c, M);
    expect("cblas_dgemm layout 77", 0, "cblas_dgemm", 1);
    unchanged("cblas_dgemm layout 77");

    /* CBLAS invalid TransA: position 2. */
    reset();
    cblas_dgemm(CblasColMajor, (CBLAS_TRANSPOSE)0, CblasNoTrans, M, N, K, 1.0, a, M, b, K, 0.0, c, M);
    expect("cblas_dgemm TransA 0", 0, "cblas_dgemm", 2);
    unchanged("cblas_dgemm TransA 0");

    /* ILP64 CBLAS reports through the same cblas_xerbla. */
    reset();
    cblas_dgemm64_(CblasColMajor, CblasNoTrans, CblasNoTrans, -1, N, K, 1.0, a, M, b, K, 0.0, c, M);
    expect("cblas_dgemm64_ col-major M < 0", 0, "cblas_dgemm", 4);
    unchanged("cblas_dgemm64_ col-major M < 0");

    /* Valid calls report nothing (and do write). */
    reset();
    dgemm_("N", "N", &m, &n, &k, &one, a, &lda, b, &ldb, &zero, c, &ldc, 1, 1);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0, a, M, b, N, 0.0, c, N);
    dgemv_("T", &m, &n, &one, a, &lda, x, &inc1, &zero, y, &inc1, 1);
    CHECK(g_last.calls == 0, "valid calls made %d error reports", g_last.calls);
    CHECK(memcmp(c, c0, sizeof c) != 0, "valid dgemm calls did not write C");

    return finish("xerbla_capture");
}
