//! Rust: functions, types, traits, `impl` blocks (named by their type,
//! `impl Trait for Type` linked to the trait), modules and macros.

use tree_sitter::Node;

use super::{DefName, Spec, field_body, field_name, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_item", "function"),
        ("function_signature_item", "function"),
        ("struct_item", "struct"),
        ("enum_item", "enum"),
        ("union_item", "union"),
        ("trait_item", "trait"),
        ("impl_item", "impl"),
        ("mod_item", "module"),
        ("type_item", "type"),
        ("macro_definition", "macro"),
    ],
    containers: &["impl_item", "trait_item", "mod_item"],
    wrappers: &[],
    transparent: &[],
    calls: &[("call_expression", "function")],
    imports: &["use_declaration"],
    heritage: &[],
    type_refs: &["type_identifier"],
    builtins: BUILTINS,
    capital_calls: false,
    name: impl_name,
    body: field_body,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// Rust's own: the prelude's types, variants and traits.
const BUILTINS: &[&str] = &[
    "Self",
    "String",
    "Vec",
    "Box",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Default",
    "Clone",
    "Copy",
    "Debug",
    "Display",
    "From",
    "Into",
    "ToString",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Hash",
    "Send",
    "Sync",
    "Sized",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "AsRef",
    "Iterator",
    "IntoIterator",
];

/// An `impl` block is named by its type (`impl<T> Trait for Foo<T>` →
/// `Foo`), with the trait it implements; other kinds by their `name`.
fn impl_name(node: Node<'_>, src: &str) -> Option<DefName> {
    if node.kind() != "impl_item" {
        return field_name(node, src);
    }
    let ty = node.child_by_field_name("type")?;
    let trait_ = node
        .child_by_field_name("trait")
        .map(|t| base_name(text_of(t, src)));
    Some((base_name(text_of(ty, src)), trait_))
}

/// `Foo<T>` → `Foo`, `crate::a::Foo` → `Foo`, `&mut Foo` → `Foo`.
pub(super) fn base_name(text: &str) -> String {
    let t = text.split('<').next().unwrap_or(text);
    let t = t.rsplit("::").next().unwrap_or(t);
    t.trim_start_matches(['&', '*'])
        .trim_start_matches("mut ")
        .trim()
        .to_string()
}

#[cfg(test)]
pub(super) mod tests {
    use crate::code::chunk_code;
    use crate::code::tests::{check_lines, crumbs, has_link, opts};
    use cairn_core::Relation;

    pub(in crate::code) const RUST_SRC: &str = r#"use std::collections::HashMap;
use crate::cache::Redis;

const MAX_RETRIES: u32 = 3;

/// Checks tokens against the policy.
#[derive(Debug)]
pub struct PolicyController {
    cache: Redis,
}

impl PolicyController {
    /// Validates a JWT.
    pub fn validate_token(&self, token: &str) -> bool {
        let claims = decode_claims(token);
        self.cache.lookup(&claims)
    }
}

impl Display for PolicyController {
    fn fmt(&self, f: &mut Formatter) -> Result {
        write!(f, "policy")
    }
}

fn decode_claims(token: &str) -> Claims {
    Claims::parse(token)
}
"#;

    #[test]
    fn rust_definitions_breadcrumbs_and_links() {
        let doc = chunk_code("src/auth.rs", RUST_SRC, &opts());
        assert_eq!(doc.language, "rust");
        check_lines(RUST_SRC, &doc);
        let c = crumbs(&doc);
        assert!(c.contains(&"src/auth.rs".to_string()), "{c:?}");
        assert!(
            c.contains(&"src/auth.rs > PolicyController".to_string()),
            "{c:?}"
        );
        assert!(
            c.contains(&"src/auth.rs > decode_claims".to_string()),
            "{c:?}"
        );
        // The doc comment and attribute travel with the struct.
        let st = doc
            .chunks
            .iter()
            .find(|c| c.text.contains("pub struct PolicyController"))
            .unwrap();
        assert!(st.text.starts_with("/// Checks tokens"), "{}", st.text);
        assert!(has_link(&doc, "PolicyController", Relation::Defines));
        assert!(has_link(&doc, "validate_token", Relation::Defines));
        assert!(has_link(&doc, "decode_claims", Relation::Calls));
        assert!(has_link(&doc, "lookup", Relation::Calls));
        assert!(has_link(&doc, "Redis", Relation::Imports));
        assert!(has_link(&doc, "Redis", Relation::Uses));
        assert!(has_link(&doc, "Display", Relation::Implements));
        assert!(
            doc.links
                .iter()
                .any(|l| l.from.as_deref() == Some("PolicyController") && l.to == "Display")
        );
        assert!(!has_link(&doc, "new", Relation::Calls));
    }

    #[test]
    fn test_modules_and_common_names_are_no_graph_nodes() {
        let src = "pub fn parse_flags(x: u32) -> u32 { x }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn parses_one() {\n        assert_eq!(parse_flags(1), 1);\n    }\n\n    #[test]\n    fn parses_two() {\n        assert_eq!(parse_flags(2), 2);\n    }\n}\n";
        let doc = chunk_code("src/flags.rs", src, &opts());
        assert!(
            has_link(&doc, "parse_flags", Relation::Defines),
            "{:?}",
            doc.links
        );
        assert!(
            !doc.links.iter().any(|l| l.to == "tests" && l.weight > 0.0),
            "no node for `mod tests`: {:?}",
            doc.links
        );
    }
}
