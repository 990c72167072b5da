//! Dart (`.dart`): classes, mixins, extensions, enums, type aliases and
//! functions; a class's methods, getters, setters and constructors
//! (`Reader.named(…)` is `named`) belong to it. A field declaration is
//! part of its class's chunk, not a definition. Calls link by the called
//! name, `extends`/`with`/`implements` are supertype links, `import` and
//! `export` are imports.

use tree_sitter::Node;

use super::{DefName, Spec, field_name, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class_declaration", "class"),
        ("mixin_declaration", "class"),
        ("extension_declaration", "class"),
        ("enum_declaration", "enum"),
        ("type_alias", "type"),
        ("function_declaration", "function"),
        ("member_declaration", "method"),
    ],
    containers: &[
        "class_declaration",
        "mixin_declaration",
        "extension_declaration",
        "enum_declaration",
    ],
    wrappers: &[],
    transparent: &[],
    calls: &[("call_expression", "function")],
    imports: &["import_or_export"],
    heritage: &[("superclass", None), ("interfaces", None), ("mixins", None)],
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

/// `dart:core`'s most used, too common to link on.
const BUILTINS: &[&str] = &[
    "Object",
    "String",
    "int",
    "double",
    "num",
    "bool",
    "List",
    "Map",
    "Set",
    "Iterable",
    "Future",
    "Stream",
    "print",
    "identical",
    "Exception",
    "Error",
    "ArgumentError",
    "StateError",
    "RangeError",
    "UnsupportedError",
    "toString",
];

/// The signatures a member may have, each naming it.
const SIGNATURES: &[&str] = &[
    "function_signature",
    "getter_signature",
    "setter_signature",
    "operator_signature",
    "constructor_signature",
    "constant_constructor_signature",
    "factory_constructor_signature",
    "redirecting_factory_constructor_signature",
];

/// A member's signature: under its `method_declaration` (one with a body)
/// or its `declaration` (abstract, or a constructor with initializers);
/// `None` for a field.
fn signature(node: Node<'_>) -> Option<Node<'_>> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if SIGNATURES.contains(&n.kind()) {
            return Some(n);
        }
        if matches!(
            n.kind(),
            "member_declaration" | "method_declaration" | "method_signature" | "declaration"
        ) {
            let mut cursor = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }
    None
}

/// A definition's name: a member's, by its signature (a named
/// constructor's last part: `named` of `Reader.named`), a function's by
/// its signature, a type alias's first type name, the rest by `name`.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let named = match node.kind() {
        "member_declaration" => signature(node)?,
        "function_declaration" => node.child_by_field_name("signature")?,
        "type_alias" => {
            let mut cursor = node.walk();
            let name = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "type_identifier")?;
            return Some((text_of(name, src).to_string(), None));
        }
        _ => return field_name(node, src),
    };
    let mut cursor = named.walk();
    let name = named
        .children_by_field_name("name", &mut cursor)
        .last()
        .or_else(|| {
            // An operator's name is its operator (`operator ==`).
            let mut cursor = named.walk();
            named
                .named_children(&mut cursor)
                .find(|c| c.kind().contains("operator"))
        })?;
    Some((text_of(name, src).to_string(), None))
}

/// [`Spec::kind`]: a member is a method, a property (getter, setter) or a
/// constructor by its signature; a field is no definition.
fn kind_of(node: Node<'_>, _: &str, label: &'static str) -> Option<&'static str> {
    if node.kind() != "member_declaration" {
        return Some(label);
    }
    Some(match signature(node)?.kind() {
        "getter_signature" | "setter_signature" => "property",
        "function_signature" | "operator_signature" => "method",
        _ => "constructor",
    })
}

/// A type's members; a function's or a method's block.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    let holder = match node.kind() {
        "member_declaration" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .find(|c| c.kind() == "method_declaration")?
        }
        _ => node,
    };
    let body = holder.child_by_field_name("body")?;
    if body.kind() == "function_body" {
        let mut cursor = body.walk();
        let block = body
            .named_children(&mut cursor)
            .find(|c| c.kind() == "block");
        return Some(block.unwrap_or(body));
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::Language;
    use crate::code::tests::{assert_symbols, chunk_small, has_link};

    const SRC: &str = "library flat_buffers;\n\nimport 'dart:typed_data';\n\n/// Reads a value of type [T] from a buffer.\nabstract class Reader<T> extends Object with Mixin implements Comparable<T> {\n  const Reader();\n\n  /// The size of the value in bytes.\n  int get size;\n\n  final int alignment = 4;\n\n  /// Reads the value at [offset].\n  T read(BufferContext bc, int offset);\n\n  static int align(int x) {\n    return roundUp(x, 8);\n  }\n\n  Reader.named(this.alignment) : super();\n}\n\nenum Color { red, green }\n\nmixin Mixin on Object {\n  void mixed() {}\n}\n\ntypedef Callback = void Function(int);\n\nint topLevel(int x) {\n  return helper(x);\n}\n";

    #[test]
    fn dart_classes_and_their_members() {
        assert_eq!(
            Language::of_path("lib/src/reader.dart"),
            Some(Language::Dart)
        );
        let doc = chunk_small("lib/src/reader.dart", SRC, 200, "dart");
        assert_symbols(
            &doc,
            &[
                ("Reader", "class"),
                ("size", "property"),
                ("read", "method"),
                ("align", "method"),
                ("named", "constructor"),
                ("Color", "enum"),
                ("Mixin", "class"),
                ("Callback", "type"),
                ("topLevel", "function"),
            ],
        );
        assert!(
            !doc.symbols.iter().any(|(n, _, _)| n == "alignment"),
            "a field is no definition: {:?}",
            doc.symbols
        );
        let crumbs: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        assert!(
            crumbs
                .iter()
                .any(|c| c == "lib/src/reader.dart > Reader > align"),
            "{crumbs:?}"
        );
        assert!(
            has_link(&doc, "roundUp", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(has_link(&doc, "helper", Relation::Calls), "{:?}", doc.links);
        assert!(
            has_link(&doc, "Comparable", Relation::Implements),
            "{:?}",
            doc.links
        );
    }
}
