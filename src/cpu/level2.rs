//! Level 2 on the CPU.
