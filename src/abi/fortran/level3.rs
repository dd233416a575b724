//! Fortran Level 3 BLAS.
