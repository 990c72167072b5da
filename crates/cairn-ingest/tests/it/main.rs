//! Integration tests of `cairn-ingest`: one binary, one module per area.

mod chunker;
mod properties;
