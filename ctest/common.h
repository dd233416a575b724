/* Shared helpers of the C test programs: a reproducible random generator, NaN poisoning,
 * tolerance checks and a failure counter. Header-only; every program includes it once. */
#ifndef HYBLAS_CTEST_COMMON_H
#define HYBLAS_CTEST_COMMON_H

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond, ...)                                          \
    do {                                                          \
        g_checks++;                                               \
        if (!(cond)) {                                            \
            g_failures++;                                         \
            fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                         \
            fprintf(stderr, "\n");                                \
        }                                                         \
    } while (0)

/* Print the summary and give the exit status (0 only if every check held and there was one). */
static inline int finish(const char *prog) {
    if (g_failures == 0 && g_checks > 0) {
        printf("%s: all %d checks passed\n", prog, g_checks);
        return 0;
    }
    printf("%s: %d of %d checks FAILED\n", prog, g_failures, g_checks);
    return 1;
}

/* xorshift64*: the same numbers on every platform, unlike rand(). */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static inline double urand(void) { /* uniform in [-1, 1) */
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return (double)((g_rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static inline void fill_d(double *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = urand();
}
static inline void fill_s(float *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (float)urand();
}
static inline void fill_z(double complex *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double re = urand(), im = urand();
        p[i] = CMPLX(re, im);
    }
}
static inline void fill_c(float complex *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float re = (float)urand(), im = (float)urand();
        p[i] = CMPLXF(re, im);
    }
}
static inline void poison_d(double *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = NAN;
}
static inline void poison_z(double complex *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = CMPLX(NAN, NAN);
}

/* |got - want| small against the size of the computation (`scale` bounds the magnitude of
 * the terms summed, `terms` their number). */
static inline int close_d(double got, double want, double scale, int terms) {
    return fabs(got - want) <= 8.0 * DBL_EPSILON * (terms + 1) * (scale + fabs(want)) + DBL_MIN;
}
static inline int close_s(double got, double want, double scale, int terms) {
    return fabs(got - want) <= 8.0 * FLT_EPSILON * (terms + 1) * (scale + fabs(want)) + FLT_MIN;
}
static inline int close_z(double complex got, double complex want, double scale, int terms) {
    return cabs(got - want) <= 8.0 * DBL_EPSILON * (terms + 1) * (scale + cabs(want)) + DBL_MIN;
}
static inline int close_c(float complex got, float complex want, double scale, int terms) {
    return cabs((double complex)got - (double complex)want) <=
           8.0 * FLT_EPSILON * (terms + 1) * (scale + cabs((double complex)want)) + FLT_MIN;
}

/* Allocate or die: the tests are small, a failure here is an environment problem. */
static inline void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

#endif
