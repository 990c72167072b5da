//! `cairn-ingest` finds the markdown files of a project and turns each one into
//! [`cairn_core::Chunk`]s.
//!
//! [`scan`] walks a folder the way git sees it (ignore files, no hidden files,
//! no symbolic links) and [`read_text`] reads one file as text.
//! [`chunk_markdown`] then cuts that text into chunks: one section per heading
//! with its breadcrumb, split at paragraph boundaries, code blocks kept whole,
//! frontmatter parsed by [`split_frontmatter`] and left out. The functions
//! keep no state: nothing is cached or stored.
#![deny(missing_docs)]

mod entities;
mod frontmatter;
mod markdown;
mod scan;
mod transcript;

pub use crate::{
    entities::{MAX_ENTITIES, extract_entities},
    frontmatter::{Frontmatter, split_frontmatter},
    markdown::{ChunkOptions, HeadingLine, MarkdownDoc, chunk_markdown, headings},
    scan::{ReadError, ScanIssue, ScanOptions, ScannedFile, read_text, scan, unix_nanos},
    transcript::{Turn, parse_claude_transcript, parse_codex_rollout, redact, summarize},
};
