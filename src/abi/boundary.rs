//! The one door every exported C function goes through.
//!
//! `export!` defines an unmangled `extern "C"` function whose body runs inside [`guard`]: a
//! Rust panic is caught there, reported on stderr with the routine's name, and the function
//! returns a zero value instead of unwinding into C (which would be undefined behaviour).
//! Outputs are left as the engine left them; engines validate before writing, so a panic can
//! only come from a bug, never from bad input.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Run `f`, converting a panic into a message and `R::default()`.
#[inline]
pub fn guard<R: Default>(name: &str, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            eprintln!("hyblas: internal error in {name}: {msg}; the call was abandoned");
            R::default()
        }
    }
}

/// Define one exported C symbol.
///
/// ```ignore
/// export!(concat!("daxpy", $sfx), fn(n: *const $I, ...) => body_expr);
/// ```
/// The Rust item is anonymous (inside `const _`), so the same macro line can be stamped out
/// for several symbol names (LP64 `daxpy_` and ILP64 `daxpy_64_`) without name clashes.
#[macro_export]
#[doc(hidden)]
macro_rules! export {
    ($sym:expr, fn($($a:ident : $t:ty),* $(,)?) $(-> $r:ty)? => $call:expr) => {
        const _: () = {
            #[export_name = $sym]
            #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
            unsafe extern "C" fn f($($a: $t),*) $(-> $r)? {
                $crate::abi::boundary::guard($sym, || {
                    #[allow(unused_unsafe)]
                    unsafe { $call }
                })
            }
        };
    };
}
