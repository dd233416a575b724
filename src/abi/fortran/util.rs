//! Small helpers shared by the Fortran wrappers.

use crate::abi::xerbla;
use crate::types::FInt;
use std::os::raw::c_char;

/// Report argument `info` of routine `name` (lower-case, no suffix) through the caller's
/// xerbla of this integer width.
#[inline(never)]
#[cold]
pub fn report<I: FInt>(name: &str, info: isize) {
    xerbla::fortran::<I>(name, info);
}

/// `LSAME`: case-insensitive comparison of the first characters.
///
/// # Safety
/// Both pointers must point to at least one readable byte.
#[no_mangle]
pub unsafe extern "C" fn lsame_(ca: *const c_char, cb: *const c_char, _la: usize, _lb: usize) -> i32 {
    ((*ca as u8).eq_ignore_ascii_case(&(*cb as u8))) as i32
}

/// ILP64 `LSAME` (LOGICAL*8 result).
///
/// # Safety
/// Both pointers must point to at least one readable byte.
#[no_mangle]
pub unsafe extern "C" fn lsame_64_(ca: *const c_char, cb: *const c_char, _la: usize, _lb: usize) -> i64 {
    ((*ca as u8).eq_ignore_ascii_case(&(*cb as u8))) as i64
}
