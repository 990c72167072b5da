//! C#: classes, structs, interfaces, enums, records, methods, constructors
//! and properties; namespaces group without naming a type.

use super::{Spec, field_body, field_name, no_owner, no_script_block};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class_declaration", "class"),
        ("struct_declaration", "struct"),
        ("interface_declaration", "interface"),
        ("enum_declaration", "enum"),
        ("record_declaration", "record"),
        ("method_declaration", "method"),
        ("constructor_declaration", "constructor"),
        ("property_declaration", "property"),
    ],
    containers: &[
        "class_declaration",
        "struct_declaration",
        "interface_declaration",
        "record_declaration",
    ],
    wrappers: &[],
    transparent: &[
        "namespace_declaration",
        "file_scoped_namespace_declaration",
        "declaration_list",
    ],
    calls: &[
        ("invocation_expression", "function"),
        ("object_creation_expression", "type"),
    ],
    imports: &["using_directive"],
    heritage: &[("base_list", None)],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: true,
    name: field_name,
    body: field_body,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// C#'s own: `System` types and the LINQ calls every file makes.
const BUILTINS: &[&str] = &[
    "Object",
    "String",
    "Int32",
    "Boolean",
    "Console",
    "WriteLine",
    "Exception",
    "ArgumentException",
    "ArgumentNullException",
    "InvalidOperationException",
    "Math",
    "List",
    "Dictionary",
    "HashSet",
    "IEnumerable",
    "Task",
    "Func",
    "Action",
    "Select",
    "Where",
    "ToList",
    "ToArray",
    "FirstOrDefault",
    "GetType",
    "nameof",
];
