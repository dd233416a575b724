//! A host-memory batch of same-shape products computed on the GPU (issue 48 item 4; the
//! planner, `plan::batch`, decides when): every product's operands packed back to back into one
//! device arena through the offload pipeline's pinned chunk ring (`offload::Pipe`), one batched
//! call on them, and C's copied back the same way.
//!
//! The products' blocks are one packed byte stream per operand, cut into whole chunks (a chunk
//! holds many small products, or part of a large one), so a batch of 10^4 tiny products makes a
//! few dozen copies, not 10^4. Packing a chunk waits only for that chunk's previous copy, so
//! packing overlaps the copies in flight. The caller's C is written only after the whole batch
//! has been computed, each element once.

use super::offload::{copy2d, give_pipe, take_pipe, Copier, CHUNK_BYTES};
use crate::gpu::driver::{check, sys};
use crate::gpu::{Exec, Result, Runtime};
use std::ffi::c_void;

/// One product's block of one operand in host memory: `height` columns of `width` bytes,
/// `pitch` bytes apart (a column-major matrix: width = rows * element, pitch = ld * element).
#[derive(Clone, Copy, Debug)]
pub struct HostBlock {
    pub host: *mut u8,
    pub pitch: usize,
    pub width: usize,
    pub height: usize,
}

impl HostBlock {
    fn bytes(&self) -> usize {
        self.width * self.height
    }
}

/// Where the packed stream is in its blocks: block `b`, column `j`, byte `x` of that column.
#[derive(Default)]
struct Cursor {
    b: usize,
    j: usize,
    x: usize,
}

impl Cursor {
    /// Move `len` bytes between the packed `chunk` and the blocks from the cursor on (pack:
    /// blocks -> chunk; else chunk -> blocks). A block that lies whole in the rest of the chunk
    /// is copied with the pool's threads (`copy2d`); pieces of one column by the calling thread.
    unsafe fn run(&mut self, blocks: &[HostBlock], chunk: *mut u8, mut len: usize, pack: bool) {
        let mut at = chunk;
        while len > 0 {
            let blk = blocks[self.b];
            if blk.bytes() == 0 {
                self.b += 1;
                continue;
            }
            if self.j == 0 && self.x == 0 && blk.bytes() <= len {
                if pack {
                    copy2d(Copier::Pool, blk.host, blk.pitch, at, blk.width, blk.width, blk.height);
                } else {
                    copy2d(Copier::Pool, at, blk.width, blk.host, blk.pitch, blk.width, blk.height);
                }
                at = at.add(blk.bytes());
                len -= blk.bytes();
                self.b += 1;
                continue;
            }
            let n = (blk.width - self.x).min(len);
            let h = blk.host.add(self.j * blk.pitch + self.x);
            if pack {
                std::ptr::copy_nonoverlapping(h, at, n);
            } else {
                std::ptr::copy_nonoverlapping(at, h, n);
            }
            at = at.add(n);
            len -= n;
            self.x += n;
            if self.x == blk.width {
                self.x = 0;
                self.j += 1;
                if self.j == blk.height {
                    self.j = 0;
                    self.b += 1;
                }
            }
        }
    }
}

/// Bytes `blocks` take packed.
fn packed(blocks: &[HostBlock]) -> usize {
    blocks.iter().map(HostBlock::bytes).sum()
}

fn align(b: usize) -> usize {
    b.div_ceil(256) * 256
}

/// What one offloaded batch moved, for the trace.
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchStats {
    pub up_bytes: usize,
    pub down_bytes: usize,
    pub copies: usize,
}

/// Compute a batch on `rt`'s GPU: `a`, `b` (empty where the call reads neither) and `c` are the
/// products' blocks in product order; `c_in`: C is read (beta != 0). `run` enqueues the batched
/// call on the `Exec` it is given, with the device addresses of the packed A, B and C (product p's
/// block at base + p * its packed size). Returns after C has been written back.
///
/// # Safety
/// The blocks lie in host memory valid for the call; C's blocks do not overlap.
pub unsafe fn batch(
    rt: &'static Runtime,
    a: &[HostBlock],
    b: &[HostBlock],
    c: &[HostBlock],
    c_in: bool,
    run: &dyn Fn(&Exec, [u64; 3]) -> Result<()>,
) -> Result<BatchStats> {
    rt.bind()?;
    let (sa, sb, sc) = (packed(a), packed(b), packed(c));
    let mut pipe = take_pipe(rt)?;
    let r = (|| -> Result<BatchStats> {
        let base = pipe.arena(align(sa) + align(sb) + sc.max(1))?;
        let bases = [base, base + align(sa) as u64, base + (align(sa) + align(sb)) as u64];
        let chunk = *CHUNK_BYTES;
        let mut stats = BatchStats::default();
        // Uploads: each operand's packed stream, chunk by chunk through the ring.
        let mut next = 0;
        let mut ups: Vec<(&[HostBlock], u64, usize)> = vec![(a, bases[0], sa), (b, bases[1], sb)];
        if c_in {
            ups.push((c, bases[2], sc));
        }
        for (blocks, dev, total) in ups {
            let mut cur = Cursor::default();
            let mut off = 0;
            while off < total {
                let ch = &pipe.up[next];
                next = (next + 1) % pipe.up.len();
                let len = chunk.min(total - off);
                check(sys::cuEventSynchronize(ch.ev), "cuEventSynchronize")?;
                cur.run(blocks, ch.host, len, true);
                let to = dev + off as u64;
                check(sys::cuMemcpyHtoDAsync_v2(to, ch.host as *const c_void, len, pipe.h2d), "cuMemcpyHtoDAsync")?;
                check(sys::cuEventRecord(ch.ev, pipe.h2d), "cuEventRecord")?;
                off += len;
                stats.up_bytes += len;
                stats.copies += 1;
            }
        }
        // The batched call, after the uploads.
        check(sys::cuEventRecord(pipe.ready, pipe.h2d), "cuEventRecord")?;
        check(sys::cuStreamWaitEvent(pipe.comp, pipe.ready, 0), "cuStreamWaitEvent")?;
        run(&Exec { rt, stream: pipe.comp }, bases)?;
        pipe.done_events(1)?;
        check(sys::cuEventRecord(pipe.done[0], pipe.comp), "cuEventRecord")?;
        check(sys::cuStreamWaitEvent(pipe.d2h, pipe.done[0], 0), "cuStreamWaitEvent")?;
        // Downloads: C's packed stream through the ring; each chunk unpacked once its copy is
        // done, while the next ones are in flight.
        let ring = pipe.down.len();
        let mut cur = Cursor::default();
        let mut pending: std::collections::VecDeque<(usize, usize)> = Default::default();
        let (mut off, mut head) = (0, 0);
        while off < sc || !pending.is_empty() {
            if off < sc && pending.len() < ring {
                let ci = (head + pending.len()) % ring;
                let ch = &pipe.down[ci];
                let len = chunk.min(sc - off);
                let from = bases[2] + off as u64;
                check(sys::cuMemcpyDtoHAsync_v2(ch.host as *mut c_void, from, len, pipe.d2h), "cuMemcpyDtoHAsync")?;
                check(sys::cuEventRecord(ch.ev, pipe.d2h), "cuEventRecord")?;
                pending.push_back((ci, len));
                off += len;
                stats.down_bytes += len;
                stats.copies += 1;
                continue;
            }
            let (ci, len) = pending.pop_front().expect("a copy in flight");
            let ch = &pipe.down[ci];
            check(sys::cuEventSynchronize(ch.ev), "cuEventSynchronize")?;
            cur.run(c, ch.host, len, false);
            head = (ci + 1) % ring;
        }
        pipe.sync()?;
        Ok(stats)
    })();
    if r.is_err() {
        // Copies may still be in flight from the pinned chunks: wait before the pipe is reused.
        let _ = pipe.sync();
    }
    give_pipe(rt, pipe);
    r
}
