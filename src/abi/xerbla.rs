//! Error reporting as reference BLAS does it: `xerbla_` for the Fortran ABI (and `xerbla_64_`
//! for ILP64), `cblas_xerbla` for CBLAS.
//!
//! Callers (LAPACK, the netlib test programs, applications) often define their own `xerbla_`
//! and `cblas_xerbla`. A Rust call to our own definition would bind directly and bypass theirs,
//! so errors are raised through `dlsym(RTLD_DEFAULT, ...)`: the first definition in the
//! process's global lookup order wins, exactly as a C library's PLT call would. Our own
//! definitions only print the reference message and *return* (like OpenBLAS; never exit).

use crate::types::FInt;
use once_cell::sync::OnceCell;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

type FortranXerbla32 = unsafe extern "C" fn(*const c_char, *const i32, usize);
type FortranXerbla64 = unsafe extern "C" fn(*const c_char, *const i64, usize);
type CblasXerbla = unsafe extern "C" fn(c_int, *const c_char, *const c_char, ...);

fn lookup(name: &CStr) -> usize {
    // SAFETY: dlsym with a NUL-terminated name is always safe to call.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
}

static XERBLA32: OnceCell<usize> = OnceCell::new();
static XERBLA64: OnceCell<usize> = OnceCell::new();
static CBLAS_XERBLA: OnceCell<usize> = OnceCell::new();

/// Pad a routine name to the 6 characters reference BLAS passes (`"DGEMM "`).
fn padded(name: &str) -> Vec<u8> {
    let mut v: Vec<u8> = name.bytes().map(|b| b.to_ascii_uppercase()).collect();
    while v.len() < 6 {
        v.push(b' ');
    }
    v.push(0);
    v
}

/// Report a bad argument of a Fortran-ABI routine. `name` is the routine's name without
/// suffix (`"dgemm"`); `info` the 1-based position of the first bad argument.
pub fn fortran<I: FInt>(name: &str, info: isize) {
    let buf = padded(name);
    let len = buf.len() - 1;
    // SAFETY: the looked-up symbol is a BLAS xerbla with the reference signature; if the
    // process has none (library dlopen'ed locally), fall back to our own.
    unsafe {
        if I::SUFFIX == "_" {
            let f = *XERBLA32.get_or_init(|| lookup(c"xerbla_"));
            let f: FortranXerbla32 = if f != 0 { std::mem::transmute::<usize, FortranXerbla32>(f) } else { xerbla_ };
            let info = info as i32;
            f(buf.as_ptr() as *const c_char, &info, len);
        } else {
            let f = *XERBLA64.get_or_init(|| lookup(c"xerbla_64_"));
            let f: FortranXerbla64 = if f != 0 { std::mem::transmute::<usize, FortranXerbla64>(f) } else { xerbla_64_ };
            let info = info as i64;
            f(buf.as_ptr() as *const c_char, &info, len);
        }
    }
}

/// Report a bad argument of a CBLAS routine. `name` is the full name (`"cblas_dgemm"`).
pub fn cblas(name: &str, info: isize) {
    let mut cname: Vec<u8> = name.as_bytes().to_vec();
    cname.push(0);
    // The message has no conversion specifiers: a caller's cblas_xerbla may vprintf it.
    let form = c"Illegal parameter value\n";
    // SAFETY: as in `fortran`.
    unsafe {
        let f = *CBLAS_XERBLA.get_or_init(|| lookup(c"cblas_xerbla"));
        // Our own cblas_xerbla is not variadic; calling it through a variadic pointer with no
        // variadic arguments is well defined on the SysV and AArch64 ABIs.
        let f = if f != 0 { f } else { cblas_xerbla as *const () as usize };
        let f = std::mem::transmute::<usize, CblasXerbla>(f);
        f(info as c_int, cname.as_ptr() as *const c_char, form.as_ptr());
    }
}

/// Print the reference message for a name of up to `len` bytes (not NUL-terminated).
unsafe fn print_reference(srname: *const c_char, len: usize, info: i64) {
    let mut n = 0;
    if !srname.is_null() {
        // Hidden lengths are unreliable from C: stop at the first NUL and cap at 32.
        while n < len.min(32) && *srname.add(n) != 0 {
            n += 1;
        }
    }
    let name = if n > 0 {
        String::from_utf8_lossy(std::slice::from_raw_parts(srname as *const u8, n)).trim_end().to_string()
    } else {
        String::from("?")
    };
    eprintln!(" ** On entry to {name} parameter number {info} had an illegal value");
}

/// Reference `XERBLA`: prints the message and returns (reference BLAS stops the program;
/// a library must not).
///
/// # Safety
/// `srname` must point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xerbla_(srname: *const c_char, info: *const i32, len: usize) {
    let info = if info.is_null() { 0 } else { *info as i64 };
    print_reference(srname, if len == 0 || len > 32 { 6 } else { len }, info);
}

/// ILP64 `XERBLA` (INTEGER*8 INFO).
///
/// # Safety
/// `srname` must point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xerbla_64_(srname: *const c_char, info: *const i64, len: usize) {
    let info = if info.is_null() { 0 } else { *info };
    print_reference(srname, if len == 0 || len > 32 { 6 } else { len }, info);
}

/// Reference `XERBLA_ARRAY`: copies up to 32 characters of the name and calls `xerbla_`
/// (through the process's lookup, so a caller's xerbla sees it).
///
/// # Safety
/// `srname_array` must point to `srname_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xerbla_array_(
    srname_array: *const c_char,
    srname_len: *const i32,
    info: *const i32,
    _len: usize,
) {
    let n = if srname_len.is_null() { 0 } else { (*srname_len).clamp(0, 32) as usize };
    let mut buf = [b' '; 32];
    for (i, b) in buf.iter_mut().enumerate().take(n) {
        *b = *srname_array.add(i) as u8;
    }
    let f = *XERBLA32.get_or_init(|| lookup(c"xerbla_"));
    let f: FortranXerbla32 = if f != 0 { std::mem::transmute::<usize, FortranXerbla32>(f) } else { xerbla_ };
    f(buf.as_ptr() as *const c_char, info, 32);
}

/// ILP64 `XERBLA_ARRAY`.
///
/// # Safety
/// `srname_array` must point to `srname_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xerbla_array_64_(
    srname_array: *const c_char,
    srname_len: *const i64,
    info: *const i64,
    _len: usize,
) {
    let n = if srname_len.is_null() { 0 } else { (*srname_len).clamp(0, 32) as usize };
    let mut buf = [b' '; 32];
    for (i, b) in buf.iter_mut().enumerate().take(n) {
        *b = *srname_array.add(i) as u8;
    }
    let f = *XERBLA64.get_or_init(|| lookup(c"xerbla_64_"));
    let f: FortranXerbla64 = if f != 0 { std::mem::transmute::<usize, FortranXerbla64>(f) } else { xerbla_64_ };
    f(buf.as_ptr() as *const c_char, info, 32);
}

/// Reference `cblas_xerbla(info, rout, form, ...)`. Declared here without the variadic tail
/// (stable Rust cannot define C-variadic functions); on every supported ABI a callee may ignore
/// trailing variadic arguments.
///
/// # Safety
/// `rout` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn cblas_xerbla(info: c_int, rout: *const c_char, _form: *const c_char) {
    let name = if rout.is_null() { "?".into() } else { CStr::from_ptr(rout).to_string_lossy().into_owned() };
    eprintln!("Parameter {info} to routine {name} was incorrect");
}

/// Reference CBLAS globals. The netlib CBLAS test programs refer to `RowMajorStrg` (through a
/// copy relocation) and set it themselves; hyblas never reads either.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static mut RowMajorStrg: c_int = 0;
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static mut CBLAS_CallFromC: c_int = 0;
