//! CLI tests: run the real binary.
