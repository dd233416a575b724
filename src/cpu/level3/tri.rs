//! TRMM/TRSM (placeholder; the implementation lives on the branch that owns this file).
