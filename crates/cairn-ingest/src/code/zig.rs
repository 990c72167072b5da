//! Zig (`.zig`): functions, and the structs, enums, unions and opaque types
//! a `const Name = struct { … }` declares, with their functions as members.
//! Calls link by the called name.

use tree_sitter::Node;

use super::{DefName, Spec, field_body, field_name, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_declaration", "function"),
        ("variable_declaration", "struct"),
    ],
    containers: &["variable_declaration"],
    wrappers: &[],
    transparent: &[],
    calls: &[("call_expression", "function")],
    imports: &[],
    heritage: &[],
    type_refs: &[],
    builtins: &[],
    capital_calls: false,
    name: def_name,
    body: body_of,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
};

/// Kinds of a type a `const` declares.
const CONTAINER_KINDS: &[&str] = &[
    "struct_declaration",
    "enum_declaration",
    "union_declaration",
    "opaque_declaration",
    "error_set_declaration",
];

/// The type declaration a `const` holds, if it holds one.
fn container(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .find(|c| CONTAINER_KINDS.contains(&c.kind()))
}

/// A function by its `name`; a `const` only when it declares a type (`const
/// x = 1` defines nothing here), by the identifier it binds.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    if node.kind() != "variable_declaration" {
        return field_name(node, src);
    }
    container(node)?;
    let mut cursor = node.walk();
    let name = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "identifier")?;
    Some((text_of(name, src).to_string(), None))
}

/// A type's declaration (its fields and functions); a function's block.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    if node.kind() == "variable_declaration" {
        return container(node);
    }
    field_body(node)
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{assert_crumbs, assert_symbols, check_lines, has_link, opts};
    use crate::code::{Language, chunk_code};
    use crate::markdown::ChunkOptions;

    const SRC: &str = r#"const std = @import("std");

/// Memory for callers that free what they take.
pub const Allocator = struct {
    ptr: *anyopaque,
    vtable: *const VTable,

    /// Takes `n` bytes, or fails with `error.OutOfMemory`.
    pub fn alloc(self: Allocator, n: usize) ![]u8 {
        return self.vtable.allocFn(self.ptr, n) orelse error.OutOfMemory;
    }

    pub fn free(self: Allocator, buf: []u8) void {
        self.vtable.freeFn(self.ptr, buf);
    }
};

const Kind = enum { small, large };

const max_len = 64;

pub fn copy(dest: []u8, src: []const u8) void {
    std.mem.copyForwards(u8, dest, src);
    checkLength(dest.len);
}
"#;

    #[test]
    fn zig_structs_declared_by_const_hold_their_functions() {
        assert_eq!(Language::of_path("lib/std/mem.zig"), Some(Language::Zig));
        let small = ChunkOptions {
            max_chars: 250,
            ..opts()
        };
        let doc = chunk_code("std/mem.zig", SRC, &small);
        assert_eq!(doc.language, "zig");
        check_lines(SRC, &doc);
        let c: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        assert!(
            c.iter()
                .any(|x| x.starts_with("std/mem.zig > Allocator > alloc")),
            "{c:?}"
        );
        assert_crumbs(&doc, &["std/mem.zig > Kind", "std/mem.zig > copy"]);
        assert_symbols(
            &doc,
            &[
                ("Allocator", "struct"),
                ("Kind", "struct"),
                ("alloc", "function"),
                ("copy", "function"),
            ],
        );
        // `const max_len = 64` declares no type: no definition.
        assert!(!doc.symbols.iter().any(|(n, _, _)| n == "max_len"));
        assert!(
            has_link(&doc, "checkLength", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "copyForwards", Relation::Calls),
            "{:?}",
            doc.links
        );
    }
}
