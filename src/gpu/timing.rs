//! CUDA-event timing: the tuner and the benchmarks time device work with events on the
//! stream, never with host clocks around asynchronous launches.

use super::driver::{check, sys, Result};

/// A pair of events on one stream.
pub struct Timer {
    start: sys::CUevent,
    stop: sys::CUevent,
    stream: sys::CUstream,
}

impl Timer {
    pub fn new(stream: sys::CUstream) -> Result<Self> {
        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        check(unsafe { sys::cuEventCreate(&mut a, 0) }, "cuEventCreate")?;
        check(unsafe { sys::cuEventCreate(&mut b, 0) }, "cuEventCreate")?;
        Ok(Timer { start: a, stop: b, stream })
    }

    /// Seconds taken by the work `f` enqueues on the stream.
    pub fn time(&self, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        check(unsafe { sys::cuEventRecord(self.start, self.stream) }, "cuEventRecord")?;
        f()?;
        check(unsafe { sys::cuEventRecord(self.stop, self.stream) }, "cuEventRecord")?;
        check(unsafe { sys::cuEventSynchronize(self.stop) }, "cuEventSynchronize")?;
        let mut ms = 0f32;
        check(unsafe { sys::cuEventElapsedTime_v2(&mut ms, self.start, self.stop) }, "cuEventElapsedTime")?;
        Ok(ms as f64 * 1e-3)
    }

    /// Median seconds per call of `f` over `reps` timed calls (after `warmup` untimed ones).
    pub fn median(&self, warmup: usize, reps: usize, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        for _ in 0..warmup {
            f()?;
        }
        let mut t = Vec::with_capacity(reps);
        for _ in 0..reps.max(1) {
            t.push(self.time(f)?);
        }
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    }

    /// Median seconds per call of `f` when calls run back to back, as a program that calls in
    /// a loop sees them: batches of calls (sized so a batch takes about `batch_s`, after one
    /// timed single call), the median batch over `reps`, divided by its calls. Single-call
    /// timing would add the launch gap to every call and favour whichever side launches less.
    pub fn median_batched(&self, reps: usize, batch_s: f64, f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        Ok(self.median_batched_each(reps, batch_s, &mut [f])?[0])
    }

    /// [`Timer::median_batched`] of several calls, their batches alternating (f0, f1, .., f0, f1,
    /// ..) so that clock and thermal drift fall on all alike, each batch after one untimed call
    /// of its own: seconds per call of each.
    pub fn median_batched_each(
        &self,
        reps: usize,
        batch_s: f64,
        fs: &mut [&mut dyn FnMut() -> Result<()>],
    ) -> Result<Vec<f64>> {
        let mut calls = Vec::with_capacity(fs.len());
        for f in fs.iter_mut() {
            f()?;
            let one = self.time(*f)?;
            calls.push(((batch_s / one.max(1e-7)).ceil() as usize).clamp(1, 200));
        }
        let mut t = vec![Vec::with_capacity(reps); fs.len()];
        for _ in 0..reps.max(1) {
            for (i, f) in fs.iter_mut().enumerate() {
                let n = calls[i];
                // One untimed call first, so that the GPU is busy when the start event is
                // recorded and the batch measures the calls, not the host's head start (as
                // gpubench's `measure` does).
                f()?;
                let secs = self.time(&mut || {
                    for _ in 0..n {
                        f()?;
                    }
                    Ok(())
                })?;
                t[i].push(secs / n as f64);
            }
        }
        Ok(t.into_iter()
            .map(|mut v| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            })
            .collect())
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        unsafe {
            sys::cuEventDestroy_v2(self.start);
            sys::cuEventDestroy_v2(self.stop);
        }
    }
}
