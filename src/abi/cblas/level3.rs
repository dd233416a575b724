//! CBLAS Level 3.
