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

use super::offload::{align, copy_parts, give_pipe, take_pipe, Copier, CHUNK_BYTES};
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

/// A piece of a chunk's copy: `height` columns of `width` bytes, `pitch` apart at `host`,
/// packed at `at` in the chunk.
#[derive(Clone, Copy)]
struct Seg {
    host: *mut u8,
    pitch: usize,
    width: usize,
    height: usize,
    at: usize,
}

/// The pieces of one chunk, shared by the copying threads.
struct Segs(Vec<Seg>);
// SAFETY: each piece is copied by one thread; pieces cover disjoint bytes of the chunk and of
// the blocks (C's blocks do not overlap), which outlive the copy.
unsafe impl Sync for Segs {}
impl Segs {
    // A method (not field access) so closures capture the Sync whole, not the Vec inside.
    fn all(&self) -> &[Seg] {
        &self.0
    }
}

/// Least bytes of a piece a thread copies alone (smaller chunks are not split further).
const PART_MIN: usize = 256 << 10;

impl Cursor {
    /// Move `len` bytes between the packed `chunk` and the blocks from the cursor on (pack:
    /// blocks -> chunk; else chunk -> blocks), with the CPU engine's threads: the chunk's bytes
    /// are cut into pieces of whole columns (a column in parts where it straddles the chunk's
    /// end), at most a thread's share each, and the threads take the pieces in turn.
    unsafe fn run(&mut self, blocks: &[HostBlock], chunk: *mut u8, len: usize, pack: bool) {
        let threads = crate::cpu::threads::nthreads().max(1);
        let cap = (len / threads).max(PART_MIN);
        let mut segs = Vec::new();
        let (mut at, mut left) = (0, len);
        while left > 0 {
            let blk = blocks[self.b];
            if blk.bytes() == 0 {
                self.b += 1;
                continue;
            }
            let host = blk.host.add(self.j * blk.pitch + self.x);
            if self.x == 0 && blk.width <= left {
                // Whole columns: as many as fit, at most a thread's share.
                let cols = (blk.height - self.j).min(left / blk.width).min((cap / blk.width).max(1));
                segs.push(Seg { host, pitch: blk.pitch, width: blk.width, height: cols, at });
                let bytes = cols * blk.width;
                at += bytes;
                left -= bytes;
                self.j += cols;
            } else {
                // Part of one column (it straddles the chunk's end, or began in the last one).
                let n = (blk.width - self.x).min(left);
                segs.push(Seg { host, pitch: blk.pitch, width: n, height: 1, at });
                at += n;
                left -= n;
                self.x += n;
                if self.x == blk.width {
                    self.x = 0;
                    self.j += 1;
                }
            }
            if self.j == blk.height {
                self.j = 0;
                self.b += 1;
            }
        }
        let segs = Segs(segs);
        let chunk = chunk as usize;
        let parts = (len / PART_MIN).clamp(1, threads).min(segs.0.len());
        let copy = |q: usize| {
            for g in segs.all().iter().skip(q).step_by(parts) {
                for c in 0..g.height {
                    let (h, k) = (g.host.add(c * g.pitch), (chunk + g.at + c * g.width) as *mut u8);
                    if pack {
                        std::ptr::copy_nonoverlapping(h, k, g.width);
                    } else {
                        std::ptr::copy_nonoverlapping(k, h, g.width);
                    }
                }
            }
        };
        copy_parts(Copier::Pool, parts, &copy);
    }
}

/// Bytes `blocks` take packed.
fn packed(blocks: &[HostBlock]) -> usize {
    blocks.iter().map(HostBlock::bytes).sum()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Packing blocks through chunks of any size gives their packed concatenation, and
    /// unpacking it writes the blocks back and nothing else (padding between columns and
    /// blocks untouched), wherever a chunk's end falls: mid-column, on a column, on a block.
    #[test]
    fn chunks_pack_and_unpack_the_blocks_exactly() {
        // Blocks of (width, pitch, height) bytes in one host buffer, with gaps.
        let shapes = [(24, 40, 5), (8, 8, 9), (0, 8, 3), (100, 128, 3), (16, 16, 0), (3, 7, 11), (640, 700, 4)];
        let mut offs = vec![];
        let mut total = 0;
        for &(_, pitch, height) in &shapes {
            offs.push(total);
            total += pitch * height + 13;
        }
        let host: Vec<u8> = (0..total).map(|i| (i * 31 % 251) as u8).collect();
        let mut src = host.clone();
        let blocks = |buf: &mut Vec<u8>| -> Vec<HostBlock> {
            shapes
                .iter()
                .zip(&offs)
                .map(|(&(width, pitch, height), &o)| HostBlock {
                    host: unsafe { buf.as_mut_ptr().add(o) },
                    pitch,
                    width,
                    height,
                })
                .collect()
        };
        let bs = blocks(&mut src);
        let mut want = vec![];
        for b in &bs {
            for j in 0..b.height {
                want.extend_from_slice(unsafe { std::slice::from_raw_parts(b.host.add(j * b.pitch), b.width) });
            }
        }
        assert_eq!(want.len(), packed(&bs));
        for chunk in [1, 7, 24, 64, 1000, 1 << 20] {
            // Pack.
            let mut got = vec![0u8; want.len()];
            let mut cur = Cursor::default();
            for off in (0..want.len()).step_by(chunk) {
                let len = chunk.min(want.len() - off);
                unsafe { cur.run(&bs, got.as_mut_ptr().add(off), len, true) };
            }
            assert_eq!(got, want, "packed through chunks of {chunk}");
            // Unpack into a copy whose blocks were zeroed: the blocks come back, the rest stays.
            let mut dst = host.clone();
            let db = blocks(&mut dst);
            for b in &db {
                for j in 0..b.height {
                    unsafe { std::ptr::write_bytes(b.host.add(j * b.pitch), 0, b.width) };
                }
            }
            let mut cur = Cursor::default();
            for off in (0..want.len()).step_by(chunk) {
                let len = chunk.min(want.len() - off);
                unsafe { cur.run(&db, got.as_mut_ptr().add(off), len, false) };
            }
            assert_eq!(dst, host, "unpacked through chunks of {chunk}");
        }
    }
}
