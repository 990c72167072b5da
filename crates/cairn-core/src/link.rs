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
    /// What the edge says.
    pub rel: Relation,
    /// Edge weight (≥ 0: a `defines` link of weight 0 serves the names
    /// retriever and not the graph); see [`Relation::weight`].
    pub weight: f32,
}

impl Link {
    /// A chunk → entity edge with the default weight of its relation.
    pub fn from_chunk(chunk: usize, to: impl Into<String>, rel: Relation) -> Link {
        Link {
            chunk: Some(chunk),
            from: None,
            to: to.into(),
            weight: rel.weight(),
            rel,
        }
    }

    /// An entity → entity edge with the default weight of its relation.
    pub fn between(from: impl Into<String>, to: impl Into<String>, rel: Relation) -> Link {
        Link {
            chunk: None,
            from: Some(from.into()),
            to: to.into(),
            weight: rel.weight(),
            rel,
        }
    }
}

/// The relation an edge of the knowledge graph stands for. Written (in the
/// index, the graph's cache file, JSON) as its name: `defines`, `member_of`,
/// `calls`, `imports`, `uses`, `implements`, `links`, `mentions`,
/// `heading`, `in`, or the name of an explicit relation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Relation {
    /// A chunk defines the symbol.
    Defines,
    /// A definition belongs to a type or module.
    MemberOf,
    /// Code calls the symbol.
    Calls,
    /// Code imports the name.
    Imports,
    /// Code refers to the type.
    Uses,
    /// A type implements or extends another.
    Implements,
    /// A document links to a file or a page.
    Links,
    /// Text mentions the entity.
    Mentions,
    /// A chunk sits under the heading.
    Heading,
    /// A chunk sits in its file.
    In,
    /// A relation written by an agent or a user (`implemented_by`,
    /// `depends_on`, …), or any name not above.
    Explicit(String),
}

impl Relation {
    /// The relations the ingest step finds, each with its name.
    const FOUND: [(Relation, &'static str); 10] = [
        (Relation::Defines, "defines"),
        (Relation::MemberOf, "member_of"),
        (Relation::Calls, "calls"),
        (Relation::Imports, "imports"),
        (Relation::Uses, "uses"),
        (Relation::Implements, "implements"),
        (Relation::Links, "links"),
        (Relation::Mentions, "mentions"),
        (Relation::Heading, "heading"),
        (Relation::In, "in"),
    ];

    /// The relation a name stands for: one of the found relations, else an
    /// explicit one.
    pub fn named(name: &str) -> Relation {
        Relation::FOUND
            .iter()
            .find(|(_, n)| *n == name)
            .map_or_else(|| Relation::Explicit(name.to_string()), |(r, _)| r.clone())
    }

    /// The name it is written as.
    pub fn name(&self) -> &str {
        match self {
            Relation::Explicit(name) => name,
            found => Relation::FOUND
                .iter()
                .find(|(r, _)| r == found)
                .map_or("", |(_, n)| n),
        }
    }

    /// The default weight of an edge of this relation. A definition ties a
    /// chunk to its symbol more tightly than a call or an import does; a
    /// chunk's own file ties it to its siblings loosely. Explicit relations
    /// (written by an agent) weigh as much as a definition: someone said
    /// they belong together.
    pub fn weight(&self) -> f32 {
        match self {
            Relation::Defines => 1.0,
            Relation::MemberOf | Relation::Implements | Relation::Links => 0.8,
            Relation::Mentions | Relation::Calls | Relation::Heading => 0.5,
            Relation::Uses => 0.4,
            Relation::Imports | Relation::In => 0.3,
            Relation::Explicit(_) => 1.0,
        }
    }
}

impl From<String> for Relation {
    fn from(name: String) -> Relation {
        match Relation::named(&name) {
            Relation::Explicit(_) => Relation::Explicit(name),
            found => found,
        }
    }
}

impl From<&str> for Relation {
    fn from(name: &str) -> Relation {
        Relation::named(name)
    }
}

impl From<Relation> for String {
    fn from(r: Relation) -> String {
        match r {
            Relation::Explicit(name) => name,
            found => found.name().to_string(),
        }
    }
}

impl std::fmt::Display for Relation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// Ordered by name, as the names were before they had a type (links are
/// sorted, and the order reaches the index).
impl Ord for Relation {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for Relation {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
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
    fn a_relation_is_written_as_its_name_and_weighs_as_before() {
        for (r, name) in Relation::FOUND {
            assert_eq!(r.name(), name);
            assert_eq!(Relation::named(name), r);
            assert_eq!(String::from(r.clone()), name);
        }
        let own = Relation::named("implemented_by");
        assert_eq!(own, Relation::Explicit("implemented_by".into()));
        assert_eq!(own.name(), "implemented_by");
        assert_eq!(own.weight(), 1.0);
        assert_eq!(Relation::In.weight(), 0.3);
        assert_eq!(Relation::Calls.weight(), 0.5);
        // Sorted by name, as the strings were: "calls" < "defines" < "in".
        let mut rs = [Relation::In, Relation::Defines, Relation::Calls, own];
        rs.sort();
        let names: Vec<&str> = rs.iter().map(Relation::name).collect();
        assert_eq!(names, ["calls", "defines", "implemented_by", "in"]);
        let link = Link::from_chunk(0, "x", Relation::Heading);
        assert_eq!(link.weight, 0.5);
    }

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
