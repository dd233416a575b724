/* Batched GEMM through the installed cblas.h (oneMKL's API, which hyblas exports):
 * cblas_dgemm_batch with two groups of different shapes and transposes, cblas_zgemm_batch_strided
 * row-major, both against naive loops on random data; then bad arguments, reported as oneMKL
 * reports them (a bad later group: its CBLAS position; a negative group size: argument 15 of
 * the Fortran DGEMM_BATCH), with no group written. */
#include <cblas.h>

#include "common.h"

static struct {
    int calls;
    char name[40];
    long info;
} g_last;

void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_(const char *srname, const int *info, size_t len) {
    size_t n = 0;
    while (n < len && n < 39 && srname[n] != '\0' && srname[n] != ' ') n++;
    memcpy(g_last.name, srname, n);
    g_last.name[n] = '\0';
    g_last.info = *info;
    g_last.calls++;
}
void cblas_xerbla(int p, const char *rout, const char *form, ...) {
    (void)form;
    snprintf(g_last.name, sizeof g_last.name, "%s", rout);
    g_last.info = p;
    g_last.calls++;
}

/* Column-major reference: C := alpha*op(A)*op(B) + beta*C (op: 'N' or 'T'). */
static void ref_d(char ta, char tb, int m, int n, int k, double alpha, const double *a, int lda, const double *b,
                  int ldb, double beta, double *c, int ldc) {
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0.0;
            for (int l = 0; l < k; l++)
                s += (ta == 'N' ? a[i + l * lda] : a[l + i * lda]) * (tb == 'N' ? b[l + j * ldb] : b[j + l * ldb]);
            c[i + j * ldc] = alpha * s + (beta == 0.0 ? 0.0 : beta * c[i + j * ldc]);
        }
}

static void grouped(void) {
    /* Group 0: 3 products, N,N, 5x4x6; group 1: 2 products, T,N, 3x7x2. */
    CBLAS_TRANSPOSE ta[2] = {CblasNoTrans, CblasTrans}, tb[2] = {CblasNoTrans, CblasNoTrans};
    int m[2] = {5, 3}, n[2] = {4, 7}, k[2] = {6, 2}, lda[2] = {6, 3}, ldb[2] = {7, 2}, ldc[2] = {5, 4}, gs[2] = {3, 2};
    double alpha[2] = {1.5, -0.5}, beta[2] = {0.0, 2.0};
    double *a[5], *b[5], *c[5], *want[5];
    for (int p = 0; p < 5; p++) {
        int g = p < 3 ? 0 : 1;
        a[p] = xmalloc(64 * sizeof(double));
        b[p] = xmalloc(64 * sizeof(double));
        c[p] = xmalloc(64 * sizeof(double));
        want[p] = xmalloc(64 * sizeof(double));
        fill_d(a[p], 64);
        fill_d(b[p], 64);
        fill_d(c[p], 64);
        if (g == 0) poison_d(c[p], 64); /* beta 0 must overwrite NaN */
        memcpy(want[p], c[p], 64 * sizeof(double));
        ref_d(g == 0 ? 'N' : 'T', 'N', m[g], n[g], k[g], alpha[g], a[p], lda[g], b[p], ldb[g], beta[g], want[p], ldc[g]);
    }
    cblas_dgemm_batch(CblasColMajor, ta, tb, m, n, k, alpha, (const double **)a, lda, (const double **)b, ldb, beta,
                      c, ldc, 2, gs);
    for (int p = 0; p < 5; p++) {
        int g = p < 3 ? 0 : 1;
        for (int j = 0; j < n[g]; j++)
            for (int i = 0; i < ldc[g]; i++) {
                double got = c[p][i + j * ldc[g]], w = want[p][i + j * ldc[g]];
                if (i < m[g])
                    CHECK(close_d(got, w, 4.0, k[g]), "dgemm_batch product %d (%d,%d): %g want %g", p, i, j, got, w);
                else
                    CHECK(memcmp(&got, &w, sizeof got) == 0, "dgemm_batch product %d wrote padding row %d", p, i);
            }
    }
    /* Bad arguments: nothing of either group is written. */
    double *saved = xmalloc(5 * 64 * sizeof(double));
    for (int p = 0; p < 5; p++) memcpy(saved + p * 64, c[p], 64 * sizeof(double));
    int bad_lda[2] = {6, 1};
    memset(&g_last, 0, sizeof g_last);
    cblas_dgemm_batch(CblasColMajor, ta, tb, m, n, k, alpha, (const double **)a, bad_lda, (const double **)b, ldb,
                      beta, c, ldc, 2, gs);
    CHECK(g_last.calls == 1 && g_last.info == 9 && strcmp(g_last.name, "cblas_dgemm_batch") == 0,
          "bad lda of group 1: %d reports, %s %ld (want cblas_dgemm_batch 9)", g_last.calls, g_last.name, g_last.info);
    int bad_gs[2] = {3, -1};
    memset(&g_last, 0, sizeof g_last);
    cblas_dgemm_batch(CblasColMajor, ta, tb, m, n, k, alpha, (const double **)a, lda, (const double **)b, ldb, beta,
                      c, ldc, 2, bad_gs);
    CHECK(g_last.calls == 1 && g_last.info == 15 && strcmp(g_last.name, "DGEMM_BATCH") == 0,
          "negative group size: %d reports, %s %ld (want DGEMM_BATCH 15)", g_last.calls, g_last.name, g_last.info);
    for (int p = 0; p < 5; p++)
        CHECK(memcmp(saved + p * 64, c[p], 64 * sizeof(double)) == 0, "a bad call wrote product %d", p);
    for (int p = 0; p < 5; p++) {
        free(a[p]);
        free(b[p]);
        free(c[p]);
        free(want[p]);
    }
    free(saved);
}

static void strided(void) {
    /* Row-major: 4 products of C (3x5) := alpha*A (3x4) * B^T (B stored 5x4) + beta*C. */
    const int m = 3, n = 5, k = 4, count = 4, lda = 4, ldb = 4, ldc = 5;
    const int sa = m * lda, sb = n * ldb, sc = m * ldc;
    double complex *a = xmalloc((size_t)(sa * count) * sizeof *a), *b = xmalloc((size_t)(sb * count) * sizeof *b);
    double complex *c = xmalloc((size_t)(sc * count) * sizeof *c), *want = xmalloc((size_t)(sc * count) * sizeof *c);
    fill_z(a, (size_t)(sa * count));
    fill_z(b, (size_t)(sb * count));
    fill_z(c, (size_t)(sc * count));
    memcpy(want, c, (size_t)(sc * count) * sizeof *c);
    double complex alpha = CMPLX(0.5, -1.0), beta = CMPLX(1.0, 0.25);
    for (int p = 0; p < count; p++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double complex s = 0;
                for (int l = 0; l < k; l++) s += a[p * sa + i * lda + l] * b[p * sb + j * ldb + l];
                want[p * sc + i * ldc + j] = alpha * s + beta * want[p * sc + i * ldc + j];
            }
    cblas_zgemm_batch_strided(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, &alpha, a, lda, sa, b, ldb, sb, &beta,
                              c, ldc, sc, count);
    for (int e = 0; e < sc * count; e++)
        CHECK(close_z(c[e], want[e], 4.0, k), "zgemm_batch_strided element %d", e);
    free(a);
    free(b);
    free(c);
    free(want);
}

int main(void) {
    grouped();
    strided();
    return finish("gemm_batch");
}
