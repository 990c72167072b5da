//! Links: the edges of the knowledge graph, as the ingest step finds them.

use serde::{Deserialize, Serialize};

/// An edge of the knowledge graph: from one chunk of a document (or from a
/// named entity) to a named entity.
///
/// Entities are identified by [`entity_key`] of their name, so
/// `validate_token` in code, `validateToken` in a script and "Validate Token"
/// in a doc are one node; a path (`src/auth/jwt.rs`) is its own node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// Index of the source chunk in its document's chunk list; `None` when the
    /// edge starts at the entity `from`.
    pub chunk: Option<usize>,
    /// Source entity name, for entity → entity relations (`chunk` is `None`).
    pub from: Option<String>,
    /// Target entity name (a symbol, a concept, a path).
    pub to: String,
    /// Relation: `defines`, `member_of`, `calls`, `imports`, `uses`,
    /// `implements`, `links`, `mentions`, `heading`, `in`, or an explicit
    /// relation named by an agent.
    pub rel: String,
    /// Edge weight (> 0); see the constants in [`weights`].
    pub weight: f32,
}

impl Link {
    /// A chunk → entity edge with the default weight of its relation.
    pub fn from_chunk(chunk: usize, to: impl Into<String>, rel: &str) -> Link {
        Link {
            chunk: Some(chunk),
            from: None,
            to: to.into(),
            rel: rel.to_string(),
            weight: weights::of(rel),
        }
    }

    /// An entity → entity edge with the default weight of its relation.
    pub fn between(from: impl Into<String>, to: impl Into<String>, rel: &str) -> Link {
        Link {
            chunk: None,
            from: Some(from.into()),
            to: to.into(),
            rel: rel.to_string(),
            weight: weights::of(rel),
        }
    }
}

/// Default edge weights per relation. A definition ties a chunk to its symbol
/// more tightly than a call or an import does; a chunk's own file ties it to
/// its siblings loosely. Explicit relations (written by an agent) weigh as
/// much as a definition: someone said they belong together.
pub mod weights {
    /// Weight of a relation name.
    pub fn of(rel: &str) -> f32 {
        match rel {
            "defines" => 1.0,
            "member_of" | "implements" | "links" => 0.8,
            "mentions" | "calls" | "heading" => 0.5,
            "uses" => 0.4,
            "imports" | "in" => 0.3,
            _ => 1.0,
        }
    }
}

/// The node key of an entity name: a path (it holds `/`, or ends in a dot and
/// a short extension) is lower-cased as it is; any other name keeps only its
/// letters and digits, lower-cased, so naming conventions (`PolicyController`,
/// `policy_controller`, "Policy Controller") meet in one node.
pub fn entity_key(name: &str) -> String {
    let name = name.trim();
    if is_path_like(name) {
        return name.trim_start_matches("./").to_lowercase();
    }
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_path_like(name: &str) -> bool {
    if name.contains(' ') {
        return false;
    }
    if name.contains('/') {
        return true;
    }
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naming_conventions_meet() {
        assert_eq!(entity_key("PolicyController"), "policycontroller");
        assert_eq!(entity_key("policy_controller"), "policycontroller");
        assert_eq!(entity_key("Policy Controller"), "policycontroller");
        assert_eq!(entity_key("src/Auth/jwt.rs"), "src/auth/jwt.rs");
        assert_eq!(entity_key("./docs/a.md"), "docs/a.md");
        assert_eq!(entity_key("settings.toml"), "settings.toml");
        assert_eq!(entity_key("v1.2"), "v12");
    }
}
