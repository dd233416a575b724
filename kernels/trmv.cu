// TRMV kernels: x := op(A) x, A n x n triangular (seed 004's load-balanced STRMV, for every
// uplo / trans / diag and the four precisions).
//
// Two passes and never atomics:
//   1. trmv_n / trmv_t add fixed pieces of the triangle times x into partial sums in the
//      workspace W (one partial per piece and output element);
//   2. trmv_sum adds each output element's partials in a fixed order and writes x.
// The pieces (panels, strands, segments) depend only on n and the device, never on the block
// shape, and every sum inside a piece runs in a fixed order, so results are bitwise identical
// for every block shape. x is read by pass 1 and written by pass 2 only, so x may be
// overwritten in place. trmv_gather packs a strided or misaligned x first, so the passes read a
// contiguous, 16-byte aligned x.
//
// Kernels index threads flatly (tid = threadIdx.y * blockDim.x + threadIdx.x) where the shape
// does not matter, so any block shape the tuner or a test forces works.
//
// No-trans (trmv_n): GEMV-N restricted to the triangle. Columns are cut into panels of
// TRMV_G strands of `sw` columns. A block takes one panel and tx*V consecutive rows of it
// (V = 16 / sizeof(T) rows per thread: one 16-byte load per column). Thread (x, y) sums
// strands y, y+ty, ... of its V rows, each strand in column order, into shared memory; the
// block then adds the TRMV_G strand sums of each row in strand order and writes W[p*n + i].
// Panels p and np-1-p are paired (a long one with a short one: the seed's pairing of the top
// and bottom row blocks), so every pair holds about the same number of equal tiles and the
// flat grid over pairs balances the 132 SMs by itself.
//
// Trans / conj (trmv_t): GEMV-T restricted. A warp takes one column j within one segment of
// `seg` rows; lane l reads rows l*V .. l*V+V-1 of each stripe of 32*V rows with 16-byte loads
// and keeps V accumulators (added in order at the end), then the warp adds its lanes with the
// fixed shuffle tree and writes W[r*n + j]. Segments r and nseg-1-r are paired likewise.
// Where the column stride is a multiple of 128 KiB (the host's choice, double only), the
// staggered kernel `trmv_ts` walks column j's whole groups of TRMV_UT stripes from group
// j % groups, wrapping around: warps in flight (neighbouring columns) then read different rows
// instead of addresses a multiple of the stride apart, which such strides map onto the same
// memory channels (GEMV-T staggers too). On an H200 (session 10) it took DTRMV-UTN 16384 from
// 256.4 to 245.8 us. Its loop (a wrapping group counter) costs registers and speed elsewhere
// (CTRMV-UTN 13%, STRMV-UTN 2-4% at every n when it was the only kernel; two loops did worse),
// hence a separate kernel used only at such strides; for complex double the gain did not
// repeat across machines. The order depends on (n, j, the segment) only, so it is still fixed.
//
// Only the referenced triangle is read: diagonal tiles and stripes load element by element
// under a mask, and a unit diagonal is never loaded (1 is used in its place).

template <typename T> struct __align__(16) vec16 { T v[16 / sizeof(T)]; };

// Strands per panel (part of the summation order: changing it changes the last bits).
#define TRMV_G 8
// Columns per unrolled step of trmv_n and stripes per unrolled step of trmv_t: independent
// 16-byte loads each thread keeps in flight.
#ifndef TRMV_UN
#define TRMV_UN 8
#endif
#ifndef TRMV_UT
#define TRMV_UT 4
#endif

// Flag bits of the entry points.
#define TRMV_UPPER 1
#define TRMV_UNIT 2
#define TRMV_CONJ 4
#define TRMV_VEC 8

__device__ __forceinline__ i64 min64(i64 a, i64 b) { return a < b ? a : b; }
__device__ __forceinline__ i64 max64(i64 a, i64 b) { return a > b ? a : b; }

// A 16-byte load of A (read once: see ld_stream16).
template <typename T> __device__ __forceinline__ vec16<T> ld_a16(const T* p) { return ld_stream16<vec16<T>>(p); }

template <typename T, bool CONJ> __device__ __forceinline__ T op_t(T a) { return CONJ ? conj_t(a) : a; }

extern __shared__ __align__(16) unsigned char trmv_smem[];

// ---- No-trans ----

// Tiles of `rb` rows in panel p: a lower panel holds rows [p*cp, n), an upper one [0, (p+1)*cp).
__device__ __forceinline__ i64 trmv_n_tiles(bool upper, i64 n, i64 cp, i64 rb, i64 p) {
    const i64 rows = upper ? min64(n, (p + 1) * cp) : n - p * cp;
    return (rows + rb - 1) / rb;
}

// Add columns [j0, j1) of rows i0 .. i0+V-1 (all inside the triangle) into acc, column by
// column. Addresses advance by lda per load (no hoisted u*lda offsets: registers are the
// occupancy limit here).
template <typename T, bool VEC>
__device__ __forceinline__ void trmv_n_full(i64 n, const T* a, i64 lda, const T* x, i64 i0, i64 j0, i64 j1,
                                            T (&acc)[16 / sizeof(T)]) {
    constexpr int V = 16 / sizeof(T);
    if (j0 >= j1) return;
    const T* ap = a + i0 + j0 * lda;
    const T* xp = x + j0;
    if (VEC && i0 + V <= n) {
        i64 j = j0;
        for (; j + TRMV_UN <= j1; j += TRMV_UN) {
            vec16<T> av[TRMV_UN];
            T xv[TRMV_UN];
#pragma unroll
            for (int u = 0; u < TRMV_UN; u++) {
                av[u] = ld_a16(ap);
                ap += lda;
                xv[u] = xp[u];
            }
            xp += TRMV_UN;
#pragma unroll
            for (int u = 0; u < TRMV_UN; u++)
#pragma unroll
                for (int k = 0; k < V; k++) acc[k] = fma_t(av[u].v[k], xv[u], acc[k]);
        }
#pragma unroll 1
        for (; j < j1; j++, ap += lda, xp++) {
            const vec16<T> av = ld_a16(ap);
            const T xj = *xp;
#pragma unroll
            for (int k = 0; k < V; k++) acc[k] = fma_t(av.v[k], xj, acc[k]);
        }
    } else {
        // Misaligned A, or the last rows of the matrix: element loads.
#pragma unroll 1
        for (i64 j = j0; j < j1; j++, ap += lda, xp++) {
            const T xj = *xp;
#pragma unroll
            for (int k = 0; k < V; k++)
                if (i0 + k < n) acc[k] = fma_t(ap[k], xj, acc[k]);
        }
    }
}

// Add columns [j0, j1) of rows i0 .. i0+V-1 that cross the diagonal: only elements inside the
// triangle are loaded, and a unit diagonal counts as 1 without a load.
template <typename T>
__device__ __forceinline__ void trmv_n_diag(bool upper, bool unit, i64 n, const T* a, i64 lda, const T* x, i64 i0,
                                            i64 j0, i64 j1, T (&acc)[16 / sizeof(T)]) {
    constexpr int V = 16 / sizeof(T);
#pragma unroll 1
    for (i64 j = j0; j < j1; j++) {
        const T xj = x[j];
#pragma unroll
        for (int k = 0; k < V; k++) {
            const i64 i = i0 + k;
            if (i < n && (upper ? i <= j : i >= j)) {
                const T aij = (unit && i == j) ? one<T>() : a[i + j * lda];
                acc[k] = fma_t(aij, xj, acc[k]);
            }
        }
    }
}

template <typename T, bool VEC>
__device__ void trmv_n_body(i64 n, const T* a, i64 lda, const T* x, T* w, i64 sw, i64 np, i64 per_pair,
                            int flags) {
    constexpr int V = 16 / sizeof(T);
    const bool upper = flags & TRMV_UPPER, unit = flags & TRMV_UNIT;
    const i64 cp = TRMV_G * sw;
    const i64 rb = (i64)blockDim.x * V;
    // Which tile: pair q holds panel q, then panel np-1-q.
    const i64 q = (i64)blockIdx.x / per_pair;
    i64 t = (i64)blockIdx.x % per_pair;
    i64 p = q;
    const i64 first = trmv_n_tiles(upper, n, cp, rb, q);
    if (t >= first) {
        p = np - 1 - q;
        t -= first;
        if (p == q || t >= trmv_n_tiles(upper, n, cp, rb, p)) return;  // the whole block: no barrier skipped
    }
    const i64 row0 = (upper ? 0 : p * cp) + t * rb;
    const i64 row1 = min64(upper ? min64(n, (p + 1) * cp) : n, row0 + rb);
    const i64 c0 = p * cp, c1 = min64(n, c0 + cp);
    const i64 i0 = row0 + (i64)threadIdx.x * V;
    T* sm = reinterpret_cast<T*>(trmv_smem);

    // Strand sums of this thread's V rows, each into its own slot.
#pragma unroll 1
    for (int s = threadIdx.y; s < TRMV_G; s += blockDim.y) {
        T acc[V];
#pragma unroll
        for (int k = 0; k < V; k++) acc[k] = zero<T>();
        const i64 s0 = min64(c1, c0 + s * sw), s1 = min64(c1, s0 + sw);
        if (i0 < row1) {
            // Columns in increasing order: lower = full columns left of the diagonal, then the
            // diagonal band; upper = the band, then full columns to its right.
            const i64 d0 = max64(s0, i0), d1 = min64(s1, i0 + V);
            const i64 f0 = upper ? max64(s0, i0 + V) : s0, f1 = upper ? s1 : min64(s1, i0);
            if (upper) trmv_n_diag<T>(true, unit, n, a, lda, x, i0, d0, d1, acc);
            trmv_n_full<T, VEC>(n, a, lda, x, i0, f0, f1, acc);
            if (!upper) trmv_n_diag<T>(false, unit, n, a, lda, x, i0, d0, d1, acc);
        }
#pragma unroll
        for (int k = 0; k < V; k++) sm[s * rb + threadIdx.x * V + k] = acc[k];
    }
    __syncthreads();

    // Each row: its strand sums in strand order.
    const int nt = blockDim.x * blockDim.y;
    for (int r = threadIdx.y * blockDim.x + threadIdx.x; r < rb; r += nt) {
        const i64 i = row0 + r;
        if (i < row1) {
            T sum = sm[r];
#pragma unroll
            for (int s = 1; s < TRMV_G; s++) sum = sum + sm[s * rb + r];
            w[p * n + i] = sum;
        }
    }
}

// ---- Trans / conj ----

// Columns that cross segment r: lower [0, min(n, (r+1)*seg)), upper [r*seg, n).
__device__ __forceinline__ i64 trmv_t_cols(bool upper, i64 n, i64 seg, i64 r) {
    return upper ? n - r * seg : min64(n, (r + 1) * seg);
}

// One stripe that crosses an edge of the column's rows [lo, hi): element loads under a mask.
template <typename T, bool CONJ>
__device__ __forceinline__ void trmv_t_edge(bool unit, const T* col, const T* x, i64 row, i64 lo, i64 hi, i64 j,
                                            T (&acc)[16 / sizeof(T)]) {
    constexpr int V = 16 / sizeof(T);
#pragma unroll
    for (int e = 0; e < V; e++) {
        const i64 i = row + e;
        if (i >= lo && i < hi) {
            const T aij = (unit && i == j) ? one<T>() : op_t<T, CONJ>(col[i]);
            acc[e] = fma_t(aij, x[i], acc[e]);
        }
    }
}

template <typename T, bool CONJ, bool VEC>
__device__ __forceinline__ void trmv_t_stripe(const T* col, const T* x, i64 row, T (&acc)[16 / sizeof(T)]) {
    constexpr int V = 16 / sizeof(T);
    if (VEC) {
        const vec16<T> av = ld_a16(col + row);
        const vec16<T> xv = *reinterpret_cast<const vec16<T>*>(x + row);
#pragma unroll
        for (int e = 0; e < V; e++) acc[e] = fma_t(op_t<T, CONJ>(av.v[e]), xv.v[e], acc[e]);
    } else {
#pragma unroll
        for (int e = 0; e < V; e++) acc[e] = fma_t(op_t<T, CONJ>(col[row + e]), x[row + e], acc[e]);
    }
}

template <typename T, bool CONJ, bool VEC, bool STAG>
__device__ void trmv_t_body(i64 n, const T* a, i64 lda, const T* x, T* w, i64 seg, i64 nseg, i64 per_pair,
                            int flags) {
    constexpr int V = 16 / sizeof(T);
    const bool upper = flags & TRMV_UPPER, unit = flags & TRMV_UNIT;
    constexpr i64 S = 32 * V;  // rows per stripe
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int lane = tid & 31;
    const i64 wid = (i64)blockIdx.x * ((blockDim.x * blockDim.y) >> 5) + (tid >> 5);
    // Which (segment, column): pair q holds segment q, then segment nseg-1-q. Whole warps
    // return together (the shuffles below need all 32 lanes).
    const i64 q = wid / per_pair;
    if (q >= (nseg + 1) / 2) return;
    i64 u = wid % per_pair;
    i64 r = q;
    const i64 first = trmv_t_cols(upper, n, seg, q);
    if (u >= first) {
        r = nseg - 1 - q;
        u -= first;
        if (r == q || u >= trmv_t_cols(upper, n, seg, r)) return;
    }
    const i64 j = upper ? r * seg + u : u;
    const i64 s0 = r * seg, s1 = min64(n, s0 + seg);
    // Rows of column j in this segment: [lo, hi). Full stripes lie in [flo, fhi), which leaves
    // out a unit diagonal (it must not be loaded).
    const i64 lo = upper ? s0 : max64(s0, j);
    const i64 hi = upper ? min64(s1, j + 1) : s1;
    i64 flo = lo, fhi = hi;
    if (unit) {
        if (upper && j < s1) fhi = j;
        if (!upper && j >= s0) flo = j + 1;
    }
    // Stripes touching [lo, hi): [ka, kd); full stripes: [kb, kc); edges before and after.
    const i64 ka = (lo - s0) / S, kd = (hi - s0 + S - 1) / S;
    const i64 kb = min64(max64((flo - s0 + S - 1) / S, ka), kd);
    const i64 kc = min64(max64((fhi - s0) / S, kb), kd);
    const T* col = a + j * lda;
    const i64 lrow = s0 + (i64)lane * V;

    T acc[V];
#pragma unroll
    for (int e = 0; e < V; e++) acc[e] = zero<T>();
#pragma unroll 1
    for (i64 k = ka; k < kb; k++) trmv_t_edge<T, CONJ>(unit, col, x, lrow + k * S, lo, hi, j, acc);
    i64 k = kb;
    // Whole groups of TRMV_UT full stripes, from the top or (STAG) from group j % groups.
    const int groups = STAG ? (int)((kc - kb) / TRMV_UT) : 0;
    int g = groups > 1 ? (int)(j % groups) : 0;
    for (int left = groups; STAG ? left > 0 : k + TRMV_UT <= kc; left--) {
        if (STAG) {
            k = kb + (i64)g * TRMV_UT;
            if (++g == groups) g = 0;
        }
        if (VEC) {
            vec16<T> av[TRMV_UT], xv[TRMV_UT];
#pragma unroll
            for (int s = 0; s < TRMV_UT; s++) {
                av[s] = ld_a16(col + lrow + (k + s) * S);
                xv[s] = *reinterpret_cast<const vec16<T>*>(x + lrow + (k + s) * S);
            }
#pragma unroll
            for (int s = 0; s < TRMV_UT; s++)
#pragma unroll
                for (int e = 0; e < V; e++) acc[e] = fma_t(op_t<T, CONJ>(av[s].v[e]), xv[s].v[e], acc[e]);
        } else {
#pragma unroll
            for (int s = 0; s < TRMV_UT; s++) trmv_t_stripe<T, CONJ, false>(col, x, lrow + (k + s) * S, acc);
        }
        if (!STAG) k += TRMV_UT;
    }
    if (STAG) k = kb + (i64)groups * TRMV_UT;
#pragma unroll 1
    for (; k < kc; k++) trmv_t_stripe<T, CONJ, VEC>(col, x, lrow + k * S, acc);
#pragma unroll 1
    for (k = kc; k < kd; k++) trmv_t_edge<T, CONJ>(unit, col, x, lrow + k * S, lo, hi, j, acc);

    T sum = acc[0];
#pragma unroll
    for (int e = 1; e < V; e++) sum = sum + acc[e];
    sum = warp_sum(sum);
    if (lane == 0) w[r * n + j] = sum;
}

// ---- Pass 2 and the x packing ----

// Element i: the partials of parts [0, i/width] (from_start) or [i/width, nparts) in order.
template <typename T>
__device__ __forceinline__ void trmv_sum_body(i64 n, const T* w, i64 width, i64 nparts, int from_start, T* x,
                                              i64 incx) {
    // Pass 1 (launched just before, see Function::launch_dependent) reads x and writes w.
    pdl_wait();
    const i64 i = (i64)blockIdx.x * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const i64 q = i / width;
    const i64 p0 = from_start ? 0 : q, p1 = from_start ? q : nparts - 1;
    const T* wp = w + p0 * n + i;
    T sum = wp[0];
    // The partials of a row are few and latency-bound (L2 round trips): load them 8 at a time
    // into registers, then add them in order, so 8 loads are in flight and the order is the
    // same sequential one. (32 at a time made STRMV-LNN 8192 7% slower on an H200.) Fusing this
    // pass into trmv_n (tickets per output group: the block that completes a group, counting
    // the readers of its x rows and the blocks adding to it, writes it) raised trmv_n's
    // registers 48 -> 64-72 even with the tail recomputing its tile, and STRMV-LNN 8192 went
    // 39.0 -> 49.9 us on an H200 (session 7); with 4 partials in flight it only came back to
    // 39.0 us, no gain for the second launch saved.
    for (i64 p = p0 + 1; p <= p1; p += 8) {
        T v[8];
#pragma unroll
        for (int k = 0; k < 8; k++) v[k] = (p + k <= p1) ? wp[(p + k - p0) * n] : zero<T>();
#pragma unroll
        for (int k = 0; k < 8; k++)
            if (p + k <= p1) sum = sum + v[k];
    }
    x[vidx(i, n, incx)] = sum;
}

template <typename T> __device__ __forceinline__ void trmv_gather_body(i64 n, const T* x, i64 incx, T* xc) {
    const i64 i = (i64)blockIdx.x * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) xc[i] = x[vidx(i, n, incx)];
}

// ---- Entry points: the flags pick the instantiation (uniform per launch). Only what the hot
// loops depend on is a template parameter (vector loads, conjugation): fewer instantiations
// keep NVRTC's first compile short.

template <typename T>
__device__ __forceinline__ void trmv_n_entry(i64 n, const T* a, i64 lda, const T* x, T* w, i64 sw, i64 np,
                                             i64 per_pair, int flags) {
    if (flags & TRMV_VEC)
        trmv_n_body<T, true>(n, a, lda, x, w, sw, np, per_pair, flags);
    else
        trmv_n_body<T, false>(n, a, lda, x, w, sw, np, per_pair, flags);
}

template <typename T, bool CONJ, bool STAG>
__device__ __forceinline__ void trmv_t_vec(i64 n, const T* a, i64 lda, const T* x, T* w, i64 seg, i64 nseg,
                                           i64 per_pair, int flags) {
    if (flags & TRMV_VEC)
        trmv_t_body<T, CONJ, true, STAG>(n, a, lda, x, w, seg, nseg, per_pair, flags);
    else
        trmv_t_body<T, CONJ, false, STAG>(n, a, lda, x, w, seg, nseg, per_pair, flags);
}

// Real types: conj is the identity, so one set of instantiations.
template <typename T, bool CPLX, bool STAG>
__device__ __forceinline__ void trmv_t_entry(i64 n, const T* a, i64 lda, const T* x, T* w, i64 seg, i64 nseg,
                                             i64 per_pair, int flags) {
    if (CPLX && (flags & TRMV_CONJ))
        trmv_t_vec<T, CPLX, STAG>(n, a, lda, x, w, seg, nseg, per_pair, flags);
    else
        trmv_t_vec<T, false, STAG>(n, a, lda, x, w, seg, nseg, per_pair, flags);
}

#define TRMV_ENTRIES(P, T, CPLX)                                                                              \
    extern "C" __global__ void P##trmv_n(i64 n, const T* a, i64 lda, const T* x, T* w, i64 sw, i64 np,         \
                                         i64 per_pair, int flags) {                                            \
        trmv_n_entry<T>(n, a, lda, x, w, sw, np, per_pair, flags);                                             \
    }                                                                                                          \
    extern "C" __global__ void P##trmv_t(i64 n, const T* a, i64 lda, const T* x, T* w, i64 seg, i64 nseg,      \
                                         i64 per_pair, int flags) {                                            \
        trmv_t_entry<T, CPLX, false>(n, a, lda, x, w, seg, nseg, per_pair, flags);                             \
    }                                                                                                          \
    extern "C" __global__ void P##trmv_ts(i64 n, const T* a, i64 lda, const T* x, T* w, i64 seg, i64 nseg,     \
                                          i64 per_pair, int flags) {                                           \
        trmv_t_entry<T, CPLX, true>(n, a, lda, x, w, seg, nseg, per_pair, flags);                              \
    }                                                                                                          \
    extern "C" __global__ void P##trmv_sum(i64 n, const T* w, i64 width, i64 nparts, int from_start, T* x,     \
                                           i64 incx) {                                                         \
        trmv_sum_body<T>(n, w, width, nparts, from_start, x, incx);                                            \
    }                                                                                                          \
    extern "C" __global__ void P##trmv_gather(i64 n, const T* x, i64 incx, T* xc) {                            \
        trmv_gather_body<T>(n, x, incx, xc);                                                                   \
    }

// Entry points, one precision per compile unit (HB_PREC: kernels/common.cuh).
#if HB_PREC(s)
TRMV_ENTRIES(s, float, false)
#endif
#if HB_PREC(d)
TRMV_ENTRIES(d, double, false)
#endif
#if HB_PREC(c)
TRMV_ENTRIES(c, cfloat, true)
#endif
#if HB_PREC(z)
TRMV_ENTRIES(z, cdouble, true)
#endif
