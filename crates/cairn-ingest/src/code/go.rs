//! Go: functions, types, and methods, which belong to their receiver's type.

use tree_sitter::Node;

use super::{DefName, Spec, builder::visit, field_body, field_name, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_declaration", "function"),
        ("method_declaration", "method"),
        ("type_declaration", "type"),
    ],
    containers: &[],
    wrappers: &[],
    transparent: &[],
    calls: &[("call_expression", "function")],
    imports: &["import_declaration"],
    heritage: &[],
    type_refs: &["type_identifier"],
    builtins: BUILTINS,
    capital_calls: true,
    name: type_name,
    body: field_body,
    owner: receiver,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// Go's own: predeclared types and functions, `fmt`'s printers.
const BUILTINS: &[&str] = &[
    "byte", "rune", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32",
    "uint64", "uintptr", "float32", "float64", "make", "cap", "panic", "recover", "Printf",
    "Sprintf", "Errorf", "Fprintf", "Fprintln", "Sprint",
];

/// A `type` declaration is named by its (first) spec; other kinds by their
/// `name`.
fn type_name(node: Node<'_>, src: &str) -> Option<DefName> {
    if node.kind() != "type_declaration" {
        return field_name(node, src);
    }
    let mut cursor = node.walk();
    let spec = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "type_spec" || c.kind() == "type_alias")?;
    Some((
        text_of(spec.child_by_field_name("name")?, src).to_string(),
        None,
    ))
}

/// Go methods belong to their receiver's type.
fn receiver(node: Node<'_>, src: &str) -> Option<String> {
    if node.kind() != "method_declaration" {
        return None;
    }
    let recv = node.child_by_field_name("receiver")?;
    let mut found = None;
    visit(recv, &mut |n| {
        if found.is_none() && n.kind() == "type_identifier" {
            found = Some(text_of(n, src).to_string());
        }
    });
    found
}
