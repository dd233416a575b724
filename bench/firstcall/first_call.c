/*
 * first_call: how long the FIRST call of a cuBLAS routine takes in a fresh process, and (with
 * --ready) how long after it hyblas's own kernel answers the same call. An ordinary cuBLAS
 * program: it never names hyblas. Run it plain for cuBLAS's own first call, and with
 * LD_PRELOAD=libhyblas.so HYBLAS_TRACE=<file> for hyblas's (bench/firstcall/README.md).
 *
 * Usage: first_call [--ready] [--timeout S] [--seed N] KIND...
 *   KIND       dgemm   C(16x16) = 1.5 A^T B + 0.5 C, transa=T transb=N, k = 2^20 (lda = ldb = k)
 *              sgemv   y = 0.75 A x - 0.5 y, trans=N, m = n = 8192
 *              strmv   x := A x, A upper, no-trans, non-unit, n = 8192 (lower part NaN)
 *              run in the order given, each at most once
 *   --ready    after all first calls, call each kind again (round robin, ~10 ms apart) until
 *              the HYBLAS_TRACE line its call wrote says route=hyblas
 *   --timeout  give up on a kind that many seconds after its first call (default 120)
 *   --seed     data seed (default: from the clock; printed)
 *
 * Output (stdout, one line each; lines starting with '#' are informative):
 *   create MS                               cublasCreate's wall time
 *   first KIND MS ok|FAIL MAXRELERR         the kind's first call, cudaDeviceSynchronize included
 *   ready KIND SECONDS CALLS ok|FAIL        first call start -> end of the first call on hyblas
 *   ready KIND timeout CALLS                no call ran on hyblas within --timeout
 *   ready KIND notrace CALLS                a call wrote no trace line (hyblas not preloaded?)
 * Exit status: 0 every check passed (and no ready timeout), 1 a check failed, 2 setup error.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

/* Setup errors (no GPU, out of memory, ...): exit 2. */
#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)
#define CKB(x)                                                                            \
    do {                                                                                  \
        cublasStatus_t s_ = (x);                                                          \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_); \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

static cublasHandle_t handle;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- data ---- */

static uint64_t rng_state;

/* splitmix64: any seed (0 included) gives a good non-zero xorshift state. */
static void seed_rng(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    rng_state = (z ^ (z >> 31)) | 1;
}

/* Uniform in [-1, 1) (xorshift64*). */
static double urand(void) {
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

static void *upload(const void *h, size_t bytes) {
    void *d;
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}

/* ---- the kinds ---- */

enum { DGEMM, SGEMV, STRMV, NKINDS };

struct kind {
    const char *name;
    const char *symbol; /* the cuBLAS name called, as hyblas's trace line names it */
    int requested;
    int is_double;      /* the output's element type: double, else float */
    size_t out_len;     /* output elements */
    void *out_init;     /* host: the output operand's initial values (restored before each call) */
    void *out_dev;      /* device: the output operand */
    void *out_host;     /* host: the result copied back */
    double *ref;        /* per output entry: the CPU reference, in double */
    double *scale;      /* per output entry: sum of |terms| (+ |beta*y0|): the error's yardstick */
    double tol;         /* max |got - ref| / scale */
    cublasStatus_t (*call)(void);
    double first_start; /* when its first call started (now_s) */
};

/* dgemm: C(16x16) = alpha A^T B + beta C; A and B are k x 16, lda = ldb = k (the Gram shape). */
#define GM 16
#define GN 16
#define GK (1 << 20)
static const double G_ALPHA = 1.5, G_BETA = 0.5;
static double *d_ga, *d_gb;

/* sgemv and strmv: n x n, lda = n. */
#define VN 8192
static const float V_ALPHA = 0.75f, V_BETA = -0.5f;
static float *d_va, *d_vx, *d_ta;

static struct kind kinds[NKINDS];

static cublasStatus_t call_dgemm(void) {
    return cublasDgemm_v2(handle, CUBLAS_OP_T, CUBLAS_OP_N, GM, GN, GK, &G_ALPHA, d_ga, GK, d_gb, GK, &G_BETA,
                          (double *)kinds[DGEMM].out_dev, GM);
}
static cublasStatus_t call_sgemv(void) {
    return cublasSgemv_v2(handle, CUBLAS_OP_N, VN, VN, &V_ALPHA, d_va, VN, d_vx, 1, &V_BETA,
                          (float *)kinds[SGEMV].out_dev, 1);
}
static cublasStatus_t call_strmv(void) {
    return cublasStrmv_v2(handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, VN, d_ta, VN,
                          (float *)kinds[STRMV].out_dev, 1);
}

/* The output operand's buffers: initial values filled here (random), device copy, result. */
static void alloc_out(struct kind *k, size_t len, int is_double) {
    size_t es = is_double ? sizeof(double) : sizeof(float);
    k->is_double = is_double;
    k->out_len = len;
    k->out_init = xmalloc(len * es);
    k->out_host = xmalloc(len * es);
    k->ref = xmalloc(len * sizeof(double));
    k->scale = xmalloc(len * sizeof(double));
    for (size_t i = 0; i < len; i++) {
        if (is_double)
            ((double *)k->out_init)[i] = urand();
        else
            ((float *)k->out_init)[i] = (float)urand();
    }
    CK(cudaMalloc(&k->out_dev, len * es));
}

static void setup_dgemm(struct kind *k) {
    double *a = xmalloc((size_t)GK * GM * sizeof *a), *b = xmalloc((size_t)GK * GN * sizeof *b);
    for (size_t i = 0; i < (size_t)GK * GM; i++) a[i] = urand();
    for (size_t i = 0; i < (size_t)GK * GN; i++) b[i] = urand();
    alloc_out(k, GM * GN, 1);
    const double *c0 = k->out_init;
    /* C[i,j] = alpha * sum_l A[l,i] B[l,j] + beta C0[i,j]: columns i of A and j of B are contiguous. */
    for (int j = 0; j < GN; j++) {
        const double *bj = b + (size_t)j * GK;
        for (int i = 0; i < GM; i++) {
            const double *ai = a + (size_t)i * GK;
            double s = 0, sa = 0;
            for (size_t l = 0; l < GK; l++) {
                double p = ai[l] * bj[l];
                s += p;
                sa += fabs(p);
            }
            double c = c0[i + j * GM];
            k->ref[i + j * GM] = G_ALPHA * s + G_BETA * c;
            k->scale[i + j * GM] = fabs(G_ALPHA) * sa + fabs(G_BETA * c);
        }
    }
    d_ga = upload(a, (size_t)GK * GM * sizeof *a);
    d_gb = upload(b, (size_t)GK * GN * sizeof *b);
    free(a), free(b);
    k->tol = 1e-9;
}

static void setup_sgemv(struct kind *k) {
    float *a = xmalloc((size_t)VN * VN * sizeof *a), *x = xmalloc(VN * sizeof *x);
    for (size_t i = 0; i < (size_t)VN * VN; i++) a[i] = (float)urand();
    for (size_t i = 0; i < VN; i++) x[i] = (float)urand();
    alloc_out(k, VN, 0);
    const float *y0 = k->out_init;
    double *s = xmalloc(VN * sizeof *s), *sa = xmalloc(VN * sizeof *sa);
    for (size_t i = 0; i < VN; i++) s[i] = sa[i] = 0;
    for (size_t j = 0; j < VN; j++) { /* column by column: A is column-major */
        const float *aj = a + j * VN;
        for (size_t i = 0; i < VN; i++) {
            double p = (double)aj[i] * x[j];
            s[i] += p;
            sa[i] += fabs(p);
        }
    }
    for (size_t i = 0; i < VN; i++) {
        double by = (double)V_BETA * y0[i];
        k->ref[i] = (double)V_ALPHA * s[i] + by;
        k->scale[i] = fabs((double)V_ALPHA) * sa[i] + fabs(by);
    }
    d_va = upload(a, (size_t)VN * VN * sizeof *a);
    d_vx = upload(x, VN * sizeof *x);
    free(a), free(x), free(s), free(sa);
    k->tol = 2e-5;
}

static void setup_strmv(struct kind *k) {
    /* Upper triangle random; the strictly lower part NaN, so a routine that reads it (even to
       multiply by zero) poisons its result and the check fails. */
    float *a = xmalloc((size_t)VN * VN * sizeof *a);
    for (size_t j = 0; j < VN; j++)
        for (size_t i = 0; i < VN; i++) a[i + j * VN] = i <= j ? (float)urand() : NAN;
    alloc_out(k, VN, 0); /* x: input and output */
    const float *x0 = k->out_init;
    for (size_t i = 0; i < VN; i++) k->ref[i] = k->scale[i] = 0;
    for (size_t j = 0; j < VN; j++) { /* x[i] = sum_{j >= i} A[i,j] x0[j] */
        const float *aj = a + j * VN;
        for (size_t i = 0; i <= j; i++) {
            double p = (double)aj[i] * x0[j];
            k->ref[i] += p;
            k->scale[i] += fabs(p);
        }
    }
    d_ta = upload(a, (size_t)VN * VN * sizeof *a);
    free(a);
    k->tol = 2e-5;
}

/* Put the output operand back to its initial values, explicitly, before every call. */
static void restore(const struct kind *k) {
    size_t es = k->is_double ? sizeof(double) : sizeof(float);
    CK(cudaMemcpy(k->out_dev, k->out_init, k->out_len * es, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
}

/* One call, timed from just before the cuBLAS call to just after cudaDeviceSynchronize().
   A failing synchronize after the call (a fault in the routine under test) is a failed check,
   and the context is lost: exit 1. Returns the seconds; *st gets the call's status, *start and
   *end the times it started and finished. */
static double timed_call(const struct kind *k, cublasStatus_t *st, double *start, double *end) {
    double t0 = now_s();
    *st = k->call();
    cudaError_t e = cudaDeviceSynchronize();
    double t1 = now_s();
    if (e != cudaSuccess) {
        printf("FAIL %s: cudaDeviceSynchronize after %s: %s\n", k->name, k->symbol, cudaGetErrorString(e));
        exit(1);
    }
    *start = t0;
    *end = t1;
    return t1 - t0;
}

/* Copy the result back and compare it with the reference; *maxrel gets max |got-ref|/scale
   (infinite for a NaN or a failed status). Returns 1 when within tolerance. */
static int check(const struct kind *k, cublasStatus_t st, double *maxrel) {
    size_t es = k->is_double ? sizeof(double) : sizeof(float);
    CK(cudaMemcpy(k->out_host, k->out_dev, k->out_len * es, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t i = 0; i < k->out_len; i++) {
        double got = k->is_double ? ((const double *)k->out_host)[i] : (double)((const float *)k->out_host)[i];
        double scale = k->scale[i] > 0 ? k->scale[i] : 1e-300;
        double err = fabs(got - k->ref[i]) / scale;
        if (!(err <= INFINITY)) err = INFINITY; /* NaN */
        if (err > worst) worst = err;
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
        printf("# %s: %s returned status %d\n", k->name, k->symbol, (int)st);
        worst = INFINITY;
    }
    *maxrel = worst;
    return worst <= k->tol;
}

/* ---- the trace file ---- */

/* HYBLAS_TRACE when it names a file (the other values trace to stderr or not at all). */
static const char *trace_path(void) {
    const char *t = getenv("HYBLAS_TRACE");
    if (!t || !*t || !strcmp(t, "stderr") || !strcmp(t, "1") || !strcmp(t, "0") || !strcmp(t, "off")) return NULL;
    return t;
}

/* The trace file's size now: the offset where the next call's line will start. (hyblas opens it
   in append mode at its first line, so a missing file is an empty one.) */
static long long trace_size(const char *path) {
    struct stat s;
    return stat(path, &s) == 0 ? (long long)s.st_size : 0;
}

/* In the trace bytes appended since `from`, the last complete line that starts with
   "hyblas: SYMBOL " (other lines, from hyblas's compile thread or other names, are skipped).
   Copied to line[cap]; returns 0 when there is none. */
static int trace_call_line(const char *path, long long from, const char *symbol, char *line, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    if (fseeko(f, (off_t)from, SEEK_SET) != 0) {
        fclose(f);
        return 0;
    }
    char prefix[128];
    snprintf(prefix, sizeof prefix, "hyblas: %s ", symbol);
    size_t plen = strlen(prefix);
    char *buf = NULL;
    size_t bufcap = 0;
    ssize_t n;
    int found = 0;
    while ((n = getline(&buf, &bufcap, f)) > 0) {
        if (buf[n - 1] != '\n') continue; /* incomplete: still being written */
        if (strncmp(buf, prefix, plen) == 0) {
            snprintf(line, cap, "%s", buf);
            line[strlen(line) - 1] = '\n'; /* cut short to cap: still one line when printed */
            found = 1;
        }
    }
    free(buf);
    fclose(f);
    return found;
}

/* " route=hyblas " (or at the end of the line): the call ran on hyblas's kernel. Not
   "route=hyblas->vendor" (hyblas declined, the real cuBLAS ran it) nor "route=vendor". */
static int ran_on_hyblas(const char *line) {
    for (const char *p = line; (p = strstr(p, " route=hyblas")) != NULL; p++) {
        char c = p[strlen(" route=hyblas")];
        if (c == ' ' || c == '\n' || c == '\0') return 1;
    }
    return 0;
}

/* ---- main ---- */

static void usage(void) {
    fprintf(stderr, "usage: first_call [--ready] [--timeout S] [--seed N] KIND...  (KIND: dgemm sgemv strmv)\n");
    exit(2);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    kinds[DGEMM] = (struct kind){.name = "dgemm", .symbol = "cublasDgemm_v2", .call = call_dgemm};
    kinds[SGEMV] = (struct kind){.name = "sgemv", .symbol = "cublasSgemv_v2", .call = call_sgemv};
    kinds[STRMV] = (struct kind){.name = "strmv", .symbol = "cublasStrmv_v2", .call = call_strmv};

    int ready = 0;
    double timeout = 120;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t seed = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
    int order[NKINDS], norder = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--ready")) {
            ready = 1;
        } else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            timeout = strtod(argv[++i], &end);
            if (*end || !(timeout > 0)) usage();
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], &end, 0);
            if (*end) usage();
        } else {
            int found = -1;
            for (int k = 0; k < NKINDS; k++)
                if (!strcmp(argv[i], kinds[k].name)) found = k;
            if (found < 0) {
                fprintf(stderr, "unknown argument %s\n", argv[i]);
                usage();
            }
            if (kinds[found].requested) {
                /* its second "first call" would not be a first call */
                fprintf(stderr, "%s given twice\n", argv[i]);
                usage();
            }
            kinds[found].requested = 1;
            order[norder++] = found;
        }
    }
    if (norder == 0) usage();
    const char *trace = trace_path();
    if (ready && !trace) {
        fprintf(stderr, "--ready needs HYBLAS_TRACE=<file>: the trace line says where each call ran\n");
        return 2;
    }
    printf("# seed %llu\n", (unsigned long long)seed);
    seed_rng(seed);

    /* ---- setup, nothing timed: context, handle, every operand on the device ---- */
    CK(cudaFree(0)); /* creates the CUDA context, so neither timing below pays for it */
    int dev, rtv, drv;
    struct cudaDeviceProp prop;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    CK(cudaRuntimeGetVersion(&rtv));
    CK(cudaDriverGetVersion(&drv));
    printf("# device %s (sm_%d%d), runtime %d, driver %d, cublas.h %d.%d.%d\n", prop.name, prop.major, prop.minor, rtv,
           drv, CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);

    double t0 = now_s();
    CKB(cublasCreate_v2(&handle));
    printf("create %.3f\n", (now_s() - t0) * 1e3);
    /* Host scalars (the default, said explicitly: alpha and beta are host variables). */
    CKB(cublasSetPointerMode_v2(handle, CUBLAS_POINTER_MODE_HOST));

    t0 = now_s();
    if (kinds[DGEMM].requested) setup_dgemm(&kinds[DGEMM]);
    if (kinds[SGEMV].requested) setup_sgemv(&kinds[SGEMV]);
    if (kinds[STRMV].requested) setup_strmv(&kinds[STRMV]);
    CK(cudaDeviceSynchronize());
    printf("# setup (data, CPU references, uploads) %.2f s\n", now_s() - t0);

    int failures = 0;

    /* ---- the first call of each kind ---- */
    long long trace_at[NKINDS] = {0};
    for (int o = 0; o < norder; o++) {
        struct kind *k = &kinds[order[o]];
        restore(k);
        if (trace) trace_at[order[o]] = trace_size(trace); /* where this call's trace line will start */
        cublasStatus_t st;
        double end;
        double secs = timed_call(k, &st, &k->first_start, &end);
        double err;
        int ok = check(k, st, &err);
        printf("first %s %.3f %s %.3g\n", k->name, secs * 1e3, ok ? "ok" : "FAIL", err);
        failures += !ok;
    }
    /* Where the first calls ran (read after all of them, so no timing pays for reading). */
    if (trace) {
        for (int o = 0; o < norder; o++) {
            struct kind *k = &kinds[order[o]];
            char line[4096];
            if (trace_call_line(trace, trace_at[order[o]], k->symbol, line, sizeof line))
                printf("# first %s trace: %s", k->name, line);
            else
                printf("# first %s trace: no 'hyblas: %s' line\n", k->name, k->symbol);
        }
    }

    /* ---- until hyblas's kernel answers ----
       Round robin over the kinds not yet on hyblas, so a kind whose kernel is ready early is not
       held back by the kinds before it; each kind's clock starts at its own first call. */
    if (ready) {
        int calls[NKINDS] = {0}, done[NKINDS] = {0}, pending = norder;
        char last[NKINDS][4096];
        for (int i = 0; i < NKINDS; i++) last[i][0] = '\0';
        while (pending > 0) {
            for (int o = 0; o < norder; o++) {
                int ki = order[o];
                struct kind *k = &kinds[ki];
                if (done[ki]) continue;
                restore(k);
                long long at = trace_size(trace);
                cublasStatus_t st;
                double start, end;
                timed_call(k, &st, &start, &end);
                calls[ki]++;
                double err;
                int ok = check(k, st, &err);
                char line[4096];
                int have = trace_call_line(trace, at, k->symbol, line, sizeof line);
                if (!have) { /* the line is written by the call itself; one grace read all the same */
                    sleep_ms(50);
                    have = trace_call_line(trace, at, k->symbol, line, sizeof line);
                }
                if (!have) {
                    printf("ready %s notrace %d\n", k->name, calls[ki]);
                    printf("# %s: call %d wrote no 'hyblas: %s' line to %s (is libhyblas.so preloaded?)\n", k->name,
                           calls[ki], k->symbol, trace);
                    failures++;
                    done[ki] = 1, pending--;
                    continue;
                }
                snprintf(last[ki], sizeof last[ki], "%s", line);
                if (ran_on_hyblas(line)) {
                    printf("ready %s %.3f %d %s\n", k->name, end - k->first_start, calls[ki], ok ? "ok" : "FAIL");
                    printf("# ready %s trace: %s", k->name, line);
                    if (!ok) printf("# ready %s: max rel err %.3g > %.0e\n", k->name, err, k->tol);
                    failures += !ok;
                    done[ki] = 1, pending--;
                    continue;
                }
                if (!ok) { /* a wrong answer from the vendor route counts too */
                    printf("# ready %s call %d FAIL %.3g: %s", k->name, calls[ki], err, line);
                    failures++;
                }
                if (end - k->first_start > timeout) {
                    printf("ready %s timeout %d\n", k->name, calls[ki]);
                    printf("# ready %s: last trace line: %s", k->name, last[ki]);
                    failures++;
                    done[ki] = 1, pending--;
                }
            }
            if (pending > 0) sleep_ms(10);
        }
    }

    CKB(cublasDestroy_v2(handle));
    printf("# %s: %d failure(s)\n", failures ? "FAILED" : "all passed", failures);
    return failures ? 1 : 0;
}
