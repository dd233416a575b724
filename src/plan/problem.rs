//! The call the host offload model prices (`plan::offload`): a GEMM's shape, precision, which
//! operands live on the host, and for other Level-3 routines the GEMM it is priced as
//! ([`Problem::level3`]). The offload executors, `hyblas tune offload` and offloadbench build
//! these; `plan::offload` re-exports them.

use crate::types::{prec_index, Scalar};

/// One GEMM as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    pub prec: char,
    pub elem: usize,
    pub complex: bool,
    pub m: usize,
    pub n: usize,
    /// 0 when A and B are not read (alpha == 0).
    pub k: usize,
    /// A, B, C in host memory (to be copied).
    pub host: [bool; 3],
    /// C read (beta != 0).
    pub c_in: bool,
    /// Which routine: a Level-3 call other than GEMM is priced as a GEMM times its routine's
    /// measured factors (`Rates::op_factor`).
    pub op: Op,
}

/// The routine behind a [`Problem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Gemm,
    Symm,
    Syrk,
    Syr2k,
    Trmm,
    Trsm,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Gemm => "gemm",
            Op::Symm => "symm",
            Op::Syrk => "syrk",
            Op::Syr2k => "syr2k",
            Op::Trmm => "trmm",
            Op::Trsm => "trsm",
        }
    }
    pub(crate) fn from_name(s: &str) -> Option<Op> {
        [Op::Symm, Op::Syrk, Op::Syr2k, Op::Trmm, Op::Trsm].into_iter().find(|o| o.name() == s)
    }
}

impl Problem {
    pub fn gemm<T: Scalar>(m: usize, n: usize, k: usize, alpha_zero: bool, beta_zero: bool) -> Problem {
        Problem {
            prec: T::PREFIX,
            elem: std::mem::size_of::<T>(),
            complex: T::IS_COMPLEX,
            m,
            n,
            k: if alpha_zero { 0 } else { k },
            host: [true; 3],
            c_in: !beta_zero,
            op: Op::Gemm,
        }
    }
    /// A square n x n x n GEMM of precision `prec` on host memory with beta != 0, as
    /// `hyblas tune offload` times them.
    pub fn square(prec: char, n: usize) -> Problem {
        let i = prec_index(prec);
        Problem {
            prec: ['s', 'd', 'c', 'z'][i],
            elem: [4, 8, 8, 16][i],
            complex: i >= 2,
            m: n,
            n,
            k: n,
            host: [true; 3],
            c_in: true,
            op: Op::Gemm,
        }
    }

    /// The size the model's tables are keyed by: cbrt(m n k).
    pub fn size(&self) -> f64 {
        (self.m as f64 * self.n as f64 * self.k.max(1) as f64).cbrt()
    }

    /// Real flops (8 per complex multiply-add).
    pub fn flops(&self) -> f64 {
        let f = 2.0 * self.m as f64 * self.n as f64 * self.k as f64;
        if self.complex {
            4.0 * f
        } else {
            f
        }
    }
}

/// The shape of a host Level-3 call other than GEMM, for the cost model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level3 {
    /// C (m x n) := alpha*A*B + beta*C (`left`) or alpha*B*A + beta*C; A symmetric/Hermitian of
    /// order m (left) or n.
    Symm { left: bool, m: usize, n: usize },
    /// The triangle of C (n x n) := alpha*op(A)*op(A)^T + beta*C, op(A) n x k (also HERK).
    Syrk { n: usize, k: usize },
    /// The triangle of C (n x n) := alpha*op(A)*op(B)^T + alpha*op(B)*op(A)^T + beta*C.
    Syr2k { n: usize, k: usize },
    /// B (m x n) := alpha*op(A)*B (`left`) or alpha*B*op(A); A triangular.
    Trmm { left: bool, m: usize, n: usize },
    /// B (m x n) := alpha*op(A)^-1*B (`left`) or alpha*B*op(A)^-1.
    Trsm { left: bool, m: usize, n: usize },
}

impl Problem {
    /// The problem the model prices for an offload executor's Level-3 call.
    pub fn of_call<T: Scalar>(call: &crate::hybrid::offload::l3::Call<T>) -> Problem {
        use crate::hybrid::offload::l3::Kind;
        let left = call.side == crate::types::Side::Left;
        let (m, n) = (call.m, call.n);
        let r = match call.kind {
            Kind::Symm | Kind::Hemm => Level3::Symm { left, m, n },
            Kind::Syrk | Kind::Herk => Level3::Syrk { n, k: call.k },
            Kind::Syr2k | Kind::Her2k => Level3::Syr2k { n, k: call.k },
            Kind::Trmm => Level3::Trmm { left, m, n },
            Kind::Trsm => Level3::Trsm { left, m, n },
        };
        Problem::level3::<T>(r, !call.reads(), call.beta.is_zero())
    }

    /// The GEMM the model prices for a Level-3 call (GEMM slots: A m x k, B k x n, C m x n; real
    /// flops 2mnk, x4 for complex):
    /// - SYRK n, k: m = n, n' = n/2 (the triangle), k; A = op(A) once (n*k), no B, C = the
    ///   triangle (n*n/2) in (beta != 0) and out. Flops n*n*k.
    /// - SYR2K: as SYRK with k' = 2k (A and B both cross: 2*n*k), flops 2*n*n*k.
    /// - SYMM left m x n: m, n, k = m (A counted whole: the stored triangle plus the diagonal
    ///   blocks cross, about m*m/2; counting m*m errs towards the CPU), flops 2*m*m*n. Right:
    ///   the transpose (m' = n, n' = m, k = n).
    /// - TRMM/TRSM left m x n: m, n, k = m/2 (A's triangle m*m/2), no B slot, C = B in and out;
    ///   flops m*m*n. Right: the transpose.
    ///
    /// alpha == 0 reads neither A nor B (k = 0; TRMM/TRSM then do not read B either), beta == 0
    /// does not read C.
    pub fn level3<T: Scalar>(r: Level3, alpha_zero: bool, beta_zero: bool) -> Problem {
        let half = |x: usize| x.div_ceil(2);
        // (m, n, k, B slot on the host, C read)
        let (m, n, k, b_slot, c_in) = match r {
            Level3::Syrk { n, k } => (n, half(n), k, false, !beta_zero),
            Level3::Syr2k { n, k } => (n, half(n), 2 * k, false, !beta_zero),
            Level3::Symm { left: true, m, n } => (m, n, m, true, !beta_zero),
            Level3::Symm { left: false, m, n } => (n, m, n, true, !beta_zero),
            Level3::Trmm { left: true, m, n } | Level3::Trsm { left: true, m, n } => {
                (m, n, half(m), false, !alpha_zero)
            }
            Level3::Trmm { left: false, m, n } | Level3::Trsm { left: false, m, n } => {
                (n, m, half(n), false, !alpha_zero)
            }
        };
        let base = Problem::gemm::<T>(m, n, k, alpha_zero, !c_in);
        let op = match r {
            Level3::Symm { .. } => Op::Symm,
            Level3::Syrk { .. } => Op::Syrk,
            Level3::Syr2k { .. } => Op::Syr2k,
            Level3::Trmm { .. } => Op::Trmm,
            Level3::Trsm { .. } => Op::Trsm,
        };
        Problem { host: [true, b_slot, true], op, ..base }
    }
}
