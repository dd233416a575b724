//! Fortran Level 2 BLAS.
