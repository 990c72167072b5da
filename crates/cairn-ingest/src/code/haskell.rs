//! Haskell (`.hs`): functions (each equation, and the type signature
//! above them), bindings, `data`, `newtype`, `type` and type families,
//! classes with their methods' signatures, and instances with their
//! equations, which belong to the instance's type (`instance FromJSON Bool`
//! is `Bool`'s, implementing `FromJSON`). A haddock comment (`-- |`) right
//! above is the definition's. An application links by the applied name,
//! imports are not linked.

use tree_sitter::Node;

use super::{DefName, Spec, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("signature", "function"),
        ("function", "function"),
        ("bind", "function"),
        ("data_type", "type"),
        ("newtype", "type"),
        ("type_synonym", "type"),
        ("type_family", "type"),
        ("data_family", "type"),
        ("class", "class"),
        ("instance", "impl"),
    ],
    containers: &["class", "instance"],
    wrappers: &[],
    // The module's top-level definitions sit in one `declarations` node.
    transparent: &["declarations"],
    calls: &[("apply", "function")],
    imports: &[],
    heritage: &[],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: def_name,
    body: body_of,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: kind_of,
};

/// The Prelude's most used, too common to link on.
const BUILTINS: &[&str] = &[
    "map",
    "fmap",
    "pure",
    "return",
    "show",
    "fail",
    "error",
    "undefined",
    "not",
    "fst",
    "snd",
    "id",
    "const",
    "flip",
    "maybe",
    "either",
    "fromIntegral",
    "length",
    "null",
    "concat",
    "concatMap",
    "foldr",
    "foldl",
    "mapM",
    "mapM_",
    "traverse",
    "sequence",
    "print",
    "putStrLn",
    "Just",
    "Nothing",
    "Left",
    "Right",
    "Maybe",
    "Either",
    "IO",
    "Int",
    "Integer",
    "Bool",
    "String",
    "Char",
    "Double",
    "Text",
];

/// [`Spec::kind`]: a signature right above its own equations is their
/// note (it opens their chunk, as a comment does), not a definition of its
/// own; a signature alone (a class's method) defines the function.
fn kind_of(node: Node<'_>, src: &str, label: &'static str) -> Option<&'static str> {
    if node.kind() != "signature" {
        return Some(label);
    }
    let mut next = node.next_named_sibling();
    while let Some(n) = next.filter(|n| n.kind().contains("comment") || n.kind() == "haddock") {
        next = n.next_named_sibling();
    }
    let equations = next.is_some_and(|n| {
        matches!(n.kind(), "function" | "bind")
            && def_name(n, src).map(|(name, _)| name) == def_name(node, src).map(|(name, _)| name)
    });
    (!equations).then_some(label)
}

/// A definition's name: its `name` field (a signature of several names,
/// `x, y :: Int`, by its first); an instance's type, implementing the
/// class (`instance FromJSON Bool`: `Bool`, `FromJSON`).
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    if node.kind() == "instance" {
        let class = text_of(node.child_by_field_name("name")?, src).to_string();
        let ty = node.child_by_field_name("patterns").map(|p| {
            text_of(p, src)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        });
        return Some(match ty {
            Some(t) if !t.is_empty() => (t, Some(class)),
            _ => (class, None),
        });
    }
    let name = node.child_by_field_name("name").or_else(|| {
        node.child_by_field_name("names")
            .and_then(|list| list.named_child(0))
    })?;
    Some((text_of(name, src).to_string(), None))
}

/// A class's or an instance's declarations; an equation's right-hand side
/// (cut between its guards when too large).
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "class" | "instance" => node.child_by_field_name("declarations"),
        "function" | "bind" => node.child_by_field_name("match"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::Language;
    use crate::code::tests::{assert_symbols, chunk_named, chunk_small, has_link};

    const SRC: &str = "{-# LANGUAGE OverloadedStrings #-}\n-- | JSON values and their parsers.\nmodule Data.Aeson.Types\n  ( Value(..)\n  , decode\n  ) where\n\nimport qualified Data.Map as M\nimport Data.Text (Text)\n\n-- | A JSON value.\ndata Value = Object !Object\n           | String !Text\n  deriving (Eq, Show)\n\nnewtype Parser a = Parser { runParser :: Int -> a }\n\n-- | Types that can be read from a 'Value'.\nclass FromJSON a where\n  parseJSON :: Value -> Parser a\n  parseJSONList :: Value -> Parser [a]\n  parseJSONList = listParser parseJSON\n\ninstance FromJSON Bool where\n  parseJSON (Bool b) = pure b\n  parseJSON v = typeMismatch \"Bool\" v\n\n-- | Decodes a value from text.\ndecode :: FromJSON a => Text -> Maybe a\ndecode t = case parseValue t of\n  Just v -> runParser (parseJSON v) 0\n  Nothing -> Nothing\n";

    #[test]
    fn haskell_types_classes_instances_and_functions() {
        assert_eq!(
            Language::of_path("src/Data/Aeson/Types.hs"),
            Some(Language::Haskell)
        );
        let doc = chunk_small("src/Data/Aeson/Types.hs", SRC, 150, "haskell");
        assert_symbols(
            &doc,
            &[
                ("Value", "type"),
                ("Parser", "type"),
                ("FromJSON", "class"),
                ("parseJSON", "function"),
                ("parseJSONList", "function"),
                ("Bool", "impl"),
                ("decode", "function"),
            ],
        );
        // The haddock comment and the signature open the equations' chunk.
        let decode = chunk_named(&doc, "src/Data/Aeson/Types.hs > decode");
        assert!(decode.text.starts_with("-- | Decodes"), "{}", decode.text);
        assert!(decode.text.contains("decode t = case"), "{}", decode.text);
        // A class's method, a signature alone, is a definition.
        let class = doc
            .symbols
            .iter()
            .filter(|(n, _, _)| n == "parseJSON")
            .count();
        assert!(class >= 2, "{:?}", doc.symbols);
        assert!(
            has_link(&doc, "parseValue", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "typeMismatch", Relation::Calls),
            "{:?}",
            doc.links
        );
    }
}
