//! Fortran BLAS ABI, LP64 (`name_`, INTEGER*4) and ILP64 (`name_64_`, INTEGER*8).
//!
//! Each `levelN.rs` holds one generic wrapper per routine, `fn axpy<T: Scalar, I: FInt>(...)`,
//! and a macro that stamps out the exported symbols for one integer width; the macro is
//! invoked once with `(i32, "_")` and once with `(i64, "_64_")`.
//!
//! Validation helpers (`check_*`) live beside the wrappers and are shared with CBLAS, which
//! maps its arguments onto the Fortran argument order first.

pub mod level1;
pub mod level2;
pub mod level3;
pub mod level3_tri;
pub mod util;
