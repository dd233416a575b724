// GEMV (N, T, C) and GER (u, c) kernels. (Filled in by the GEMV work.)
