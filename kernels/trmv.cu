// TRMV kernels (every uplo/trans/diag). (Filled in by the TRMV work.)
