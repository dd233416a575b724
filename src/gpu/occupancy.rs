//! The occupancy model of seed 004: for a block shape, how many blocks of a compiled function
//! fit on one multiprocessor, and the three occupancies the tuner reasons with.
//!
//! - warp occupancy  = active warps per SM / the most warps an SM holds;
//! - block occupancy = active blocks per SM / the most blocks an SM holds;
//! - grid occupancy  = blocks / (blocks rounded up to whole waves of active blocks on the
//!   device): 100% when the grid is a whole number of full waves.
//!
//! Active blocks per SM follow NVIDIA's occupancy calculator (`cuda_occupancy.h`): the least
//! of the warp, block, register and shared-memory limits. Registers are allocated per warp in
//! units of 256 and split over the SM's four sub-partitions; shared memory in units of 128
//! bytes plus the per-block reservation. `tests/gpu_runtime.rs` checks the result against
//! `cuOccupancyMaxActiveBlocksPerMultiprocessor`.

use super::kernels::Function;
use super::runtime::DeviceProps;

/// The occupancies of one candidate launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Occupancy {
    pub active_blocks_per_sm: u32,
    pub warp: f64,
    pub block: f64,
}

const REG_ALLOC_UNIT: u32 = 256;
const SMEM_ALLOC_UNIT: u32 = 128;
const SUB_PARTITIONS: u32 = 4;

fn round_up(x: u32, unit: u32) -> u32 {
    x.div_ceil(unit) * unit
}

/// Active blocks per SM of `f` launched with `threads` per block and `dyn_smem` bytes of
/// dynamic shared memory (0 when it does not fit at all).
pub fn active_blocks(p: &DeviceProps, f: &Function, threads: u32, dyn_smem: u32) -> u32 {
    if threads == 0 || threads > f.max_threads.min(p.max_threads_per_block) {
        return 0;
    }
    let warps_per_block = threads.div_ceil(p.warp_size);
    let max_warps = p.max_threads_per_sm / p.warp_size;
    let by_warps = max_warps / warps_per_block;
    let by_blocks = p.max_blocks_per_sm;
    let by_regs = if f.regs == 0 {
        u32::MAX
    } else {
        let per_warp = round_up(f.regs * p.warp_size, REG_ALLOC_UNIT);
        if per_warp * warps_per_block > p.regs_per_block {
            return 0;
        }
        let warps_per_sub = (p.regs_per_sm / SUB_PARTITIONS) / per_warp;
        (warps_per_sub * SUB_PARTITIONS) / warps_per_block
    };
    let smem = f.static_smem + dyn_smem;
    if smem > p.smem_per_block_optin {
        return 0;
    }
    let per_block = round_up(smem + p.reserved_smem_per_block, SMEM_ALLOC_UNIT);
    let by_smem = p.smem_per_sm.checked_div(per_block).unwrap_or(u32::MAX);
    by_warps.min(by_blocks).min(by_regs).min(by_smem)
}

/// Warp and block occupancy of a block of `threads` threads.
pub fn occupancy(p: &DeviceProps, f: &Function, threads: u32, dyn_smem: u32) -> Occupancy {
    let active = active_blocks(p, f, threads, dyn_smem);
    let warps_per_block = threads.div_ceil(p.warp_size);
    let max_warps = p.max_threads_per_sm / p.warp_size;
    Occupancy {
        active_blocks_per_sm: active,
        warp: (active * warps_per_block) as f64 / max_warps as f64,
        block: active as f64 / p.max_blocks_per_sm as f64,
    }
}

/// Grid occupancy of `blocks` blocks when `active_per_sm` fit on each of `sms` SMs.
pub fn grid_occupancy(blocks: u64, active_per_sm: u32, sms: u32) -> f64 {
    let wave = active_per_sm as u64 * sms as u64;
    if blocks == 0 || wave == 0 {
        return 0.0;
    }
    blocks as f64 / (blocks.div_ceil(wave) * wave) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::driver::Handle;

    /// Hopper's SM limits (an H100's are the H200's; only the memory size differs).
    fn h100() -> DeviceProps {
        DeviceProps { name: "test".into(), total_mem: 80 << 30, ..DeviceProps::h200() }
    }
    fn func(regs: u32, smem: u32) -> Function {
        Function { raw: Handle(std::ptr::null_mut()), regs, static_smem: smem, max_threads: 1024, local_bytes: 0 }
    }

    #[test]
    fn limits_follow_the_calculator() {
        let p = h100();
        // 32 regs, 256 threads: warps limit 64/8 = 8 blocks; regs 1024/warp -> 16 warps per
        // sub-partition -> 64 warps -> 8 blocks.
        assert_eq!(active_blocks(&p, &func(32, 0), 256, 0), 8);
        // 64 regs: 2048/warp -> 8 per sub-partition -> 32 warps -> 4 blocks of 8 warps.
        assert_eq!(active_blocks(&p, &func(64, 0), 256, 0), 4);
        // Tiny blocks hit the 32-blocks limit.
        assert_eq!(active_blocks(&p, &func(16, 0), 32, 0), 32);
        // 48 KB of shared memory: (48K + 1K) per block -> 4 blocks in 228 KB.
        assert_eq!(active_blocks(&p, &func(16, 48 * 1024), 128, 0), 4);
        // Too many threads for the function.
        assert_eq!(active_blocks(&p, &func(16, 0), 2048, 0), 0);
        let o = occupancy(&p, &func(32, 0), 256, 0);
        assert!((o.warp - 1.0).abs() < 1e-12 && (o.block - 0.25).abs() < 1e-12);
    }

    #[test]
    fn grid_occupancy_is_the_last_wave_fill() {
        assert_eq!(grid_occupancy(264, 2, 132), 1.0);
        assert!((grid_occupancy(265, 2, 132) - 265.0 / 528.0).abs() < 1e-12);
        assert_eq!(grid_occupancy(0, 2, 132), 0.0);
    }
}
