//! `cairn-ingest` finds the markdown and code files of a project and turns each
//! one into [`cairn_core::Chunk`]s and [`cairn_core::Link`]s.
//!
//! [`scan`] walks a folder the way git sees it (ignore files, no hidden files,
//! no symbolic links; the links, FIFOs and devices it leaves out are named)
//! and [`read_text`] reads one regular file as text.
//! [`chunk_markdown`] then cuts that text into chunks: one section per heading
//! with its breadcrumb, split at paragraph boundaries, code blocks kept whole,
//! frontmatter parsed by [`split_frontmatter`] and left out. [`chunk_code`]
//! cuts code by its syntax tree (tree-sitter) and finds its symbols, calls,
//! imports and supertypes; [`doc_links`] finds a markdown text's links.
//! Agent sessions become [`Turn`]s: [`parse_claude_transcript`] (Claude Code),
//! [`parse_codex_rollout`] (Codex CLI), [`parse_opencode_session`] (OpenCode)
//! and [`parse_openclaw_session`] (OpenClaw); [`summarize`] keeps what matters
//! of some turns and [`redact`] removes secrets (one rule set for every
//! field Cairn stores or prints; [`secret_family`] names what it found). The functions keep no state:
//! nothing is cached or stored.
//!
//! # Example
//!
//! A markdown file cut into chunks, each with its heading path, and a code
//! file's language found by its extension:
//!
//! ```
//! use cairn_ingest::{ChunkOptions, Language, chunk_markdown};
//!
//! let text = "# Deploy\n\nRun the release script from the repository root, \
//!             then tag the commit it built.\n\n## Rollback\n\nRevert the tag, \
//!             rebuild from the previous one and announce it in the channel.\n";
//! let opts = ChunkOptions { min_chars: 0, ..ChunkOptions::default() };
//! let doc = chunk_markdown("docs/deploy.md", text, &opts);
//! let rollback = doc.chunks.iter().find(|c| c.text.contains("Revert")).unwrap();
//! assert_eq!(rollback.heading_path, ["Deploy", "Rollback"]);
//! assert_eq!(rollback.path, "docs/deploy.md");
//!
//! assert_eq!(Language::of_path("src/main.rs").map(Language::name), Some("rust"));
//! assert_eq!(Language::of_path("README.md"), None);
//! ```
#![deny(missing_docs)]

mod code;
mod config;
mod entities;
mod frontmatter;
mod links;
mod markdown;
mod notebook;
mod openclaw;
mod opencode;
mod redact;
mod rst;
mod scan;
mod transcript;

pub use crate::{
    code::{
        CODE_EXTENSIONS, CodeDoc, Definition, Language, MAX_HIGHLIGHT_BYTES, ParsedCode, Token,
        TokenClass, chunk_code, chunk_lines, enclosing_definition, file_kind, generated_reason,
        highlight,
    },
    config::{is_env_template, redact_env},
    entities::{MAX_ENTITIES, extract_entities},
    frontmatter::{Frontmatter, split_frontmatter},
    links::doc_links,
    markdown::{ChunkOptions, HeadingLine, MarkdownDoc, chunk_doc, chunk_markdown, doc_headings},
    notebook::{NOTEBOOK_EXTENSIONS, chunk_notebook, is_notebook},
    openclaw::parse_openclaw_session,
    opencode::parse_opencode_session,
    redact::{REDACTED, looks_like_secret, only_secrets, redact, secret_family},
    scan::{
        Decoded, LeftOut, ReadError, ScanIssue, ScanOptions, ScannedFile, TEST_DATA_DIRS,
        decode_text, read_regular_file, read_text, read_text_noted, scan, unix_nanos,
    },
    transcript::{Turn, parse_claude_transcript, parse_codex_rollout, summarize},
};
