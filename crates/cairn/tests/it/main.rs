//! Engine integration tests (fake embedder: fast and deterministic).

mod access;
mod concurrency;
mod encoding;
mod graph;
mod history;
mod incremental;
mod memory;
mod names;
mod remote;
mod search;
mod supersede;
mod transfer;
mod worktrees;

use cairn_test_support::{Project, roots};
