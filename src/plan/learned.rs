//! What the offload planner learns from the calls it times (issue 5).
//!
//! `hyblas tune offload` calibrates the cost model once; the host then drifts. On the lent
//! H200 hosts the CPU ran 15-25% faster during a benchmark than during the calibration a
//! minute before it (and the GPU pipeline, whose copies the CPU packs, 10-30%), which puts a
//! once-calibrated model outside 15% at most CPU-bound points. So every host Level-3 call the
//! planner times (CPU-only and GPU-only) adds its measured time over the calibrated model's
//! prediction to a running factor per routine, precision, side and octave of size, and later
//! predictions at that size are multiplied by it: a history-based correction on top of the
//! parametric model, as StarPU's history models do.
//!
//! Co-executed calls keep factors of their own ([`Learned::observe_split`]): each side of a
//! split against the calibrated split model's side at the share it reached. A side sharing
//! the machine with the other drifts apart from the same side alone (on the H200 host the
//! CPU side of DGEMM n = 8192 ran 20% faster than the calibration while whole CPU calls ran
//! 8% faster), so a split is priced with the whole calls' factors times the split's own over
//! them, where there are some ([`Learned::split_factors`]). The split's cells hold the ratio
//! over the whole calls' factor, not over the calibration: the host's drift, which the whole
//! calls follow, reaches the splits' prices even while no split runs (in session 24's run the
//! H200 host's CPU-only SGEMM n = 1024 went from 1.6 to 1.3 ms; auto had stopped splitting, the
//! split's price stayed at the early host's, and the planner ended up preferring the CPU
//! alone, priced 1.30 ms, where a split at 0.4 had measured 1.25 ms and the CPU alone 1.47).
//! A split's factor is not lent to other sizes: it corrects residuals timed at its own. Each
//! configuration (its feeder threads) keeps a factor too, which its splits use once it has
//! calls, the size's before ([`Learned::split_factors_in`]): configurations contend for the
//! cores and the memory differently, and drift apart (on the H200 host SGEMM n = 4096's GPU
//! side took 1.2x the model with two or three feeders and 0.95x with one).
//!
//! Each share of a co-executed call keeps one factor more, its share cell
//! ([`Learned::observe_call`]): the calls' whole time over their price from the sides'
//! factors. The sides' factors follow the host; what is left is the shape of one share: how
//! the two sides contend there, and that a call ends with the later of two noisy sides, later
//! than either side's mean. (In run p9 on the H200 host DGEMM n = 4096's GPU side took 1.5-1.7x
//! the calibrated model at a share of 0.8 and 1.27x at 0.9; the sides' factors, learnt from
//! both, priced 0.9 at 1.17x its time.) A share cell is per configuration and per
//! [`SHARE_BINS`]th of the share, is not lent to other shares, and keeps the mean of all its
//! calls (the shape is not a drift). Replayed over 17 H200 runs' calls (k2-p9), the model came
//! within 15% of the measured time at 2828 of 2831 forced split points, against 2811 without
//! share cells. `HYBLAS_OFFLOAD_LEARN_SHARES=0` turns them off.
//!
//! A factor is the geometric running mean of its cell's ratios, the calibrated model counting
//! as one observation of 1 (so the first call moves it half way), with a whole calls' cell's
//! weights floored at [`RATE_FLOOR`] so it keeps following drift (a split's cells, which hold
//! what is left over the whole calls' factors, keep the mean of all their calls). A cell
//! without calls borrows the nearest octave's within [`REACH_OCTAVES`]. Ratios beyond
//! [`MAX_RATIO`] either way are dropped: an interrupted call says nothing about the rates.
//!
//! `HYBLAS_OFFLOAD_LEARN=0` turns it off (predictions are the calibrated model's). The trace
//! line shows the factors a prediction used (`drift cpu=x.. gpu=x..`).

use super::offload::{Op, Problem, Side};
use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// Environment switch (`0` / `off` / `false`: no learning).
pub const LEARN_KEY: &str = "HYBLAS_OFFLOAD_LEARN";

/// Environment switch for the share cells ([`Learned::observe_call`]; `0` / `off` / `false`:
/// co-executed calls are priced from their sides' factors alone).
pub const SHARES_KEY: &str = "HYBLAS_OFFLOAD_LEARN_SHARES";

/// The smallest weight of a new call in a whole calls' cell: it follows a drift within about
/// ten calls, and one call's noise (10-17% on the H200 host) moves it by under 2%. (Split
/// sides' cells and share cells, which hold what is left over the whole calls' factors, keep
/// the mean of all their calls instead: followed at this rate, the ten-call noise of the two
/// configurations of the H200 host's DGEMM n = 1024, two feeders at a share of 0.5 and four at
/// 0.7, moved their prices 3-5% apart by the end of a size, where the two measured within
/// 0.4-1.3% of each other. Replayed over 25 runs' calls (k2-r4), the model's best share came
/// within 10 points of the measured best at 418 of 425 sizes against 414, the points within
/// 15% unchanged at 4159 of 4164.)
pub const RATE_FLOOR: f64 = 0.1;

/// Calls measured more than this many times faster or slower than predicted are not learnt
/// from (a first touch's page faults, another program taking the cores).
pub const MAX_RATIO: f64 = 3.0;

/// A size without calls of its own takes the factor of the nearest size with some, up to this
/// many octaves away (a factor learnt at n = 512, where fixed costs dominate, says little
/// about n = 8192).
pub const REACH_OCTAVES: i32 = 2;

static ENABLED: Lazy<bool> = Lazy::new(|| crate::config::enabled(LEARN_KEY));
static SHARES: Lazy<bool> = Lazy::new(|| crate::config::enabled(SHARES_KEY));

/// Whether learning is on (`HYBLAS_OFFLOAD_LEARN`).
pub fn enabled() -> bool {
    *ENABLED
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    op: Op,
    prec: char,
    gpu: bool,
    /// A side of a co-executed call, not a whole call.
    split: bool,
    octave: i32,
    /// A split's configuration (its feeder threads), or [`ANY_CONFIG`]: the size's cell that
    /// every configuration's calls feed (and whole calls' cells).
    feeders: usize,
    /// A share cell's bin of the GPU's share of C's columns ([`share_bin`]), or [`ANY_SHARE`].
    share: u16,
    /// A share cell: co-executed calls' whole time over their price, not a side's.
    call: bool,
}

/// [`Key::share`] of a cell that is not a share cell.
const ANY_SHARE: u16 = u16::MAX;

/// Share cells per unit of the GPU's share: one cell holds the calls within 0.025 of its
/// share (the benchmark forces shares 0.1 apart; the planner's search steps 1/64).
pub const SHARE_BINS: f64 = 20.0;

/// The share cell's bin of a split with `share` (0..=1) of C's columns on the GPU.
pub fn share_bin(share: f64) -> u16 {
    (share.clamp(0.0, 1.0) * SHARE_BINS).round() as u16
}

/// [`Key::feeders`] of a cell that is not one configuration's.
const ANY_CONFIG: usize = usize::MAX;

impl Key {
    fn of(p: &Problem, side: Side, split: bool) -> Key {
        Key {
            op: p.op,
            prec: p.prec,
            gpu: side == Side::Gpu,
            split,
            octave: octave(p.size()),
            feeders: ANY_CONFIG,
            share: ANY_SHARE,
            call: false,
        }
    }
    /// The cell of a split's side in one configuration.
    fn config(p: &Problem, side: Side, feeders: usize) -> Key {
        Key { feeders, ..Key::of(p, side, true) }
    }
    /// The share cell of co-executed calls in one configuration at `share`.
    fn share_cell(p: &Problem, feeders: usize, share: f64) -> Key {
        Key { share: share_bin(share), call: true, ..Key::config(p, Side::Cpu, feeders) }
    }
}

fn octave(size: f64) -> i32 {
    size.max(1.0).log2().round() as i32
}

/// One cell: ln of its factor, and how many calls made it.
#[derive(Clone, Copy, Debug)]
struct Cell {
    ln: f64,
    calls: u32,
}

/// The learnt factors (one table per process, [`Learned::global`]; tests and offline scoring
/// make their own).
#[derive(Debug, Default)]
pub struct Learned {
    cells: Mutex<HashMap<Key, Cell>>,
}

/// Two tables are the same only if they are one table (the rates that carry one compare
/// equal by their figures and by which table they consult).
impl PartialEq for Learned {
    fn eq(&self, other: &Learned) -> bool {
        std::ptr::eq(self, other)
    }
}

static GLOBAL: Lazy<Arc<Learned>> = Lazy::new(|| Arc::new(Learned::default()));

impl Learned {
    /// The process's table, the one the planner's rates consult and its calls feed.
    pub fn global() -> &'static Arc<Learned> {
        &GLOBAL
    }

    /// ln of the whole calls' factor for `key`'s routine, precision, side and size: its own
    /// cell's, else the nearest populated cell's within [`REACH_OCTAVES`] (the mean of two
    /// equally near), else none.
    fn whole_ln(cells: &HashMap<Key, Cell>, key: Key) -> Option<f64> {
        let key = Key { split: false, feeders: ANY_CONFIG, share: ANY_SHARE, ..key };
        if let Some(c) = cells.get(&key) {
            return Some(c.ln);
        }
        (1..=REACH_OCTAVES).find_map(|d| {
            let near: Vec<f64> = [key.octave - d, key.octave + d]
                .into_iter()
                .filter_map(|o| cells.get(&Key { octave: o, ..key }).map(|c| c.ln))
                .collect();
            (!near.is_empty()).then(|| near.iter().sum::<f64>() / near.len() as f64)
        })
    }

    /// ln of a split side's factor over the whole calls' ([`Learned::whole_ln`]): its
    /// configuration's cell, else the size's (all configurations'), else none. A split's
    /// factor corrects the residuals timed at its own size (`offload split_call_ms`), which
    /// differ from size to size: it is not lent to other sizes (borrowed, it priced the H200
    /// host's sweep at sizes not yet called worse than the whole calls' factors did: within
    /// 15% at 90 of 116 points against 92).
    fn split_ln(cells: &HashMap<Key, Cell>, key: Key) -> Option<f64> {
        let own = |k: Key| cells.get(&k).map(|c| c.ln);
        own(key).or_else(|| own(Key { feeders: ANY_CONFIG, ..key }))
    }

    /// ln of the factor a prediction for `key` uses: the whole calls' ([`Learned::whole_ln`]),
    /// and for a split's side times the split's own over them ([`Learned::split_ln`]).
    fn ln_for(cells: &HashMap<Key, Cell>, key: Key) -> Option<f64> {
        let whole = Self::whole_ln(cells, key);
        match (whole, key.split.then(|| Self::split_ln(cells, key)).flatten()) {
            (None, None) => None,
            (w, s) => Some(w.unwrap_or(0.0) + s.unwrap_or(0.0)),
        }
    }

    /// The (CPU, GPU) factors for `p` (1 where nothing was learnt): of its whole calls, or
    /// (`split`) of a split's two sides.
    pub(crate) fn factors_of(&self, p: &Problem, split: bool) -> (f64, f64) {
        self.factors_by(|side| Key::of(p, side, split))
    }

    /// The (CPU, GPU) factors of the cells `key` names for each side.
    fn factors_by(&self, key: impl Fn(Side) -> Key) -> (f64, f64) {
        let cells = self.cells.lock();
        let at = |side| Self::ln_for(&cells, key(side)).map_or(1.0, f64::exp);
        (at(Side::Cpu), at(Side::Gpu))
    }

    /// The (CPU, GPU) factors for `p`'s whole calls (1 where nothing was learnt).
    pub fn factors(&self, p: &Problem) -> (f64, f64) {
        self.factors_of(p, false)
    }

    /// The (CPU side, GPU side) factors for a split of `p`: the co-executed calls' at its
    /// size where there are some, else the whole calls' of that side.
    pub fn split_factors(&self, p: &Problem) -> (f64, f64) {
        self.factors_of(p, true)
    }

    /// The (CPU side, GPU side) factors for a split of `p` run with `feeders` feeders: that
    /// configuration's co-executed calls' at its size where there are some, else
    /// [`Learned::split_factors`].
    pub fn split_factors_in(&self, p: &Problem, feeders: usize) -> (f64, f64) {
        self.factors_by(|side| Key::config(p, side, feeders))
    }

    /// The share cells at `p`'s size: (feeders, [`share_bin`], factor), in that order; none
    /// with `HYBLAS_OFFLOAD_LEARN_SHARES=0`.
    pub fn share_factors(&self, p: &Problem) -> Vec<(usize, u16, f64)> {
        if !*SHARES {
            return Vec::new();
        }
        let k = Key::of(p, Side::Cpu, true);
        let mut v: Vec<(usize, u16, f64)> = self
            .cells
            .lock()
            .iter()
            .filter(|(c, _)| c.call && c.op == k.op && c.prec == k.prec && c.octave == k.octave)
            .map(|(c, cell)| (c.feeders, c.share, cell.ln.exp()))
            .collect();
        v.sort_unstable_by_key(|x| (x.0, x.1));
        v
    }

    /// Learn from a co-executed call of `p` that ran with `feeders` feeders and `share` of C's
    /// columns on the GPU and took `ratio` times its price under the sides' factors
    /// ([`Rates::split_call_lesson`](super::offload::Rates::split_call_lesson)).
    pub fn observe_call(&self, p: &Problem, feeders: usize, share: f64, ratio: f64) {
        if *SHARES {
            self.observe_in(Key::share_cell(p, feeders, share), ratio)
        }
    }

    /// Learn from one call of `p` on `side` that took `ratio` times the calibrated model's
    /// prediction. A new cell starts from the factor it borrowed.
    pub fn observe(&self, p: &Problem, side: Side, ratio: f64) {
        self.observe_in(Key::of(p, side, false), ratio)
    }

    /// Learn from one side of a co-executed call of `p` that ran with `feeders` feeders and
    /// took `ratio` times the calibrated split model's side: in that configuration's cell and
    /// in the size's (all configurations'). A new cell starts from the factor it would have
    /// used ([`Learned::split_factors_in`], [`Learned::split_factors`]).
    pub fn observe_split(&self, p: &Problem, side: Side, feeders: usize, ratio: f64) {
        self.observe_in(Key::config(p, side, feeders), ratio);
        self.observe_in(Key::of(p, side, true), ratio)
    }

    fn observe_in(&self, key: Key, ratio: f64) {
        if !(1.0 / MAX_RATIO..=MAX_RATIO).contains(&ratio) {
            return;
        }
        let mut cells = self.cells.lock();
        // A split's cell learns the side's time over the whole calls' factor now; a share
        // cell its calls' time over their price, which follows the drift already.
        let (target, start) = if key.call {
            (ratio.ln(), None)
        } else if key.split {
            (ratio.ln() - Self::whole_ln(&cells, key).unwrap_or(0.0), Self::split_ln(&cells, key))
        } else {
            (ratio.ln(), Self::whole_ln(&cells, key))
        };
        let c = cells.entry(key).or_insert(Cell { ln: start.unwrap_or(0.0), calls: 0 });
        c.calls += 1;
        // A split's cells (its sides' and its share cells) hold the mean of all their calls:
        // what is left over prices that follow the drift (the whole calls' factors) is a shape,
        // not a drift, and a cell following its last ten calls priced flat curves by their
        // noise ([`RATE_FLOOR`]).
        let floor = if key.split { 0.0 } else { RATE_FLOOR };
        let w = (1.0 / (c.calls as f64 + 1.0)).max(floor);
        c.ln += w * (target - c.ln);
    }

    /// Forget everything (new rates were loaded: the factors were relative to the old ones).
    pub fn clear(&self) {
        self.cells.lock().clear();
    }

    /// Calls learnt from, over all cells (a co-executed call's side once, not once per cell).
    pub fn calls(&self) -> u64 {
        self.cells.lock().iter().filter(|(k, _)| k.feeders == ANY_CONFIG && !k.call).map(|(_, c)| c.calls as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(n: usize) -> Problem {
        Problem::square('d', n)
    }

    #[test]
    fn a_cell_moves_to_its_calls_ratio_and_keeps_following() {
        let l = Learned::default();
        assert_eq!(l.factors(&p(1024)), (1.0, 1.0));
        l.observe(&p(1024), Side::Cpu, 1.2);
        // The calibrated model counts as one call of 1: half way in ln.
        let (c, g) = l.factors(&p(1024));
        assert!((c - 1.2f64.sqrt()).abs() < 1e-12, "{c}");
        assert_eq!(g, 1.0);
        for _ in 0..60 {
            l.observe(&p(1024), Side::Cpu, 1.2);
        }
        assert!((l.factors(&p(1024)).0 - 1.2).abs() < 1e-3);
        // A later drift is followed at the floor's rate, not drowned by the history.
        for _ in 0..40 {
            l.observe(&p(1024), Side::Cpu, 0.9);
        }
        assert!((l.factors(&p(1024)).0 - 0.9).abs() < 0.01, "{:?}", l.factors(&p(1024)));
        assert_eq!(l.calls(), 101);
    }

    #[test]
    fn sizes_without_calls_borrow_the_nearest_within_reach() {
        let l = Learned::default();
        for _ in 0..200 {
            l.observe(&p(1024), Side::Gpu, 0.8);
            l.observe(&p(4096), Side::Gpu, 1.25);
        }
        let g = |n| l.factors(&p(n)).1;
        assert!((g(1024) - 0.8).abs() < 1e-6 && (g(4096) - 1.25).abs() < 1e-6);
        // 2048 lies between the two: the mean in ln.
        assert!((g(2048) - 1.0).abs() < 1e-6, "{}", g(2048));
        assert!((g(512) - 0.8).abs() < 1e-6 && (g(16384) - 1.25).abs() < 1e-6);
        // Out of reach, and other precisions and routines: the calibrated model.
        assert_eq!(g(64), 1.0);
        assert_eq!(g(65536), 1.0);
        assert_eq!(l.factors(&Problem::square('s', 1024)), (1.0, 1.0));
        let syrk = Problem { op: Op::Syrk, ..p(1024) };
        assert_eq!(l.factors(&syrk), (1.0, 1.0));
        // A new cell starts from what it borrowed: one call of 1.25 at 2048 moves it half way.
        l.observe(&p(2048), Side::Gpu, 1.25);
        assert!((g(2048) - 1.25f64.sqrt()).abs() < 1e-6, "{}", g(2048));
    }

    #[test]
    fn a_call_that_set_things_up_is_not_warm() {
        // The engine's threads started first (another test may be starting them now).
        crate::cpu::threads::install(2, || ());
        let w = crate::trace::Warm::start();
        assert!(w.stayed());
        crate::trace::went_cold();
        assert!(!w.stayed());
        assert!(crate::trace::Warm::start().stayed());
    }

    #[test]
    fn splits_keep_factors_of_their_own_and_start_from_the_whole_calls() {
        let l = Learned::default();
        for _ in 0..200 {
            l.observe(&p(2048), Side::Cpu, 1.2);
        }
        // No co-executed call yet: a split is priced with the whole calls' factors.
        assert!((l.split_factors(&p(2048)).0 - 1.2).abs() < 1e-6);
        assert_eq!(l.split_factors(&p(2048)).1, 1.0);
        // The first co-executed call starts its cell from 1.2 and moves it half way in ln.
        l.observe_split(&p(2048), Side::Cpu, 2, 0.8);
        let want = (1.2f64.ln() + 0.8f64.ln()) / 2.0;
        assert!((l.split_factors(&p(2048)).0.ln() - want).abs() < 1e-9, "{:?}", l.split_factors(&p(2048)));
        // The whole calls' factor is untouched, and a neighbouring octave does not borrow the
        // split's: it has the whole calls' it borrows.
        assert!((l.factors(&p(2048)).0 - 1.2).abs() < 1e-6);
        assert!((l.split_factors(&p(4096)).0 - 1.2).abs() < 1e-6);
        // Wild ratios are dropped here too.
        l.observe_split(&p(2048), Side::Gpu, 2, 5.0);
        assert_eq!(l.split_factors(&p(2048)).1, 1.0);
        assert_eq!(l.split_factors_in(&p(2048), 2).1, 1.0);
        assert_eq!(l.calls(), 201);
    }

    #[test]
    fn a_split_follows_the_drift_its_whole_calls_see() {
        let l = Learned::default();
        let q = p(1024);
        // Whole CPU calls at 1.25x the model, the split's CPU side at 1.1x: sharing the
        // machine costs it 0.88x of what the host's drift does to the CPU alone.
        for _ in 0..200 {
            l.observe(&q, Side::Cpu, 1.25);
            l.observe_split(&q, Side::Cpu, 1, 1.1);
        }
        assert!((l.split_factors_in(&q, 1).0 - 1.1).abs() < 0.01, "{:?}", l.split_factors_in(&q, 1));
        // The host speeds up (whole calls at 1.0x) while no split runs: the split's price
        // follows, at its share of the drift (about 0.88).
        for _ in 0..200 {
            l.observe(&q, Side::Cpu, 1.0);
        }
        let c = l.split_factors_in(&q, 1).0;
        assert!((c - 1.1 / 1.25).abs() < 0.01, "{c}");
        assert!((l.split_factors(&q).0 - c).abs() < 1e-9);
    }

    #[test]
    fn a_splits_cell_keeps_the_mean_of_all_its_calls() {
        let l = Learned::default();
        let q = p(1024);
        // Ninety calls of a configuration's GPU side at 1.1x the model, then ten at 0.9x: the
        // noise of a few calls does not move the price as a whole calls' cell's last ten would
        // (to about 0.97).
        for i in 0..100 {
            l.observe_split(&q, Side::Gpu, 4, if i < 90 { 1.1 } else { 0.9 });
        }
        // The calibrated model counts as one call of 1.
        let want = ((90.0 * 1.1f64.ln() + 10.0 * 0.9f64.ln()) / 101.0).exp();
        assert!((l.split_factors_in(&q, 4).1 - want).abs() < 1e-9, "{:?} {want}", l.split_factors_in(&q, 4));
        assert!((l.split_factors(&q).1 - want).abs() < 1e-9);
        // The same calls in a whole calls' cell follow the last ten.
        for i in 0..100 {
            l.observe(&q, Side::Cpu, if i < 90 { 1.1 } else { 0.9 });
        }
        assert!(l.factors(&q).0 < 0.98, "{:?}", l.factors(&q));
    }

    #[test]
    fn a_configuration_keeps_its_own_factor_and_others_borrow_the_sizes() {
        let l = Learned::default();
        let q = p(4096);
        // Two feeders' GPU side runs 1.2x the model, one feeder's 0.95x (the H200 host's
        // SGEMM n = 4096).
        for _ in 0..100 {
            l.observe_split(&q, Side::Gpu, 2, 1.2);
            l.observe_split(&q, Side::Gpu, 1, 0.95);
        }
        let g = |f| l.split_factors_in(&q, f).1;
        assert!((g(2) - 1.2).abs() < 0.01, "{}", g(2));
        assert!((g(1) - 0.95).abs() < 0.01, "{}", g(1));
        // The size's factor follows both; a configuration without calls borrows it.
        let both = l.split_factors(&q).1;
        assert!(both > 0.97 && both < 1.18, "{both}");
        assert_eq!(g(4), both);
        // A configuration's first call starts from the size's factor.
        l.observe_split(&q, Side::Gpu, 4, 1.0);
        assert!((g(4).ln() - both.ln() / 2.0).abs() < 0.02, "{} {both}", g(4));
        // Nothing is lent across sizes, and whole calls are untouched.
        assert_eq!(l.split_factors_in(&p(8192), 2), (1.0, 1.0));
        assert_eq!(l.factors(&q), (1.0, 1.0));
        // Each side of a call counts once.
        assert_eq!(l.calls(), 201);
    }

    #[test]
    fn wild_calls_are_not_learnt_from_and_clear_forgets() {
        let l = Learned::default();
        for r in [0.0, -1.0, f64::NAN, f64::INFINITY, 3.5, 0.2] {
            l.observe(&p(2048), Side::Cpu, r);
        }
        assert_eq!(l.calls(), 0);
        assert_eq!(l.factors(&p(2048)), (1.0, 1.0));
        l.observe(&p(2048), Side::Cpu, 2.0);
        assert!(l.factors(&p(2048)).0 > 1.4);
        l.clear();
        assert_eq!(l.factors(&p(2048)), (1.0, 1.0));
    }

    #[test]
    fn tables_are_equal_only_to_themselves() {
        let (a, b) = (Learned::default(), Learned::default());
        assert!(a == a && a != b);
        assert!(Learned::global() == Learned::global());
    }
}
