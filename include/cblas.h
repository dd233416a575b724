/*
 * cblas.h -- the CBLAS interface of hyblas (LP64: every dimension and increment is a C int).
 *
 * Source-compatible with the reference CBLAS header of LAPACK 3.11: the same 149 functions
 * (including the `_sub` forms of the dot products and cblas_xerbla), the same enum values,
 * CBLAS_INDEX = size_t. Both enum spellings work: `CBLAS_LAYOUT` / `enum CBLAS_LAYOUT` and the
 * older `CBLAS_ORDER` / `enum CBLAS_ORDER`. The enum parameters are int-sized, so a plain int
 * holding 101, 111, ... may be passed (in C directly, in C++ with a cast).
 *
 * The ILP64 twins (int64_t dimensions, symbols `cblas_dgemm64_` ...) are declared in cblas64.h.
 * The Fortran ABI (dgemm_, dgemm_64_ ...) has no header: declare what you call, with every
 * argument by pointer, gfortran conventions (COMPLEX functions return by value).
 *
 * Complex scalars and arrays are passed as `void *` pointing at interleaved (re, im) pairs of
 * float (c) or double (z), as in the reference header.
 */
#ifndef CBLAS_H
#define CBLAS_H

#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Index type returned by cblas_i?amax. */
#define CBLAS_INDEX size_t

/* The integer type of this header's prototypes, for code written against the reference
 * header. Defining CBLAS_INT differently does not change the prototypes below (they stay
 * LP64): use cblas64.h for 64-bit integers. */
#ifndef CBLAS_INT
#define CBLAS_INT int32_t
#endif
#ifndef CBLAS_IFMT
#define CBLAS_IFMT PRId32
#endif

typedef enum CBLAS_LAYOUT { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_LAYOUT;
typedef enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 } CBLAS_TRANSPOSE;
typedef enum CBLAS_UPLO { CblasUpper = 121, CblasLower = 122 } CBLAS_UPLO;
typedef enum CBLAS_DIAG { CblasNonUnit = 131, CblasUnit = 132 } CBLAS_DIAG;
typedef enum CBLAS_SIDE { CblasLeft = 141, CblasRight = 142 } CBLAS_SIDE;

/* Pre-3.6 name of CBLAS_LAYOUT: `CBLAS_ORDER` and `enum CBLAS_ORDER` both name the type above. */
#define CBLAS_ORDER CBLAS_LAYOUT

/* ======================================================================================
 * Level 1: functions
 * ====================================================================================== */

double cblas_dcabs1(const void *z);
float cblas_scabs1(const void *c);

float cblas_sdsdot(const int N, const float alpha, const float *X, const int incX, const float *Y, const int incY);
double cblas_dsdot(const int N, const float *X, const int incX, const float *Y, const int incY);
float cblas_sdot(const int N, const float *X, const int incX, const float *Y, const int incY);
double cblas_ddot(const int N, const double *X, const int incX, const double *Y, const int incY);

/* Complex dot products store their result through the last argument. */
void cblas_cdotu_sub(const int N, const void *X, const int incX, const void *Y, const int incY, void *dotu);
void cblas_cdotc_sub(const int N, const void *X, const int incX, const void *Y, const int incY, void *dotc);
void cblas_zdotu_sub(const int N, const void *X, const int incX, const void *Y, const int incY, void *dotu);
void cblas_zdotc_sub(const int N, const void *X, const int incX, const void *Y, const int incY, void *dotc);

float cblas_snrm2(const int N, const float *X, const int incX);
float cblas_sasum(const int N, const float *X, const int incX);
double cblas_dnrm2(const int N, const double *X, const int incX);
double cblas_dasum(const int N, const double *X, const int incX);
float cblas_scnrm2(const int N, const void *X, const int incX);
float cblas_scasum(const int N, const void *X, const int incX);
double cblas_dznrm2(const int N, const void *X, const int incX);
double cblas_dzasum(const int N, const void *X, const int incX);

/* 0-based index of the first element of largest |re| + |im| (0 when N <= 0 or incX <= 0). */
CBLAS_INDEX cblas_isamax(const int N, const float *X, const int incX);
CBLAS_INDEX cblas_idamax(const int N, const double *X, const int incX);
CBLAS_INDEX cblas_icamax(const int N, const void *X, const int incX);
CBLAS_INDEX cblas_izamax(const int N, const void *X, const int incX);

/* ======================================================================================
 * Level 1: routines
 * ====================================================================================== */

void cblas_sswap(const int N, float *X, const int incX, float *Y, const int incY);
void cblas_scopy(const int N, const float *X, const int incX, float *Y, const int incY);
void cblas_saxpy(const int N, const float alpha, const float *X, const int incX, float *Y, const int incY);

void cblas_dswap(const int N, double *X, const int incX, double *Y, const int incY);
void cblas_dcopy(const int N, const double *X, const int incX, double *Y, const int incY);
void cblas_daxpy(const int N, const double alpha, const double *X, const int incX, double *Y, const int incY);

void cblas_cswap(const int N, void *X, const int incX, void *Y, const int incY);
void cblas_ccopy(const int N, const void *X, const int incX, void *Y, const int incY);
void cblas_caxpy(const int N, const void *alpha, const void *X, const int incX, void *Y, const int incY);

void cblas_zswap(const int N, void *X, const int incX, void *Y, const int incY);
void cblas_zcopy(const int N, const void *X, const int incX, void *Y, const int incY);
void cblas_zaxpy(const int N, const void *alpha, const void *X, const int incX, void *Y, const int incY);

void cblas_srotmg(float *d1, float *d2, float *b1, const float b2, float *P);
void cblas_srotm(const int N, float *X, const int incX, float *Y, const int incY, const float *P);
void cblas_drotmg(double *d1, double *d2, double *b1, const double b2, double *P);
void cblas_drotm(const int N, double *X, const int incX, double *Y, const int incY, const double *P);

void cblas_sscal(const int N, const float alpha, float *X, const int incX);
void cblas_dscal(const int N, const double alpha, double *X, const int incX);
void cblas_cscal(const int N, const void *alpha, void *X, const int incX);
void cblas_zscal(const int N, const void *alpha, void *X, const int incX);
void cblas_csscal(const int N, const float alpha, void *X, const int incX);
void cblas_zdscal(const int N, const double alpha, void *X, const int incX);

void cblas_srotg(float *a, float *b, float *c, float *s);
void cblas_drotg(double *a, double *b, double *c, double *s);
void cblas_crotg(void *a, void *b, float *c, void *s);
void cblas_zrotg(void *a, void *b, double *c, void *s);

void cblas_srot(const int N, float *X, const int incX, float *Y, const int incY, const float c, const float s);
void cblas_drot(const int N, double *X, const int incX, double *Y, const int incY, const double c, const double s);
void cblas_csrot(const int N, void *X, const int incX, void *Y, const int incY, const float c, const float s);
void cblas_zdrot(const int N, void *X, const int incX, void *Y, const int incY, const double c, const double s);

/* ======================================================================================
 * Level 2
 * ====================================================================================== */

void cblas_sgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const float alpha, const float *A, const int lda, const float *X, const int incX,
                 const float beta, float *Y, const int incY);
void cblas_sgbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const int KL, const int KU, const float alpha, const float *A, const int lda,
                 const float *X, const int incX, const float beta, float *Y, const int incY);
void cblas_strmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const float *A, const int lda, float *X, const int incX);
void cblas_stbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const int K, const float *A, const int lda,
                 float *X, const int incX);
void cblas_stpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const float *Ap, float *X, const int incX);
void cblas_strsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const float *A, const int lda, float *X, const int incX);
void cblas_stbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const int K, const float *A, const int lda,
                 float *X, const int incX);
void cblas_stpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const float *Ap, float *X, const int incX);

void cblas_dgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const double alpha, const double *A, const int lda, const double *X, const int incX,
                 const double beta, double *Y, const int incY);
void cblas_dgbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const int KL, const int KU, const double alpha, const double *A, const int lda,
                 const double *X, const int incX, const double beta, double *Y, const int incY);
void cblas_dtrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const double *A, const int lda, double *X, const int incX);
void cblas_dtbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const int K, const double *A, const int lda,
                 double *X, const int incX);
void cblas_dtpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const double *Ap, double *X, const int incX);
void cblas_dtrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const double *A, const int lda, double *X, const int incX);
void cblas_dtbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const int K, const double *A, const int lda,
                 double *X, const int incX);
void cblas_dtpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const double *Ap, double *X, const int incX);

void cblas_cgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const void *alpha, const void *A, const int lda, const void *X, const int incX,
                 const void *beta, void *Y, const int incY);
void cblas_cgbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const int KL, const int KU, const void *alpha, const void *A, const int lda,
                 const void *X, const int incX, const void *beta, void *Y, const int incY);
void cblas_ctrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void *A, const int lda, void *X, const int incX);
void cblas_ctbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const int K, const void *A, const int lda,
                 void *X, const int incX);
void cblas_ctpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void *Ap, void *X, const int incX);
void cblas_ctrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void *A, const int lda, void *X, const int incX);
void cblas_ctbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const int K, const void *A, const int lda,
                 void *X, const int incX);
void cblas_ctpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void *Ap, void *X, const int incX);

void cblas_zgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const void *alpha, const void *A, const int lda, const void *X, const int incX,
                 const void *beta, void *Y, const int incY);
void cblas_zgbmv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M, const int N,
                 const int KL, const int KU, const void *alpha, const void *A, const int lda,
                 const void *X, const int incX, const void *beta, void *Y, const int incY);
void cblas_ztrmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void *A, const int lda, void *X, const int incX);
void cblas_ztbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const int K, const void *A, const int lda,
                 void *X, const int incX);
void cblas_ztpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void *Ap, void *X, const int incX);
void cblas_ztrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void *A, const int lda, void *X, const int incX);
void cblas_ztbsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const int K, const void *A, const int lda,
                 void *X, const int incX);
void cblas_ztpsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int N, const void *Ap, void *X, const int incX);

void cblas_ssymv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                 const float *A, const int lda, const float *X, const int incX, const float beta,
                 float *Y, const int incY);
void cblas_ssbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const int K,
                 const float alpha, const float *A, const int lda, const float *X, const int incX,
                 const float beta, float *Y, const int incY);
void cblas_sspmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                 const float *Ap, const float *X, const int incX, const float beta, float *Y, const int incY);
void cblas_sger(const CBLAS_LAYOUT layout, const int M, const int N, const float alpha, const float *X,
                const int incX, const float *Y, const int incY, float *A, const int lda);
void cblas_ssyr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                const float *X, const int incX, float *A, const int lda);
void cblas_sspr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                const float *X, const int incX, float *Ap);
void cblas_ssyr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                 const float *X, const int incX, const float *Y, const int incY, float *A, const int lda);
void cblas_sspr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                 const float *X, const int incX, const float *Y, const int incY, float *A);

void cblas_dsymv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                 const double *A, const int lda, const double *X, const int incX, const double beta,
                 double *Y, const int incY);
void cblas_dsbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const int K,
                 const double alpha, const double *A, const int lda, const double *X, const int incX,
                 const double beta, double *Y, const int incY);
void cblas_dspmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                 const double *Ap, const double *X, const int incX, const double beta, double *Y,
                 const int incY);
void cblas_dger(const CBLAS_LAYOUT layout, const int M, const int N, const double alpha, const double *X,
                const int incX, const double *Y, const int incY, double *A, const int lda);
void cblas_dsyr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                const double *X, const int incX, double *A, const int lda);
void cblas_dspr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                const double *X, const int incX, double *Ap);
void cblas_dsyr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                 const double *X, const int incX, const double *Y, const int incY, double *A, const int lda);
void cblas_dspr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                 const double *X, const int incX, const double *Y, const int incY, double *A);

void cblas_chemv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void *alpha,
                 const void *A, const int lda, const void *X, const int incX, const void *beta,
                 void *Y, const int incY);
void cblas_chbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const int K,
                 const void *alpha, const void *A, const int lda, const void *X, const int incX,
                 const void *beta, void *Y, const int incY);
void cblas_chpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void *alpha,
                 const void *Ap, const void *X, const int incX, const void *beta, void *Y, const int incY);
void cblas_cgeru(const CBLAS_LAYOUT layout, const int M, const int N, const void *alpha, const void *X,
                 const int incX, const void *Y, const int incY, void *A, const int lda);
void cblas_cgerc(const CBLAS_LAYOUT layout, const int M, const int N, const void *alpha, const void *X,
                 const int incX, const void *Y, const int incY, void *A, const int lda);
void cblas_cher(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                const void *X, const int incX, void *A, const int lda);
void cblas_chpr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const float alpha,
                const void *X, const int incX, void *Ap);
void cblas_cher2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void *alpha,
                 const void *X, const int incX, const void *Y, const int incY, void *A, const int lda);
void cblas_chpr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void *alpha,
                 const void *X, const int incX, const void *Y, const int incY, void *Ap);

void cblas_zhemv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void *alpha,
                 const void *A, const int lda, const void *X, const int incX, const void *beta,
                 void *Y, const int incY);
void cblas_zhbmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const int K,
                 const void *alpha, const void *A, const int lda, const void *X, const int incX,
                 const void *beta, void *Y, const int incY);
void cblas_zhpmv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void *alpha,
                 const void *Ap, const void *X, const int incX, const void *beta, void *Y, const int incY);
void cblas_zgeru(const CBLAS_LAYOUT layout, const int M, const int N, const void *alpha, const void *X,
                 const int incX, const void *Y, const int incY, void *A, const int lda);
void cblas_zgerc(const CBLAS_LAYOUT layout, const int M, const int N, const void *alpha, const void *X,
                 const int incX, const void *Y, const int incY, void *A, const int lda);
void cblas_zher(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                const void *X, const int incX, void *A, const int lda);
void cblas_zhpr(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const double alpha,
                const void *X, const int incX, void *Ap);
void cblas_zher2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void *alpha,
                 const void *X, const int incX, const void *Y, const int incY, void *A, const int lda);
void cblas_zhpr2(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int N, const void *alpha,
                 const void *X, const int incX, const void *Y, const int incY, void *Ap);

/* ======================================================================================
 * Level 3
 * ====================================================================================== */

void cblas_sgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const int M, const int N, const int K, const float alpha, const float *A, const int lda,
                 const float *B, const int ldb, const float beta, float *C, const int ldc);
void cblas_ssymm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int M,
                 const int N, const float alpha, const float *A, const int lda, const float *B, const int ldb,
                 const float beta, float *C, const int ldc);
void cblas_ssyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                 const int K, const float alpha, const float *A, const int lda, const float beta, float *C,
                 const int ldc);
void cblas_ssyr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                  const int K, const float alpha, const float *A, const int lda, const float *B, const int ldb,
                  const float beta, float *C, const int ldc);
void cblas_strmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const float alpha, const float *A, const int lda, float *B, const int ldb);
void cblas_strsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const float alpha, const float *A, const int lda, float *B, const int ldb);

void cblas_dgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const int M, const int N, const int K, const double alpha, const double *A, const int lda,
                 const double *B, const int ldb, const double beta, double *C, const int ldc);
void cblas_dsymm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int M,
                 const int N, const double alpha, const double *A, const int lda, const double *B, const int ldb,
                 const double beta, double *C, const int ldc);
void cblas_dsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                 const int K, const double alpha, const double *A, const int lda, const double beta, double *C,
                 const int ldc);
void cblas_dsyr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                  const int K, const double alpha, const double *A, const int lda, const double *B, const int ldb,
                  const double beta, double *C, const int ldc);
void cblas_dtrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const double alpha, const double *A, const int lda, double *B, const int ldb);
void cblas_dtrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const double alpha, const double *A, const int lda, double *B, const int ldb);

void cblas_cgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const int M, const int N, const int K, const void *alpha, const void *A, const int lda,
                 const void *B, const int ldb, const void *beta, void *C, const int ldc);
void cblas_csymm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int M,
                 const int N, const void *alpha, const void *A, const int lda, const void *B, const int ldb,
                 const void *beta, void *C, const int ldc);
void cblas_csyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                 const int K, const void *alpha, const void *A, const int lda, const void *beta, void *C,
                 const int ldc);
void cblas_csyr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                  const int K, const void *alpha, const void *A, const int lda, const void *B, const int ldb,
                  const void *beta, void *C, const int ldc);
void cblas_ctrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const void *alpha, const void *A, const int lda, void *B, const int ldb);
void cblas_ctrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const void *alpha, const void *A, const int lda, void *B, const int ldb);

void cblas_zgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const int M, const int N, const int K, const void *alpha, const void *A, const int lda,
                 const void *B, const int ldb, const void *beta, void *C, const int ldc);
void cblas_zsymm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int M,
                 const int N, const void *alpha, const void *A, const int lda, const void *B, const int ldb,
                 const void *beta, void *C, const int ldc);
void cblas_zsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                 const int K, const void *alpha, const void *A, const int lda, const void *beta, void *C,
                 const int ldc);
void cblas_zsyr2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                  const int K, const void *alpha, const void *A, const int lda, const void *B, const int ldb,
                  const void *beta, void *C, const int ldc);
void cblas_ztrmm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const void *alpha, const void *A, const int lda, void *B, const int ldb);
void cblas_ztrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M, const int N,
                 const void *alpha, const void *A, const int lda, void *B, const int ldb);

void cblas_chemm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int M,
                 const int N, const void *alpha, const void *A, const int lda, const void *B, const int ldb,
                 const void *beta, void *C, const int ldc);
void cblas_cherk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                 const int K, const float alpha, const void *A, const int lda, const float beta, void *C,
                 const int ldc);
void cblas_cher2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                  const int K, const void *alpha, const void *A, const int lda, const void *B, const int ldb,
                  const float beta, void *C, const int ldc);

void cblas_zhemm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int M,
                 const int N, const void *alpha, const void *A, const int lda, const void *B, const int ldb,
                 const void *beta, void *C, const int ldc);
void cblas_zherk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                 const int K, const double alpha, const void *A, const int lda, const double beta, void *C,
                 const int ldc);
void cblas_zher2k(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int N,
                  const int K, const void *alpha, const void *A, const int lda, const void *B, const int ldb,
                  const double beta, void *C, const int ldc);

/* ======================================================================================
 * Batched GEMM (oneMKL's extension, also in OpenBLAS 0.3.27+; not in the reference CBLAS)
 * ======================================================================================
 * Groups of products: group g has group_size[g] products of one shape and one transa[g],
 * transb[g], alpha[g], beta[g]; the pointer arrays hold one entry per product, groups one after
 * the other. Strided: batch_size products, operand i at A + i*stridea (and so on). Bad
 * arguments are reported as oneMKL reports them (docs/batched.md); nothing runs then.
 */
void cblas_sgemm_batch(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE *transa_array,
                       const CBLAS_TRANSPOSE *transb_array, const int *m_array, const int *n_array,
                       const int *k_array, const float *alpha_array, const float **a_array,
                       const int *lda_array, const float **b_array, const int *ldb_array,
                       const float *beta_array, float **c_array, const int *ldc_array,
                       const int group_count, const int *group_size);
void cblas_dgemm_batch(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE *transa_array,
                       const CBLAS_TRANSPOSE *transb_array, const int *m_array, const int *n_array,
                       const int *k_array, const double *alpha_array, const double **a_array,
                       const int *lda_array, const double **b_array, const int *ldb_array,
                       const double *beta_array, double **c_array, const int *ldc_array,
                       const int group_count, const int *group_size);
void cblas_cgemm_batch(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE *transa_array,
                       const CBLAS_TRANSPOSE *transb_array, const int *m_array, const int *n_array,
                       const int *k_array, const void *alpha_array, const void **a_array,
                       const int *lda_array, const void **b_array, const int *ldb_array,
                       const void *beta_array, void **c_array, const int *ldc_array,
                       const int group_count, const int *group_size);
void cblas_zgemm_batch(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE *transa_array,
                       const CBLAS_TRANSPOSE *transb_array, const int *m_array, const int *n_array,
                       const int *k_array, const void *alpha_array, const void **a_array,
                       const int *lda_array, const void **b_array, const int *ldb_array,
                       const void *beta_array, void **c_array, const int *ldc_array,
                       const int group_count, const int *group_size);
void cblas_sgemm_batch_strided(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                               const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                               const float alpha, const float *a, const int lda, const int stridea,
                               const float *b, const int ldb, const int strideb, const float beta,
                               float *c, const int ldc, const int stridec, const int batch_size);
void cblas_dgemm_batch_strided(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                               const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                               const double alpha, const double *a, const int lda, const int stridea,
                               const double *b, const int ldb, const int strideb, const double beta,
                               double *c, const int ldc, const int stridec, const int batch_size);
void cblas_cgemm_batch_strided(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                               const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                               const void *alpha, const void *a, const int lda, const int stridea,
                               const void *b, const int ldb, const int strideb, const void *beta,
                               void *c, const int ldc, const int stridec, const int batch_size);
void cblas_zgemm_batch_strided(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                               const CBLAS_TRANSPOSE transb, const int m, const int n, const int k,
                               const void *alpha, const void *a, const int lda, const int stridea,
                               const void *b, const int ldb, const int strideb, const void *beta,
                               void *c, const int ldc, const int stridec, const int batch_size);

/* ======================================================================================
 * Error handler
 * ======================================================================================
 * Called with the 1-based position of the first illegal argument and the routine name, e.g.
 * (4, "cblas_dgemm", ...) for a column-major call with M < 0. Numbering follows the reference
 * CBLAS: a row-major call is checked as the column-major problem it maps to, so positions of
 * swapped arguments (gemm M/N, LDA/LDB, ...) come swapped, as they do from the reference.
 * hyblas' own definition prints a message and returns; a program may define its own
 * cblas_xerbla, which then receives every CBLAS error report. */
void cblas_xerbla(int p, const char *rout, const char *form, ...);

#ifdef __cplusplus
}
#endif

#endif /* CBLAS_H */
