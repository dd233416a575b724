//! HYBLAS_TRACE=<path> writes one line per call naming routine, shape, engine and time.
//! (Its own test binary: the configuration is read once per process.)

use std::io::Read;

extern "C" {
    fn daxpy_(n: *const i32, a: *const f64, x: *const f64, incx: *const i32, y: *mut f64, incy: *const i32);
    fn cblas_zaxpy64_(
        n: i64,
        a: *const hyblas::types::C64,
        x: *const hyblas::types::C64,
        incx: i64,
        y: *mut hyblas::types::C64,
        incy: i64,
    );
}

#[test]
fn trace_file_gets_one_line_per_call() {
    let path = std::env::temp_dir().join(format!("hyblas-trace-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    std::env::set_var("HYBLAS_TRACE", &path);
    let (n, inc) = (1000i32, 1i32);
    let x = [1.0f64; 1000];
    let mut y = vec![2.0f64; 1000];
    unsafe { daxpy_(&n, &3.0, x.as_ptr(), &inc, y.as_mut_ptr(), &inc) };
    assert!(y.iter().all(|&v| v == 5.0));
    let zx = [hyblas::types::C64::new(1.0, 1.0); 10];
    let mut zy = vec![hyblas::types::C64::new(0.0, 0.0); 10];
    unsafe { cblas_zaxpy64_(10, &hyblas::types::C64::new(0.0, 1.0), zx.as_ptr(), 1, zy.as_mut_ptr(), -1) };
    assert!(zy.iter().all(|&v| v == hyblas::types::C64::new(-1.0, 1.0)));
    let mut text = String::new();
    std::fs::File::open(&path).expect("trace file created").read_to_string(&mut text).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "one line per call: {text}");
    assert!(
        lines[0].contains("daxpy") && lines[0].contains("n=1000") && lines[0].contains("engine=cpu"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("time="), "{}", lines[0]);
    assert!(lines[1].contains("zaxpy") && lines[1].contains("incy=-1"), "{}", lines[1]);
    let _ = std::fs::remove_file(&path);
}
