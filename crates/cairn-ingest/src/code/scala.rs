//! Scala (`.scala`, `.sc`): classes, case classes, objects, traits, enums,
//! functions (`def` with a body, and abstract `def`s in a trait) and type
//! aliases, package objects; an object's or a class's members belong to it
//! (`Stack > push`). Calls link by the called name, `extends A with B` is
//! a supertype link, `import` an import.

use tree_sitter::Node;

use super::{Spec, field_body, field_name, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class_definition", "class"),
        ("object_definition", "class"),
        ("trait_definition", "trait"),
        ("package_object", "module"),
        ("enum_definition", "enum"),
        ("function_definition", "function"),
        ("function_declaration", "function"),
        ("type_definition", "type"),
    ],
    containers: &[
        "package_object",
        "class_definition",
        "object_definition",
        "trait_definition",
        "enum_definition",
    ],
    wrappers: &[],
    // `package a.b { … }` groups definitions without naming a type.
    transparent: &["package_clause"],
    calls: &[("call_expression", "function")],
    imports: &["import_declaration"],
    heritage: &[("extends_clause", None)],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: field_name,
    body: field_body,
    owner: no_owner,
    script_block: no_script_block,
    hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// Scala's own: `Predef`'s and the standard collections' most used names.
const BUILTINS: &[&str] = &[
    "Any",
    "AnyRef",
    "AnyVal",
    "Unit",
    "Nothing",
    "Null",
    "Int",
    "Long",
    "Short",
    "Byte",
    "Float",
    "Double",
    "Boolean",
    "Char",
    "String",
    "Option",
    "Some",
    "None",
    "List",
    "Seq",
    "Vector",
    "Map",
    "Set",
    "Array",
    "println",
    "print",
    "require",
    "assert",
    "implicitly",
    "classOf",
    "identity",
    "apply",
    "unapply",
];

/// `private` and `protected` members (`private[this] def grow`,
/// `private[immutable] case object Nil`) are hidden: a name's question
/// prefers the public definition of it.
fn hidden(node: Node<'_>, src: &str) -> bool {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() == "modifiers")
        .any(|m| {
            let mut cursor = m.walk();
            m.named_children(&mut cursor).any(|a| {
                a.kind() == "access_modifier"
                    && matches!(
                        text_of(a, src).split('[').next(),
                        Some("private" | "protected")
                    )
            })
        })
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::Language;
    use crate::code::tests::{assert_crumbs, assert_symbols, chunk_small, has_link};

    const SRC: &str = "package scala.collection\n\nimport scala.annotation.tailrec\n\n/** A stack of elements. */\ntrait Stack[A] extends Seq[A] with Cloneable {\n  /** Pushes an element on top. */\n  def push(elem: A): this.type\n\n  /** Removes the top element and returns it. */\n  def pop(): A = {\n    val top = head\n    drop(1)\n    top\n  }\n}\n\nobject Stack {\n  /** An empty stack. */\n  def empty[A]: Stack[A] = new ArrayStack[A]\n\n  private[this] def grow(x: Int) = helper(x) + 1\n}\n\ncase class Point(x: Int, y: Int) {\n  def norm: Double = math.sqrt(x * x + y * y)\n}\n\ntype Table = Map[String, Int]\n\npackage object collection {\n  def breakOut[T](b: T): T = b\n}\n\npackage internal {\n  object DebugUtils {\n    def unsupported(msg: String) = throw new UnsupportedOperationException(msg)\n  }\n}\n";

    #[test]
    fn scala_traits_objects_and_their_members() {
        assert_eq!(
            Language::of_path("src/library/Stack.scala"),
            Some(Language::Scala)
        );
        let doc = chunk_small("collection/Stack.scala", SRC, 200, "scala");
        let crumbs: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        for want in [
            "collection/Stack.scala > Stack > push",
            "collection/Stack.scala > Stack > pop",
        ] {
            assert!(
                crumbs.iter().any(|c| c.starts_with(want)),
                "{want} not in {crumbs:?}"
            );
        }
        assert_crumbs(&doc, &["collection/Stack.scala > Table"]);
        assert_symbols(
            &doc,
            &[
                ("Stack", "trait"),
                ("Stack", "class"),
                ("push", "function"),
                ("empty", "function"),
                ("grow", "function"),
                ("Point", "class"),
                ("norm", "function"),
                ("Table", "type"),
                ("collection", "module"),
                ("breakOut", "function"),
                ("DebugUtils", "class"),
                ("unsupported", "function"),
            ],
        );
        // `private[this] def grow` is hidden, `def empty` is not.
        let weight = |name: &str| {
            doc.links
                .iter()
                .find(|l| l.to == name && l.rel == Relation::Defines)
                .map(|l| l.weight)
        };
        assert_eq!(weight("grow"), Some(crate::code::HIDDEN_DEFINES_WEIGHT));
        assert_eq!(weight("empty"), Some(1.0));
        assert!(has_link(&doc, "helper", Relation::Calls), "{:?}", doc.links);
        assert!(has_link(&doc, "drop", Relation::Calls), "{:?}", doc.links);
        assert!(
            has_link(&doc, "Cloneable", Relation::Implements),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "tailrec", Relation::Imports),
            "{:?}",
            doc.links
        );
    }
}
