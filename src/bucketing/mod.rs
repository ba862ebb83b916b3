//! Bucketing (placeholder).
