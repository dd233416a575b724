//! CBLAS Level 2.
