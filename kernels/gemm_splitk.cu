// Split-k GEMM for small outputs (seed 000): C := alpha*op(A)*op(B) + beta*C with m, n small
// and k long. Written by the issue-4 work; see src/gpu/splitk.rs for the host side.
