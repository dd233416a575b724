//! The real cuBLAS: found with `dlsym(RTLD_NEXT, ...)` (hyblas preloaded or linked in front of
//! it), else by loading `libcublas.so.<major>` ourselves. The cuBLAS layer forwards to it and
//! the benchmarks time it as the peer.

use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Library names tried, newest first, when the symbol is not already loaded after us.
pub const LIBS: &[&str] = &["libcublas.so.13", "libcublas.so.12", "libcublas.so"];

struct Handle(*mut c_void);
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

static LIB: Lazy<Option<Handle>> = Lazy::new(|| {
    for name in LIBS {
        let c = CString::new(*name).unwrap();
        // SAFETY: dlopen with a valid C string; RTLD_LOCAL keeps its symbols out of the global
        // scope so our own exports stay the ones other libraries resolve.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !h.is_null() {
            return Some(Handle(h));
        }
    }
    None
});

static CACHE: Lazy<Mutex<HashMap<&'static str, usize>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// Address of the real cuBLAS function `name` (e.g. `cublasSaxpy_v2`), or None where no
/// cuBLAS can be found. Never returns hyblas's own export of the same name.
pub fn lookup(name: &'static str) -> Option<*mut c_void> {
    if let Some(&p) = CACHE.lock().get(name) {
        return (p != 0).then_some(p as *mut c_void);
    }
    let c = CString::new(name).ok()?;
    let mut p = unsafe { libc::dlsym(libc::RTLD_NEXT, c.as_ptr()) };
    if p.is_null() || is_ours(p) {
        p = LIB.as_ref().map_or(std::ptr::null_mut(), |h| unsafe { libc::dlsym(h.0, c.as_ptr()) });
    }
    if !p.is_null() && is_ours(p) {
        p = std::ptr::null_mut();
    }
    CACHE.lock().insert(name, p as usize);
    (!p.is_null()).then_some(p)
}

/// Whether `p` lies in the object hyblas itself was loaded from.
fn is_ours(p: *mut c_void) -> bool {
    let mut a: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut b: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = is_ours as *const () as *const c_void;
    unsafe { libc::dladdr(p, &mut a) != 0 && libc::dladdr(here, &mut b) != 0 && a.dli_fbase == b.dli_fbase }
}

/// Typed access: `vendor::get::<unsafe extern "C" fn(...) -> i32>("cublasSaxpy_v2")`.
///
/// # Safety
/// `F` must be the function pointer type of the named symbol.
pub unsafe fn get<F: Copy>(name: &'static str) -> Option<F> {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    lookup(name).map(|p| std::mem::transmute_copy::<*mut c_void, F>(&p))
}

/// Whether a real cuBLAS can be reached (one atomic load after the first call: host-ABI calls
/// on device memory ask it every time).
pub fn present() -> bool {
    static PRESENT: once_cell::sync::OnceCell<bool> = once_cell::sync::OnceCell::new();
    *PRESENT.get_or_init(|| lookup("cublasGetVersion_v2").is_some())
}

/// One real cuBLAS function, resolved on first use and then read with one atomic load: the
/// cuBLAS layer keeps one per exported symbol, so forwarding costs no lock or hash.
pub struct Sym {
    pub name: &'static str,
    /// 0: not resolved yet; 1: not found; else the address.
    addr: AtomicUsize,
}

const UNRESOLVED: usize = 0;
const MISSING: usize = 1;

impl Sym {
    pub const fn new(name: &'static str) -> Self {
        Sym { name, addr: AtomicUsize::new(UNRESOLVED) }
    }

    /// The address of the real function, or None where no cuBLAS can be found.
    pub fn addr(&self) -> Option<*mut c_void> {
        let mut a = self.addr.load(Ordering::Acquire);
        if a == UNRESOLVED {
            a = lookup(self.name).map_or(MISSING, |p| p as usize);
            self.addr.store(a, Ordering::Release);
        }
        (a != MISSING).then_some(a as *mut c_void)
    }

    /// Typed access, as [`get`].
    ///
    /// # Safety
    /// `F` must be the function pointer type of the named symbol.
    pub unsafe fn get<F: Copy>(&self) -> Option<F> {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
        self.addr().map(|p| std::mem::transmute_copy::<*mut c_void, F>(&p))
    }
}
