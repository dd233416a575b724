/*
 * cblas64.h -- the ILP64 CBLAS interface of hyblas: every dimension and increment is int64_t,
 * every symbol carries the suffix `64_` (cblas_dgemm64_), the naming OpenBLAS uses for its
 * 64-bit-integer builds. Enums and CBLAS_INDEX come from cblas.h; both headers may be included
 * in one program, and both interfaces live in the one libhyblas.so.
 *
 * Generated from cblas.h by `scripts/check-headers.sh --write`. Do not edit.
 */
#ifndef HYBLAS_CBLAS64_H
#define HYBLAS_CBLAS64_H

#include "cblas.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
 * Level 1: functions
 * ====================================================================================== */

double cblas_dcabs164_(const void *z);
float cblas_scabs164_(const void *c);

float cblas_sdsdot64_(const int64_t N, const float alpha, const float *X, const int64_t incX, const float *Y, const int64_t incY);
double cblas_dsdot64_(const int64_t N, const float *X, const int64_t incX, const float *Y, const int64_t incY);
float cblas_sdot64_(const int64_t N, const float *X, const int64_t incX, const float *Y, const int64_t incY);
double cblas_ddot64_(const int64_t N, const double *X, const int64_t incX, const double *Y, const int64_t incY);

/* Complex dot products store their result through the last argument. */
void cblas_cdotu_sub64_(const int64_t N, const void *X, const int64_t incX, const void *Y, const int64_t incY, void *dotu);
void cblas_cdotc_sub64_(const int64_t N, const void *X, const int64_t incX, const void *Y, const int64_t incY, void *dotc);
void cblas_zdotu_sub64_(const int64_t N, const void *X, const int64_t incX, const void *Y, const int64_t incY, void *dotu);
void cblas_zdotc_sub64_(const int64_t N, const void *X, const int64_t incX, const void *Y, const int64_t incY, void *dotc);

float cblas_snrm264_(const int64_t N, const float *X, const int64_t incX);
float cblas_sasum64_(const int64_t N, const float *X, const int64_t incX);
double cblas_dnrm264_(const int64_t N, const double *X, const int64_t incX);
double cblas_dasum64_(const int64_t N, const double *X, const int64_t incX);
float cblas_scnrm264_(const int64_t N, const void *X, const int64_t incX);
float cblas_scasum64_(const int64_t N, const void *X, const int64_t incX);
double cblas_dznrm264_(const int64_t N, const void *X, const int64_t incX);
double cblas_dzasum64_(const int64_t N, const void *X, const int64_t incX);

/* 0-based index of the first element of largest |re| + |im| (0 when N <= 0 or incX <= 0). */
CBLAS_INDEX cblas_isamax64_(const int64_t N, const float *X, const int64_t incX);
CBLAS_INDEX cblas_idamax64_(const int64_t N, const double *X, const int64_t incX);
CBLAS_INDEX cblas_icamax64_(const int64_t N, const void *X, const int64_t incX);
CBLAS_INDEX cblas_izamax64_(const int64_t N, const void *X, const int64_t incX);

/* ======================================================================================
 * Level 1: routines
 * ====================================================================================== */

void cblas_sswap64_(const int64_t N, float *X, const int64_t incX, float *Y, const int64_t incY);
void cblas_scopy64_(const int64_t N, const float *X, const int64_t incX, float *Y, const int64_t incY);
void cblas_saxpy64_(const int64_t N, const float alpha, const float *X, const int64_t incX, float *Y, const int64_t incY);

void cblas_dswap64_(const int64_t N, double *X, const int64_t incX, double *Y, const int64_t incY);
void cblas_dcopy64_(const int64_t N, const double *X, const int64_t incX, double *Y, const int64_t incY);
void cblas_daxpy64_(const int64_t N, const double alpha, const double *X, const int64_t incX, double *Y, const int64_t incY);

void cblas_cswap64_(const int64_t N, void *X, const int64_t incX, void *Y, const int64_t incY);
void cblas_ccopy64_(const int64_t N, const void *X, const int64_t incX, void *Y, const int64_t incY);
void cblas_caxpy64_(const int64_t N, const void *alpha, const void *X, const int64_t incX, void *Y, const int64_t incY);

void cblas_zswap64_(const int64_t N, void *X, const int64_t incX, void *Y, const int64_t incY);
void cblas_zcopy64_(const int64_t N, const void *X, const int64_t incX, void *Y, const int64_t incY);
void cblas_zaxpy64_(const int64_t N, const void *alpha, const void *X, const int64_t incX, void *Y, const int64_t incY);

void cblas_srotmg64_(float *d1, float *d2, float *b1, const float b2, float *P);
void cblas_srotm64_(const int64_t N, float *X, const int64_t incX, float *Y, const int64_t incY, const float *P);
void cblas_drotmg64_(double *d1, double *d2, double *b1, const double b2, double *P);
void cblas_drotm64_(const int64_t N, double *X, const int64_t incX, double *Y, const int64_t incY, const double *P);

void cblas_sscal64_(const int64_t N, const float alpha, float *X, const int64_t incX);
void cblas_dscal64_(const int64_t N, const double alpha, double *X, const int64_t incX);
void cblas_cscal64_(const int64_t N, const void *alpha, void *X, const int64_t incX);
void cblas_zscal64_(const int64_t N, const void *alpha, void *X, const int64_t incX);
void cblas_csscal64_(const int64_t N, const float alpha, void *X, const int64_t incX);
void cblas_zdscal64_(const int64_t N, const double alpha, void *X, const int64_t incX);

void cblas_srotg64_(float *a, float *b, float *c, float *s);
void cblas_drotg64_(double *a, double *b, double *c, double *s);
void cblas_crotg64_(void *a, void *b, float *c, void *s);
void cblas_zrotg64_(void *a, void *b, double *c, void *s);

void cblas_srot64_(const int64_t N, float *X, const int64_t incX, float *Y, const int64_t incY, const float c, const float s);
void cblas_drot64_(const int64_t N, double *X, const int64_t incX, double *Y, const int64_t incY, const double c, const double s);
void cblas_csrot64_(const int64_t N, void *X, const int64_t incX, void *Y, const int64_t incY, const float c, const float s);
void cblas_zdrot64_(const int64_t N, void *X, const int64_t incX, void *Y, const int64_t incY, const double c, const double s);

/* ======================================================================================
 * Level 2
 * ====================================================================================== */

void cblas_sgemv64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int64_t M, const int64_t N,
                 const float alpha, const float *A, const int64_t lda, const float *X, const int64_t incX,
                 const float beta, float *Y, const int64_t incY);
void cblas_sgbmv64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int64_t M, const int64_t N,
                 const int64_t KL, const int64_t KU, const float alpha, const float *A, const int64_t lda,
                 const float *X, const int64_t incX, const float beta, float *Y, const int64_t incY);
void cblas_strmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const float *A, const int64_t lda, float *X, const int64_t incX);
void cblas_stbmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const int64_t K, const float *A, const int64_t lda,
                 float *X, const int64_t incX);
void cblas_stpmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const float *Ap, float *X, const int64_t incX);
void cblas_strsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const float *A, const int64_t lda, float *X, const int64_t incX);
void cblas_stbsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const int64_t K, const float *A, const int64_t lda,
                 float *X, const int64_t incX);
void cblas_stpsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const float *Ap, float *X, const int64_t incX);

void cblas_dgemv64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int64_t M, const int64_t N,
                 const double alpha, const double *A, const int64_t lda, const double *X, const int64_t incX,
                 const double beta, double *Y, const int64_t incY);
void cblas_dgbmv64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int64_t M, const int64_t N,
                 const int64_t KL, const int64_t KU, const double alpha, const double *A, const int64_t lda,
                 const double *X, const int64_t incX, const double beta, double *Y, const int64_t incY);
void cblas_dtrmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const double *A, const int64_t lda, double *X, const int64_t incX);
void cblas_dtbmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const int64_t K, const double *A, const int64_t lda,
                 double *X, const int64_t incX);
void cblas_dtpmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const double *Ap, double *X, const int64_t incX);
void cblas_dtrsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const double *A, const int64_t lda, double *X, const int64_t incX);
void cblas_dtbsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const int64_t K, const double *A, const int64_t lda,
                 double *X, const int64_t incX);
void cblas_dtpsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const double *Ap, double *X, const int64_t incX);

void cblas_cgemv64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int64_t M, const int64_t N,
                 const void *alpha, const void *A, const int64_t lda, const void *X, const int64_t incX,
                 const void *beta, void *Y, const int64_t incY);
void cblas_cgbmv64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int64_t M, const int64_t N,
                 const int64_t KL, const int64_t KU, const void *alpha, const void *A, const int64_t lda,
                 const void *X, const int64_t incX, const void *beta, void *Y, const int64_t incY);
void cblas_ctrmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const void *A, const int64_t lda, void *X, const int64_t incX);
void cblas_ctbmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const int64_t K, const void *A, const int64_t lda,
                 void *X, const int64_t incX);
void cblas_ctpmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const void *Ap, void *X, const int64_t incX);
void cblas_ctrsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const void *A, const int64_t lda, void *X, const int64_t incX);
void cblas_ctbsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const int64_t K, const void *A, const int64_t lda,
                 void *X, const int64_t incX);
void cblas_ctpsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const void *Ap, void *X, const int64_t incX);

void cblas_zgemv64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int64_t M, const int64_t N,
                 const void *alpha, const void *A, const int64_t lda, const void *X, const int64_t incX,
                 const void *beta, void *Y, const int64_t incY);
void cblas_zgbmv64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int64_t M, const int64_t N,
                 const int64_t KL, const int64_t KU, const void *alpha, const void *A, const int64_t lda,
                 const void *X, const int64_t incX, const void *beta, void *Y, const int64_t incY);
void cblas_ztrmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const void *A, const int64_t lda, void *X, const int64_t incX);
void cblas_ztbmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const int64_t K, const void *A, const int64_t lda,
                 void *X, const int64_t incX);
void cblas_ztpmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const void *Ap, void *X, const int64_t incX);
void cblas_ztrsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const void *A, const int64_t lda, void *X, const int64_t incX);
void cblas_ztbsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const int64_t K, const void *A, const int64_t lda,
                 void *X, const int64_t incX);
void cblas_ztpsv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_DIAG Diag, const int64_t N, const void *Ap, void *X, const int64_t incX);

void cblas_ssymv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const float alpha,
                 const float *A, const int64_t lda, const float *X, const int64_t incX, const float beta,
                 float *Y, const int64_t incY);
void cblas_ssbmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const int64_t K,
                 const float alpha, const float *A, const int64_t lda, const float *X, const int64_t incX,
                 const float beta, float *Y, const int64_t incY);
void cblas_sspmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const float alpha,
                 const float *Ap, const float *X, const int64_t incX, const float beta, float *Y, const int64_t incY);
void cblas_sger64_(const CBLAS_LAYOUT layout, const int64_t M, const int64_t N, const float alpha, const float *X,
                const int64_t incX, const float *Y, const int64_t incY, float *A, const int64_t lda);
void cblas_ssyr64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const float alpha,
                const float *X, const int64_t incX, float *A, const int64_t lda);
void cblas_sspr64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const float alpha,
                const float *X, const int64_t incX, float *Ap);
void cblas_ssyr264_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const float alpha,
                 const float *X, const int64_t incX, const float *Y, const int64_t incY, float *A, const int64_t lda);
void cblas_sspr264_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const float alpha,
                 const float *X, const int64_t incX, const float *Y, const int64_t incY, float *A);

void cblas_dsymv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const double alpha,
                 const double *A, const int64_t lda, const double *X, const int64_t incX, const double beta,
                 double *Y, const int64_t incY);
void cblas_dsbmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const int64_t K,
                 const double alpha, const double *A, const int64_t lda, const double *X, const int64_t incX,
                 const double beta, double *Y, const int64_t incY);
void cblas_dspmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const double alpha,
                 const double *Ap, const double *X, const int64_t incX, const double beta, double *Y,
                 const int64_t incY);
void cblas_dger64_(const CBLAS_LAYOUT layout, const int64_t M, const int64_t N, const double alpha, const double *X,
                const int64_t incX, const double *Y, const int64_t incY, double *A, const int64_t lda);
void cblas_dsyr64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const double alpha,
                const double *X, const int64_t incX, double *A, const int64_t lda);
void cblas_dspr64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const double alpha,
                const double *X, const int64_t incX, double *Ap);
void cblas_dsyr264_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const double alpha,
                 const double *X, const int64_t incX, const double *Y, const int64_t incY, double *A, const int64_t lda);
void cblas_dspr264_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const double alpha,
                 const double *X, const int64_t incX, const double *Y, const int64_t incY, double *A);

void cblas_chemv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const void *alpha,
                 const void *A, const int64_t lda, const void *X, const int64_t incX, const void *beta,
                 void *Y, const int64_t incY);
void cblas_chbmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const int64_t K,
                 const void *alpha, const void *A, const int64_t lda, const void *X, const int64_t incX,
                 const void *beta, void *Y, const int64_t incY);
void cblas_chpmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const void *alpha,
                 const void *Ap, const void *X, const int64_t incX, const void *beta, void *Y, const int64_t incY);
void cblas_cgeru64_(const CBLAS_LAYOUT layout, const int64_t M, const int64_t N, const void *alpha, const void *X,
                 const int64_t incX, const void *Y, const int64_t incY, void *A, const int64_t lda);
void cblas_cgerc64_(const CBLAS_LAYOUT layout, const int64_t M, const int64_t N, const void *alpha, const void *X,
                 const int64_t incX, const void *Y, const int64_t incY, void *A, const int64_t lda);
void cblas_cher64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const float alpha,
                const void *X, const int64_t incX, void *A, const int64_t lda);
void cblas_chpr64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const float alpha,
                const void *X, const int64_t incX, void *Ap);
void cblas_cher264_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const void *alpha,
                 const void *X, const int64_t incX, const void *Y, const int64_t incY, void *A, const int64_t lda);
void cblas_chpr264_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const void *alpha,
                 const void *X, const int64_t incX, const void *Y, const int64_t incY, void *Ap);

void cblas_zhemv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const void *alpha,
                 const void *A, const int64_t lda, const void *X, const int64_t incX, const void *beta,
                 void *Y, const int64_t incY);
void cblas_zhbmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const int64_t K,
                 const void *alpha, const void *A, const int64_t lda, const void *X, const int64_t incX,
                 const void *beta, void *Y, const int64_t incY);
void cblas_zhpmv64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const void *alpha,
                 const void *Ap, const void *X, const int64_t incX, const void *beta, void *Y, const int64_t incY);
void cblas_zgeru64_(const CBLAS_LAYOUT layout, const int64_t M, const int64_t N, const void *alpha, const void *X,
                 const int64_t incX, const void *Y, const int64_t incY, void *A, const int64_t lda);
void cblas_zgerc64_(const CBLAS_LAYOUT layout, const int64_t M, const int64_t N, const void *alpha, const void *X,
                 const int64_t incX, const void *Y, const int64_t incY, void *A, const int64_t lda);
void cblas_zher64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const double alpha,
                const void *X, const int64_t incX, void *A, const int64_t lda);
void cblas_zhpr64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const double alpha,
                const void *X, const int64_t incX, void *Ap);
void cblas_zher264_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const void *alpha,
                 const void *X, const int64_t incX, const void *Y, const int64_t incY, void *A, const int64_t lda);
void cblas_zhpr264_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const int64_t N, const void *alpha,
                 const void *X, const int64_t incX, const void *Y, const int64_t incY, void *Ap);

/* ======================================================================================
 * Level 3
 * ====================================================================================== */

void cblas_sgemm64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const int64_t M, const int64_t N, const int64_t K, const float alpha, const float *A, const int64_t lda,
                 const float *B, const int64_t ldb, const float beta, float *C, const int64_t ldc);
void cblas_ssymm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int64_t M,
                 const int64_t N, const float alpha, const float *A, const int64_t lda, const float *B, const int64_t ldb,
                 const float beta, float *C, const int64_t ldc);
void cblas_ssyrk64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                 const int64_t K, const float alpha, const float *A, const int64_t lda, const float beta, float *C,
                 const int64_t ldc);
void cblas_ssyr2k64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                  const int64_t K, const float alpha, const float *A, const int64_t lda, const float *B, const int64_t ldb,
                  const float beta, float *C, const int64_t ldc);
void cblas_strmm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int64_t M, const int64_t N,
                 const float alpha, const float *A, const int64_t lda, float *B, const int64_t ldb);
void cblas_strsm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int64_t M, const int64_t N,
                 const float alpha, const float *A, const int64_t lda, float *B, const int64_t ldb);

void cblas_dgemm64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const int64_t M, const int64_t N, const int64_t K, const double alpha, const double *A, const int64_t lda,
                 const double *B, const int64_t ldb, const double beta, double *C, const int64_t ldc);
void cblas_dsymm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int64_t M,
                 const int64_t N, const double alpha, const double *A, const int64_t lda, const double *B, const int64_t ldb,
                 const double beta, double *C, const int64_t ldc);
void cblas_dsyrk64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                 const int64_t K, const double alpha, const double *A, const int64_t lda, const double beta, double *C,
                 const int64_t ldc);
void cblas_dsyr2k64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                  const int64_t K, const double alpha, const double *A, const int64_t lda, const double *B, const int64_t ldb,
                  const double beta, double *C, const int64_t ldc);
void cblas_dtrmm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int64_t M, const int64_t N,
                 const double alpha, const double *A, const int64_t lda, double *B, const int64_t ldb);
void cblas_dtrsm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int64_t M, const int64_t N,
                 const double alpha, const double *A, const int64_t lda, double *B, const int64_t ldb);

void cblas_cgemm64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const int64_t M, const int64_t N, const int64_t K, const void *alpha, const void *A, const int64_t lda,
                 const void *B, const int64_t ldb, const void *beta, void *C, const int64_t ldc);
void cblas_csymm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int64_t M,
                 const int64_t N, const void *alpha, const void *A, const int64_t lda, const void *B, const int64_t ldb,
                 const void *beta, void *C, const int64_t ldc);
void cblas_csyrk64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                 const int64_t K, const void *alpha, const void *A, const int64_t lda, const void *beta, void *C,
                 const int64_t ldc);
void cblas_csyr2k64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                  const int64_t K, const void *alpha, const void *A, const int64_t lda, const void *B, const int64_t ldb,
                  const void *beta, void *C, const int64_t ldc);
void cblas_ctrmm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int64_t M, const int64_t N,
                 const void *alpha, const void *A, const int64_t lda, void *B, const int64_t ldb);
void cblas_ctrsm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int64_t M, const int64_t N,
                 const void *alpha, const void *A, const int64_t lda, void *B, const int64_t ldb);

void cblas_zgemm64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const CBLAS_TRANSPOSE TransB,
                 const int64_t M, const int64_t N, const int64_t K, const void *alpha, const void *A, const int64_t lda,
                 const void *B, const int64_t ldb, const void *beta, void *C, const int64_t ldc);
void cblas_zsymm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int64_t M,
                 const int64_t N, const void *alpha, const void *A, const int64_t lda, const void *B, const int64_t ldb,
                 const void *beta, void *C, const int64_t ldc);
void cblas_zsyrk64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                 const int64_t K, const void *alpha, const void *A, const int64_t lda, const void *beta, void *C,
                 const int64_t ldc);
void cblas_zsyr2k64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                  const int64_t K, const void *alpha, const void *A, const int64_t lda, const void *B, const int64_t ldb,
                  const void *beta, void *C, const int64_t ldc);
void cblas_ztrmm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int64_t M, const int64_t N,
                 const void *alpha, const void *A, const int64_t lda, void *B, const int64_t ldb);
void cblas_ztrsm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int64_t M, const int64_t N,
                 const void *alpha, const void *A, const int64_t lda, void *B, const int64_t ldb);

void cblas_chemm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int64_t M,
                 const int64_t N, const void *alpha, const void *A, const int64_t lda, const void *B, const int64_t ldb,
                 const void *beta, void *C, const int64_t ldc);
void cblas_cherk64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                 const int64_t K, const float alpha, const void *A, const int64_t lda, const float beta, void *C,
                 const int64_t ldc);
void cblas_cher2k64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                  const int64_t K, const void *alpha, const void *A, const int64_t lda, const void *B, const int64_t ldb,
                  const float beta, void *C, const int64_t ldc);

void cblas_zhemm64_(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo, const int64_t M,
                 const int64_t N, const void *alpha, const void *A, const int64_t lda, const void *B, const int64_t ldb,
                 const void *beta, void *C, const int64_t ldc);
void cblas_zherk64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                 const int64_t K, const double alpha, const void *A, const int64_t lda, const double beta, void *C,
                 const int64_t ldc);
void cblas_zher2k64_(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo, const CBLAS_TRANSPOSE Trans, const int64_t N,
                  const int64_t K, const void *alpha, const void *A, const int64_t lda, const void *B, const int64_t ldb,
                  const double beta, void *C, const int64_t ldc);

/* ======================================================================================
 * Batched GEMM (oneMKL's extension, also in OpenBLAS 0.3.27+; not in the reference CBLAS)
 * ======================================================================================
 * Groups of products: group g has group_size[g] products of one shape and one transa[g],
 * transb[g], alpha[g], beta[g]; the pointer arrays hold one entry per product, groups one after
 * the other. Strided: batch_size products, operand i at A + i*stridea (and so on). Bad
 * arguments are reported as oneMKL reports them (docs/batched.md); nothing runs then.
 */
void cblas_sgemm_batch64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE *transa_array,
                       const CBLAS_TRANSPOSE *transb_array, const int64_t *m_array, const int64_t *n_array,
                       const int64_t *k_array, const float *alpha_array, const float **a_array,
                       const int64_t *lda_array, const float **b_array, const int64_t *ldb_array,
                       const float *beta_array, float **c_array, const int64_t *ldc_array,
                       const int64_t group_count, const int64_t *group_size);
void cblas_dgemm_batch64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE *transa_array,
                       const CBLAS_TRANSPOSE *transb_array, const int64_t *m_array, const int64_t *n_array,
                       const int64_t *k_array, const double *alpha_array, const double **a_array,
                       const int64_t *lda_array, const double **b_array, const int64_t *ldb_array,
                       const double *beta_array, double **c_array, const int64_t *ldc_array,
                       const int64_t group_count, const int64_t *group_size);
void cblas_cgemm_batch64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE *transa_array,
                       const CBLAS_TRANSPOSE *transb_array, const int64_t *m_array, const int64_t *n_array,
                       const int64_t *k_array, const void *alpha_array, const void **a_array,
                       const int64_t *lda_array, const void **b_array, const int64_t *ldb_array,
                       const void *beta_array, void **c_array, const int64_t *ldc_array,
                       const int64_t group_count, const int64_t *group_size);
void cblas_zgemm_batch64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE *transa_array,
                       const CBLAS_TRANSPOSE *transb_array, const int64_t *m_array, const int64_t *n_array,
                       const int64_t *k_array, const void *alpha_array, const void **a_array,
                       const int64_t *lda_array, const void **b_array, const int64_t *ldb_array,
                       const void *beta_array, void **c_array, const int64_t *ldc_array,
                       const int64_t group_count, const int64_t *group_size);
void cblas_sgemm_batch_strided64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                               const CBLAS_TRANSPOSE transb, const int64_t m, const int64_t n, const int64_t k,
                               const float alpha, const float *a, const int64_t lda, const int64_t stridea,
                               const float *b, const int64_t ldb, const int64_t strideb, const float beta,
                               float *c, const int64_t ldc, const int64_t stridec, const int64_t batch_size);
void cblas_dgemm_batch_strided64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                               const CBLAS_TRANSPOSE transb, const int64_t m, const int64_t n, const int64_t k,
                               const double alpha, const double *a, const int64_t lda, const int64_t stridea,
                               const double *b, const int64_t ldb, const int64_t strideb, const double beta,
                               double *c, const int64_t ldc, const int64_t stridec, const int64_t batch_size);
void cblas_cgemm_batch_strided64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                               const CBLAS_TRANSPOSE transb, const int64_t m, const int64_t n, const int64_t k,
                               const void *alpha, const void *a, const int64_t lda, const int64_t stridea,
                               const void *b, const int64_t ldb, const int64_t strideb, const void *beta,
                               void *c, const int64_t ldc, const int64_t stridec, const int64_t batch_size);
void cblas_zgemm_batch_strided64_(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE transa,
                               const CBLAS_TRANSPOSE transb, const int64_t m, const int64_t n, const int64_t k,
                               const void *alpha, const void *a, const int64_t lda, const int64_t stridea,
                               const void *b, const int64_t ldb, const int64_t strideb, const void *beta,
                               void *c, const int64_t ldc, const int64_t stridec, const int64_t batch_size);

#ifdef __cplusplus
}
#endif

#endif /* HYBLAS_CBLAS64_H */
