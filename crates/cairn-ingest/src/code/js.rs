//! JavaScript, TypeScript and TSX: functions, classes, methods, interfaces,
//! types, enums, and `const f = () => {}` (a function by another syntax).

use tree_sitter::Node;

use super::{DefName, Spec, field_name, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_declaration", "function"),
        ("generator_function_declaration", "function"),
        ("class_declaration", "class"),
        ("abstract_class_declaration", "class"),
        ("method_definition", "method"),
        ("interface_declaration", "interface"),
        ("type_alias_declaration", "type"),
        ("enum_declaration", "enum"),
        ("lexical_declaration", "function"),
        ("variable_declaration", "function"),
    ],
    containers: &["class_declaration", "abstract_class_declaration"],
    wrappers: &[("export_statement", "declaration")],
    transparent: &[],
    calls: &[
        ("call_expression", "function"),
        ("new_expression", "constructor"),
    ],
    imports: &["import_statement"],
    heritage: &[("class_heritage", None)],
    type_refs: &["type_identifier"],
    builtins: BUILTINS,
    capital_calls: false,
    name: declaration_name,
    owner: no_owner,
    script_block: no_script_block,
};

/// JavaScript's and TypeScript's own: globals and utility types.
const BUILTINS: &[&str] = &[
    "require",
    "module",
    "exports",
    "Object",
    "Array",
    "String",
    "Number",
    "Boolean",
    "Symbol",
    "Function",
    "Error",
    "TypeError",
    "RangeError",
    "Promise",
    "JSON",
    "Math",
    "Date",
    "RegExp",
    "Map",
    "Set",
    "Record",
    "Partial",
    "Readonly",
    "Pick",
    "Omit",
];

/// `const handler = (…) => {…}` is a function by another syntax, named by
/// its variable; a declaration of anything else defines nothing. Other
/// kinds are named by their `name`.
fn declaration_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let kind = node.kind();
    if kind != "lexical_declaration" && kind != "variable_declaration" {
        return field_name(node, src);
    }
    let mut cursor = node.walk();
    let decl = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "variable_declarator")?;
    let value = decl.child_by_field_name("value")?;
    if !matches!(
        value.kind(),
        "arrow_function" | "function_expression" | "function" | "class"
    ) {
        return None;
    }
    Some((
        text_of(decl.child_by_field_name("name")?, src).to_string(),
        None,
    ))
}
