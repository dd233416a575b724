// Accurate DGEMM on the GPU (issue 49): the Ozaki scheme in its int8 Chinese-remainder form
// (Ozaki scheme II), with a per-element certificate. Host side: src/gpu/ozaki.rs (launches)
// and src/plan/accurate.rs (the choice of bits, the exact fallback); design: docs/ozaki.md.
//
// Each row of op(A) (and column of op(B)) x of length k is scaled by its own power of two so
// that its largest entry lies just below 2^beta, and rounded to integers:
//     a'_l = round(x_l * 2^(beta - E)),   max |x_l| < 2^E,   |a'_l| <= 2^beta.
// The exact integer product P = A' B' is computed modulo N pairwise coprime moduli p_t <= 256:
// the residues of A' and B' are int8 (symmetric, |r| <= 128), so each modulus is one int8 GEMM
// with exact int32 sums (k < 2^17), run by the real cuBLAS. The Chinese remainder theorem gives
// P back exactly (M = prod p_t > 2 |P|). The rounding of A and B to A' and B' is bounded per
// element from the vectors' 1-norms; the certification then proves each element of
// alpha*A*B + beta*C faithful (or nearest) or leaves it to the host's exact path.
//
// Kernels (all 'd'):
//   doz_amax, doz_finish_max   per vector: the exponent E, Inf/NaN
//   doz_sum, doz_finish_sum    per vector: nu = sum |x_l| 2^-E, rounded up
//   doz_sample                 alpha*dot + beta*c of sampled elements (the planner's estimate)
//   doz_residues               the int8 residues of the scaled vectors, every modulus
//   doz_crt                    per element of C: P from its residues, certified, or listed
//   doz_gather, doz_gather_c, doz_scatter   the host fallback's data in and its results out
//   doz_zexpand_a, doz_zexpand_b   ZGEMM's operands as real matrices (the real view below)
//
// A vector set is addressed generically: vector v, entry l at x[v*sv + l*sl] (a row of op(A)
// or a column of op(B), transposed or not).

#if HB_PREC(d)

// 1.5 * 2^52: added to a double of magnitude below 2^51 it rounds it to an integer, held in the
// low bits of the sum's mantissa (two's complement).
#define OZ_MAGIC 6755399441055744.0

// x mod p in [0, p) for an integer-valued |x| < 2^53 (the pw table's fill): q may be one off,
// the fma's result is exact (a small integer), and the fix-ups bring it into range.
__device__ __forceinline__ double oz_mod(double x, double p, double invp) {
    const double q = floor(x * invp);
    double r = fma(-q, p, x);
    if (r < 0.0) r += p;
    else if (r >= p) r -= p;
    return r;
}

// A residue of the integer-valued x (|x| < 2^53) modulo p, within one of [-p/2, p/2]: q is the
// integer nearest x / p (or one off; the magic constant rounds without the slow conversion
// pipe), and the fma's result is exact.
__device__ __forceinline__ double oz_rem(double x, double p, double invp) {
    const double q = fma(x, invp, OZ_MAGIC) - OZ_MAGIC;
    return fma(-q, p, x);
}

// The integer-valued |r| < 2^31 as an int, without a conversion instruction.
__device__ __forceinline__ int oz_int(double r) {
    return __double2loint(r + OZ_MAGIC);
}

// An unsigned 32-bit integer as a double, without a conversion instruction (2^52 + x, exact).
__device__ __forceinline__ double oz_u2d(unsigned x) {
    return __hiloint2double(0x43300000, (int)x) - 4503599627370496.0;
}

// x * 2^e rounded once, as ldexp, by one multiplication where 2^e is a normal double.
__device__ __forceinline__ double oz_scale(double x, int e) {
    if (e >= -1022 && e <= 1023) return x * __longlong_as_double((long long)(1023 + e) << 52);
    return ldexp(x, e);
}

// 32-bit limbs of M (the moduli's product), as src/gpu/ozaki.rs's LIMBS.
#define OZ_LIMBS 12
// Entries per chunk of the per-vector passes.
#define OZ_CHUNK 256
// Most moduli (src/gpu/ozaki.rs's MODULI: 49), and shifts of an entry's 53-bit mantissa (beta is
// at most 170 bits: 2 beta + log2 k + 2 within the moduli's 342).
#define OZ_MAXMOD 49
#define OZ_MAXSH 128

#define OZ_U 0x1p-53

// ---- Per-vector scans ----

// Partial maxima: pmax[c * nvec + v] = max |x_l| over chunk c of vector v (Inf or NaN: -1).
extern "C" __global__ void doz_amax(i64 nvec, i64 k, const double* x, i64 sv, i64 sl, double* pmax) {
    const i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 c = blockIdx.y;
    if (v >= nvec) return;
    const double* p = x + v * sv;
    const i64 l1 = min(k, (c + 1) * OZ_CHUNK);
    double m = 0.0;
    bool bad = false;
    for (i64 l = c * OZ_CHUNK; l < l1; l++) {
        const double a = fabs(p[l * sl]);
        if (a <= 1.7976931348623157e308) m = fmax(m, a);
        else bad = true;
    }
    pmax[c * nvec + v] = bad ? -1.0 : m;
}

// The same for vectors whose entries are contiguous (sl == 1): a warp per (vector, chunk), its
// lanes along the entries (coalesced), reduced by shuffles.
extern "C" __global__ void doz_amax_c(i64 nvec, i64 k, const double* x, i64 sv, double* pmax) {
    const i64 v = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    const i64 c = blockIdx.y;
    if (v >= nvec) return;
    const double* p = x + v * sv;
    const i64 l1 = min(k, (c + 1) * OZ_CHUNK);
    double m = 0.0;
    int bad = 0;
    for (i64 l = c * OZ_CHUNK + lane; l < l1; l += 32) {
        const double a = fabs(p[l]);
        if (a <= 1.7976931348623157e308) m = fmax(m, a);
        else bad = 1;
    }
    for (int o = 16; o; o >>= 1) {
        m = fmax(m, __shfl_xor_sync(0xffffffffu, m, o));
        bad |= __shfl_xor_sync(0xffffffffu, bad, o);
    }
    if (lane == 0) pmax[c * nvec + v] = bad ? -1.0 : m;
}

// e[v]: the smallest E with max |x_l| < 2^E (0 for a zero vector); bad[v]: an Inf or NaN.
extern "C" __global__ void doz_finish_max(i64 nvec, i64 chunks, const double* pmax, int* e, int* bad) {
    const i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nvec) return;
    double m = 0.0;
    bool b = false;
    for (i64 c = 0; c < chunks; c++) {
        const double x = pmax[c * nvec + v];
        if (x < 0.0) b = true;
        else m = fmax(m, x);
    }
    int ex = 0;
    if (m > 0.0) frexp(m, &ex); // m = f 2^ex, f in [0.5, 1): m < 2^ex
    e[v] = ex;
    bad[v] = b ? 1 : 0;
}

// Partial sums of |x_l| 2^-E per chunk (each term exact but for underflow), in order.
extern "C" __global__ void doz_sum(i64 nvec, i64 k, const double* x, i64 sv, i64 sl, const int* e, double* psum) {
    const i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 c = blockIdx.y;
    if (v >= nvec) return;
    const double* p = x + v * sv;
    const i64 l1 = min(k, (c + 1) * OZ_CHUNK);
    const int ex = e[v];
    double s = 0.0;
    for (i64 l = c * OZ_CHUNK; l < l1; l++) {
        const double a = fabs(p[l * sl]);
        if (a <= 1.7976931348623157e308) s += oz_scale(a, -ex);
    }
    psum[c * nvec + v] = s;
}

// The same for contiguous entries (a warp per (vector, chunk); a fixed summation tree).
extern "C" __global__ void doz_sum_c(i64 nvec, i64 k, const double* x, i64 sv, const int* e, double* psum) {
    const i64 v = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    const i64 c = blockIdx.y;
    if (v >= nvec) return;
    const double* p = x + v * sv;
    const i64 l1 = min(k, (c + 1) * OZ_CHUNK);
    const int ex = e[v];
    double s = 0.0;
    for (i64 l = c * OZ_CHUNK + lane; l < l1; l += 32) {
        const double a = fabs(p[l]);
        if (a <= 1.7976931348623157e308) s += oz_scale(a, -ex);
    }
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) psum[c * nvec + v] = s;
}

// nu[v] >= sum_l |x_l| 2^-E: the chunks' sums added in order, then rounded up for the k
// roundings of the sums (gamma_k < 2 (k + 2) u) and for terms lost to underflow (2^-1074 each,
// far below the slack added).
extern "C" __global__ void doz_finish_sum(i64 nvec, i64 chunks, i64 k, const double* psum, double* nu) {
    const i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nvec) return;
    double s = 0.0;
    for (i64 c = 0; c < chunks; c++) s += psum[c * nvec + v];
    nu[v] = s * (1.0 + (double)(k + 2) * 0x1p-51) + 0x1p-1000;
}

// ---- The planner's sample ----

// z[s] = alpha * dot(row is[s] of op(A), column js[s] of op(B)) + beta * C[is, js], plain FP64
// (one warp per sample).
extern "C" __global__ void doz_sample(i64 count, i64 k, const double* a, i64 sva, i64 sla, const double* b, i64 svb,
                                      i64 slb, double alpha, double beta, const double* c, i64 ldc, const i64* is,
                                      const i64* js, double* z) {
    const i64 s = (i64)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (s >= count) return;
    const i64 i = is[s], j = js[s];
    const double* pa = a + i * sva;
    const double* pb = b + j * svb;
    double d = 0.0;
    for (i64 l = lane; l < k; l += 32) d = fma(pa[l * sla], pb[l * slb], d);
    for (int o = 16; o; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
    if (lane == 0) z[s] = beta == 0.0 ? alpha * d : alpha * d + beta * c[i + j * ldc];
}

// ---- Residues ----

// The int8 residues of the scaled vectors: out[t * tstride + v * kpad + l] = a'_l mod p_t in
// [-128, 127] for l < k, 0 for k <= l < kpad, where a'_l = round(x_l * 2^(beta - e[v]))
// (0 for a vector holding an Inf or NaN). inexact[v] |= 1 where some a'_l != x_l 2^(beta-E).
// A block is 32 x 8 threads over a tile of 32 vectors x 32 entries, read along whichever index
// is contiguous in memory (sl == 1: along l) and written along l.
extern "C" __global__ void doz_residues(i64 nvec, i64 k, i64 kpad, const double* x, i64 sv, i64 sl, const int* e,
                                        const int* bad, int beta, int nmod, const double* mods, signed char* out,
                                        i64 tstride, int* inexact) {
    __shared__ double tile[32][33];
    // pw[t][s] = 2^s mod p_t for the shifts entries can need (|a'| <= 2^beta: s <= beta - 52).
    __shared__ unsigned char pw[OZ_MAXMOD][OZ_MAXSH];
    const int tx = threadIdx.x, ty = threadIdx.y;
    {
        const int tid = ty * 32 + tx;
        if (tid < nmod) {
            const double p = mods[2 * tid], invp = mods[2 * tid + 1];
            double r = 1.0;
            for (int s = 0; s < OZ_MAXSH; s++) {
                pw[tid][s] = (unsigned char)(int)r; // (p = 256: 2^s mod 256 < 256)
                r = oz_mod(2.0 * r, p, invp);
            }
        }
    }
    const i64 v0 = (i64)blockIdx.y * 32, l0 = (i64)blockIdx.x * 32;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        // (vl, ll): the tile entry this thread loads.
        const int vl = sl == 1 ? ty + 8 * q : tx;
        const int ll = sl == 1 ? tx : ty + 8 * q;
        const i64 v = v0 + vl, l = l0 + ll;
        tile[vl][ll] = (v < nvec && l < k) ? x[v * sv + l * sl] : 0.0;
    }
    __syncthreads();
#pragma unroll 1
    for (int q = 0; q < 4; q++) {
        const int vl = ty + 8 * q;
        const i64 v = v0 + vl, l = l0 + tx;
        if (v >= nvec) break;
        const bool skip = l >= k || bad[v];
        double a = 0.0;
        bool inex = false;
        if (!skip) {
            const double y = oz_scale(tile[vl][tx], beta - e[v]);
            a = rint(y);
            inex = a != y;
        }
        // a = mant * 2^sh with mant an integer below 2^53 in magnitude (signed).
        double mant = a;
        int sh = 0;
        if (fabs(a) >= 0x1p53) {
            // The exponent field moved to 2^52: mant in [2^52, 2^53), a = mant 2^sh.
            const long long b = __double_as_longlong(a);
            sh = (int)((b >> 52) & 0x7ff) - 1075;
            mant = __longlong_as_double((b & (long long)0x800FFFFFFFFFFFFFull) | (1075LL << 52));
        }
        if (l < kpad) {
            signed char* o = out + v * kpad + l;
            for (int t = 0; t < nmod; t++) {
                const double p = mods[2 * t], invp = mods[2 * t + 1];
                double r = oz_rem(mant, p, invp);
                // (|r| <= 129 and 2^sh mod p < 256: the product is exact.)
                if (sh > 0) {
                    // In int32 (the table's byte to double would take the slow conversion pipe).
                    const int prod = oz_int(r) * (int)pw[t][sh];
                    r = oz_rem(__hiloint2double(0x43300000, prod ^ 0x80000000) - 4503601774854144.0, p, invp);
                }
                // Into [-128, 127]: int8 (for odd p, within [-(p-1)/2, (p-1)/2] or -128).
                if (r > 127.0) r -= p;
                else if (r < -128.0) r += p;
                o[t * tstride] = (signed char)oz_int(r);
            }
        }
        const unsigned any = __ballot_sync(0xffffffffu, inex);
        if (any && tx == 0) atomicOr(inexact + v, 1);
    }
}

// ---- Reconstruction and certification ----

__device__ __forceinline__ void oz_two_sum(double a, double b, double& s, double& e) {
    s = a + b;
    const double bb = s - a;
    e = (a - (s - bb)) + (b - bb);
}

// The smaller gap from the finite non-zero double r to its neighbours.
__device__ __forceinline__ double oz_ulp_min(double r) {
    const double a = fabs(r);
    if (a == 0.0) return 0x1p-1074;
    const long long bits = __double_as_longlong(a);
    const double up = __longlong_as_double(bits + 1) - a;
    const double down = a - __longlong_as_double(bits - 1);
    return fmin(up, down);
}

// The table (src/gpu/ozaki.rs, `Crt::table`), u32 words: p_t (nmod), W_t (nmod x LIMBS, the
// CRT weights (M/p_t) ((M/p_t)^-1 mod p_t), little-endian limbs), M (LIMBS), floor(M/2)
// (LIMBS); then the doubles M (approximately) at a double-aligned offset given separately.

// Element (i, j0 + jj) of C, for jj < nb: P from its residues (ci[t * cstride + i + jj * m], the
// int32 outputs of the int8 GEMMs), then alpha * (P 2^u + rho) + beta * c certified, with
// |rho| <= the rounding of A and B to A' and B' (from the vectors' norms). Certified: written to
// C. Otherwise C is left as it was and the element listed (status 1: the exact path; 2: IEEE,
// an Inf or NaN in its row, column or C): status[i + jj * m] and, for the first `cap`,
// list[n] = i | j << 32, with *count their number.
// The kernel's body for M of L limbs (the table's rows stay OZ_LIMBS wide): the loops then
// run over the limbs in use only (predicated iterations still issue: with every loop at 12 limbs,
// instruction issue bound the kernel, measured under Nsight Compute).
template <int L>
__device__ __forceinline__ void oz_crt(i64 m, i64 nb, i64 j0, i64 k, const int* ci, i64 cstride, int nmod,
                                   const unsigned* table, const double* mods, double mhat, const int* ea, const double* nua,
                                   const int* bada, const int* inxa, const int* eb, const double* nub, const int* badb,
                                   const int* inxb, int beta_bits, double alpha, double beta, double* c, i64 ldc,
                                   int nearest, unsigned char* status, unsigned long long* list, i64 cap,
                                   unsigned long long* count) {
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 jj = blockIdx.y;
    if (i >= m || jj >= nb) return;
    const i64 j = j0 + jj;
    double* cp = c + i + j * ldc;
    const double old = beta == 0.0 ? 0.0 : *cp;
    int st = 0;
    double result = 0.0;
    if (bada[i] || badb[j] || !(fabs(old) <= 1.7976931348623157e308)) {
        st = 2;
    } else {
        // X = sum_t r_t W_t in 32-bit limbs held in 64-bit sums (r_t < 256, a limb below 2^32,
        // at most 64 moduli: no sum passes 2^46).
        const unsigned* w = table + nmod;
        const unsigned* mod_m = w + nmod * OZ_LIMBS;
        const unsigned* half_m = mod_m + OZ_LIMBS;
        unsigned long long acc[L + 1];
#pragma unroll
        for (int l = 0; l <= L; l++) acc[l] = 0;
        const int* cv = ci + i + jj * m;
        for (int t = 0; t < nmod; t++) {
            // (An int32 remainder by a variable divisor costs about 20 instructions, and int to
            // double conversions run on a slow pipe; a few FP64 operations do it here.)
            // The int32 as a double without a conversion instruction (2^52 + 2^31 + v, exact).
            const double v = __hiloint2double(0x43300000, cv[t * cstride] ^ 0x80000000) - 4503601774854144.0;
            const double p = mods[2 * t];
            double r = oz_rem(v, p, mods[2 * t + 1]);
            if (r < 0.0) r += p;
            if (r >= p) r -= p;
            const unsigned rr = (unsigned)oz_int(r);
            const unsigned* wt = w + t * OZ_LIMBS;
            // (32 x 32 -> 64-bit products: one wide multiply-add each.)
#pragma unroll
            for (int l = 0; l < L; l++) acc[l] += (unsigned long long)rr * wt[l];
        }
        // Carries: X in limbs x[0..=LIMBS].
        unsigned x[L + 1];
        unsigned long long carry = 0;
#pragma unroll
        for (int l = 0; l <= L; l++) {
            const unsigned long long s = acc[l] + carry;
            x[l] = (unsigned)s;
            carry = s >> 32;
        }
        // X mod M: q = floor(X / M) estimated in FP64 (one off at most), X -= q M, fixed up.
        double xd = 0.0;
#pragma unroll
        for (int l = L; l >= 0; l--) xd = xd * 0x1p32 + oz_u2d(x[l]);
        const double q = floor(xd / mhat);
        {
            const unsigned long long qq = (unsigned long long)q;
            long long b = 0;
#pragma unroll
            for (int l = 0; l <= L; l++) {
                const unsigned long long pm = (l < L ? qq * mod_m[l] : 0ull);
                const long long s = (long long)x[l] - (long long)(pm & 0xffffffffull) + b;
                x[l] = (unsigned)s;
                b = (s >> 32) - (long long)(pm >> 32);
            }
            // b < 0: X went negative (q one too large): add M back.
            if (b < 0) {
                unsigned long long cy = 0;
#pragma unroll
                for (int l = 0; l <= L; l++) {
                    const unsigned long long s = (unsigned long long)x[l] + (l < L ? mod_m[l] : 0u) + cy;
                    x[l] = (unsigned)s;
                    cy = s >> 32;
                }
            }
        }
        // X >= M (q one too small): subtract M.
        {
            bool ge = x[L] != 0;
            if (!ge) {
                ge = true; // equal so far
#pragma unroll
                for (int l = L - 1; l >= 0; l--) {
                    if (x[l] != mod_m[l]) {
                        ge = x[l] > mod_m[l];
                        break;
                    }
                }
            }
            if (ge) {
                long long b = 0;
#pragma unroll
                for (int l = 0; l <= L; l++) {
                    const long long s = (long long)x[l] - (long long)(l < L ? mod_m[l] : 0u) + b;
                    x[l] = (unsigned)s;
                    b = s >> 32;
                }
            }
        }
        // Centred: X > M/2 stands for X - M (negative).
        bool gt = false;
#pragma unroll
        for (int l = L - 1; l >= 0; l--) {
            if (x[l] != half_m[l]) {
                gt = x[l] > half_m[l];
                break;
            }
        }
        const bool neg = gt;
        if (neg) {
            long long b = 0;
#pragma unroll
            for (int l = 0; l < L; l++) {
                const long long s = (long long)mod_m[l] - (long long)x[l] + b;
                x[l] = (unsigned)s;
                b = s >> 32;
            }
        }
        // |P| = hi + lo + delta, summed from the top limb down in double-double; |delta| below
        // 2^-98 |hi| (at most 12 steps of 2^-105 each).
        double hi = 0.0, lo = 0.0;
#pragma unroll
        for (int l = L - 1; l >= 0; l--) {
            const double term = oz_u2d(x[l]) * __longlong_as_double((long long)(1023 + 32 * l) << 52);
            double s, e;
            oz_two_sum(hi, term, s, e);
            e += lo;
            hi = s + e;
            lo = e - (hi - s);
        }
        const double delta = hi * 0x1p-98;
        if (neg) {
            hi = -hi;
            lo = -lo;
        }
        // The rounding of A and B to A' and B' (|RA|, |RB| at most half a unit of their vector),
        // in units of 2^u: A B = 2^u A'B' + 2^-s A' RB + RA B, bounded by
        // (RB != 0) (2^beta nu_i + k/2) / 2 + (RA != 0) 2^beta nu_j / 2 (nu: the norms, scaled).
        const int u = ea[i] + eb[j] - 2 * beta_bits;
        double dev = 0.0;
        if (inxb[j]) dev += 0.5 * (oz_scale(nua[i], beta_bits) + 0.5 * (double)k);
        if (inxa[i]) dev += 0.5 * oz_scale(nub[j], beta_bits);
        const double tail_units = (dev + delta) * (1.0 + 0x1p-40);
        // alpha * (x1 + x2) + beta * old, as cpu::ozaki::certify (no FP64 rest here).
        const double x1 = oz_scale(hi, u), x2 = oz_scale(lo, u);
        double p1, q1, p4 = 0.0, q4 = 0.0;
        if (alpha == 1.0) {
            p1 = x1;
            q1 = 0.0;
        } else {
            p1 = alpha * x1;
            q1 = fma(alpha, x1, -p1);
        }
        if (beta != 0.0) {
            p4 = beta * old;
            q4 = fma(beta, old, -p4);
        }
        const double p2 = alpha * x2;
        st = 1;
        if (fabs(p1) < 1e300 && fabs(p4) < 1e300) {
            double s1, e1, r, e2;
            oz_two_sum(p1, p4, s1, e1);
            const double wsum = q1 + q4 + e1 + p2;
            oz_two_sum(s1, wsum, r, e2);
            if (fabs(r) <= 1.7976931348623157e308 && fabs(r) >= 0x1p-600) {
                const double gamma5 = 5.0 * OZ_U / (1.0 - 5.0 * OZ_U) * (1.0 + 4.0 * OZ_U);
                const double tail = fabs(alpha) * oz_scale(tail_units, u);
                const double err = tail + (alpha == 1.0 ? 1.01 : 2.01) * OZ_U * fabs(p2) +
                                   gamma5 * (fabs(q1) + fabs(q4) + fabs(e1) + fabs(p2)) + 0x1p-1020;
                const double total = (fabs(e2) + err) * (1.0 + 16.0 * OZ_U);
                const double gap = oz_ulp_min(r);
                if (total < (nearest ? 0.5 * gap : gap)) {
                    st = 0;
                    result = r;
                }
            }
        }
    }
    status[i + jj * m] = (unsigned char)st;
    if (st == 0) {
        *cp = result;
    } else {
        const unsigned long long n = atomicAdd(count, 1ull);
        if ((i64)n < cap) list[n] = (unsigned long long)i | ((unsigned long long)j << 32);
    }
}

extern "C" __global__ void doz_crt(i64 m, i64 nb, i64 j0, i64 k, const int* ci, i64 cstride, int nmod, int limbs,
                                   const unsigned* table, const double* mods, double mhat, const int* ea, const double* nua,
                                   const int* bada, const int* inxa, const int* eb, const double* nub, const int* badb,
                                   const int* inxb, int beta_bits, double alpha, double beta, double* c, i64 ldc,
                                   int nearest, unsigned char* status, unsigned long long* list, i64 cap,
                                   unsigned long long* count) {
    // M's limbs select the instance (uniform across the grid).
#define OZ_CRT_CASE(L) \
    case L: oz_crt<L>(m, nb, j0, k, ci, cstride, nmod, table, mods, mhat, ea, nua, bada, inxa, eb, nub, badb, inxb, beta_bits, alpha, beta, c, ldc, nearest, status, list, cap, count); break;
    switch (limbs) {
        OZ_CRT_CASE(1) OZ_CRT_CASE(2) OZ_CRT_CASE(3) OZ_CRT_CASE(4) OZ_CRT_CASE(5) OZ_CRT_CASE(6)
        OZ_CRT_CASE(7) OZ_CRT_CASE(8) OZ_CRT_CASE(9) OZ_CRT_CASE(10) OZ_CRT_CASE(11) OZ_CRT_CASE(12)
    default: break;
    }
#undef OZ_CRT_CASE
}

// ---- The host fallback's data ----

// out[r * k + l] = x[idx[r] * sv + l * sl]: the listed vectors, each contiguous.
extern "C" __global__ void doz_gather(i64 count, i64 k, const double* x, i64 sv, i64 sl, const i64* idx, double* out) {
    const i64 l = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    const i64 r = blockIdx.y;
    if (l >= k || r >= count) return;
    out[r * k + l] = x[idx[r] * sv + l * sl];
}

// out[s] = C at the listed element s (list[s] = i | j << 32).
extern "C" __global__ void doz_gather_c(i64 count, const unsigned long long* list, const double* c, i64 ldc,
                                        double* out) {
    const i64 s = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count) return;
    const unsigned long long e = list[s];
    out[s] = c[(i64)(e & 0xffffffffull) + (i64)(e >> 32) * ldc];
}

// C at the listed element s := vals[s].
extern "C" __global__ void doz_scatter(i64 count, const unsigned long long* list, const double* vals, double* c,
                                       i64 ldc) {
    const i64 s = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count) return;
    const unsigned long long e = list[s];
    c[(i64)(e & 0xffffffffull) + (i64)(e >> 32) * ldc] = vals[s];
}

// ---- ZGEMM as a real product (plan::accurate::zgemm's real view) ----

// op(A) (m x k complex, [re, im] pairs; trans 0 N, 1 T, 2 C) into the 2m x 2k real matrix `out`
// (column-major, ld 2m) whose row 2i is [Re a_i, -Im a_i] and row 2i + 1 is [Im a_i, Re a_i].
extern "C" __global__ void doz_zexpand_a(i64 m, i64 k, const double* a, i64 lda, int trans, double* out) {
    const i64 total = 4 * m * k;
    for (i64 x = (i64)blockIdx.x * blockDim.x + threadIdx.x; x < total; x += (i64)gridDim.x * blockDim.x) {
        const i64 r = x % (2 * m), l = x / (2 * m);
        const i64 i = r >> 1, ll = l < k ? l : l - k;
        const i64 at = trans == 0 ? i + ll * lda : ll + i * lda;
        const double re = a[2 * at];
        const double im = trans == 2 ? -a[2 * at + 1] : a[2 * at + 1];
        out[x] = l < k ? ((r & 1) ? im : re) : ((r & 1) ? re : -im);
    }
}

// op(B) (k x n complex) into the 2k x n real matrix `out` (ld 2k) whose column j is
// [Re b_j; Im b_j].
extern "C" __global__ void doz_zexpand_b(i64 k, i64 n, const double* b, i64 ldb, int trans, double* out) {
    const i64 total = 2 * k * n;
    for (i64 x = (i64)blockIdx.x * blockDim.x + threadIdx.x; x < total; x += (i64)gridDim.x * blockDim.x) {
        const i64 l = x % (2 * k), j = x / (2 * k);
        const i64 ll = l < k ? l : l - k;
        const i64 at = trans == 0 ? ll + j * ldb : j + ll * ldb;
        out[x] = l < k ? b[2 * at] : (trans == 2 ? -b[2 * at + 1] : b[2 * at + 1]);
    }
}

#endif
