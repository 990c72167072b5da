//! Java: classes, interfaces, enums, records, annotations, methods and
//! constructors.

use super::{Spec, field_body, field_name, no_owner, no_script_block};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class_declaration", "class"),
        ("interface_declaration", "interface"),
        ("enum_declaration", "enum"),
        ("record_declaration", "record"),
        ("annotation_type_declaration", "annotation"),
        ("method_declaration", "method"),
        ("constructor_declaration", "constructor"),
    ],
    containers: &[
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
    ],
    wrappers: &[],
    transparent: &[],
    calls: &[
        ("method_invocation", "name"),
        ("object_creation_expression", "type"),
    ],
    imports: &["import_declaration"],
    heritage: &[("superclass", None), ("super_interfaces", None)],
    type_refs: &["type_identifier"],
    builtins: BUILTINS,
    capital_calls: false,
    name: field_name,
    body: field_body,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// Java's own: `java.lang` and the collections every file uses.
const BUILTINS: &[&str] = &[
    "Object",
    "String",
    "Integer",
    "Long",
    "Boolean",
    "Double",
    "Override",
    "Exception",
    "RuntimeException",
    "System",
    "Math",
    "StringBuilder",
    "List",
    "ArrayList",
    "Map",
    "HashMap",
    "Set",
    "HashSet",
    "Optional",
];
