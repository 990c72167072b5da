//! What an agent remembers: one markdown file per memory, its metadata in
//! YAML frontmatter and its text as the body.

use serde::{Deserialize, Serialize};

/// The memory types agents are offered; other types are kept as written.
pub const MEMORY_TYPES: &[&str] = &[
    "fact",
    "decision",
    "preference",
    "convention",
    "entity",
    "relationship",
    "event",
    "note",
];

/// Importance when none is given (1–10).
pub const DEFAULT_IMPORTANCE: u8 = 5;

/// An explicit relation between two entities, as `relate` stores it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRelation {
    /// Source entity name.
    pub from: String,
    /// Target entity name.
    pub to: String,
    /// Relation, in active voice (`implements`, `implemented_by`, `depends_on`).
    pub rel: String,
}

/// A memory: the frontmatter fields plus the body text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// Stable id; also the file name (`<id>.md`).
    pub id: String,
    /// `fact`, `decision`, `preference`, … (see [`MEMORY_TYPES`]).
    #[serde(rename = "type")]
    pub kind: String,
    /// 1 (trivia) to 10 (must never be forgotten).
    pub importance: u8,
    /// Free labels.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Names the memory is about (code symbols, paths, tickets, people, versions).
    #[serde(default)]
    pub entities: Vec<String>,
    /// When it was first stored (RFC 3339, UTC).
    pub created: String,
    /// When its text or metadata last changed (RFC 3339, UTC).
    pub updated: String,
    /// When it stops being recalled (RFC 3339, UTC), if ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// Files it was learned from: `path`, `path#Heading` or `path:line`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// Content hash of each cited file when the memory was written, so a
    /// later change to the file can be noticed (same order as `sources`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_hashes: Vec<String>,
    /// For an `entity` memory: the entity it describes (its observations are
    /// the text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
    /// For an `entity` memory: what sort of thing it is (`service`, `class`, `person`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    /// For a `relationship` memory: the relations it states.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<MemoryRelation>,
    /// Ids of the older memories this one replaces (a decision reversed,
    /// a setting moved): they are recalled only marked as replaced. The
    /// chain is stored here alone; which memory replaced an older one is
    /// read from the newer's list, so one file write (and one undo) makes
    /// or unmakes a link.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
    /// The memory itself (the file body).
    #[serde(skip)]
    pub text: String,
}

impl Memory {
    /// The file path of a source reference (`docs/a.md#Setup` → `docs/a.md`,
    /// `src/x.rs:12` → `src/x.rs`).
    pub fn source_path(source: &str) -> &str {
        let s = source.split('#').next().unwrap_or(source);
        match s.rsplit_once(':') {
            Some((path, line)) if !line.is_empty() && line.chars().all(|c| c.is_ascii_digit()) => {
                path
            }
            _ => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Memory;

    #[test]
    fn source_paths() {
        assert_eq!(Memory::source_path("docs/a.md"), "docs/a.md");
        assert_eq!(Memory::source_path("docs/a.md#Set up"), "docs/a.md");
        assert_eq!(Memory::source_path("src/x.rs:12"), "src/x.rs");
        assert_eq!(Memory::source_path("C:notes.md"), "C:notes.md");
    }
}
