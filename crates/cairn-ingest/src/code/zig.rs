//! Zig (`.zig`): functions, and the structs, enums, unions and opaque types
//! a `const Name = struct { … }` declares, with their functions as members;
//! a generic type (`fn BitReader(comptime T: type) type { … return struct {
//! … }; }`) holds the functions of the struct it returns. A declaration
//! without `pub` is hidden. Calls link by the called name.

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
    hidden: not_pub,
    makes_type,
    kind: super::listed_kind,
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

/// A type's declaration (its fields and functions); the type a generic
/// type's function returns; a function's block.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    if node.kind() == "variable_declaration" {
        return container(node);
    }
    returned_type(node).or_else(|| field_body(node))
}

/// The type declaration a function returns as the last statement of its
/// block (`return struct { … };`): what makes it a generic type.
fn returned_type(node: Node<'_>) -> Option<Node<'_>> {
    if node.kind() != "function_declaration" {
        return None;
    }
    let block = field_body(node)?;
    let mut cursor = block.walk();
    let last = block.named_children(&mut cursor).last()?;
    let ret = match last.kind() {
        "expression_statement" => last.named_child(0)?,
        _ => last,
    };
    if ret.kind() != "return_expression" {
        return None;
    }
    ret.named_child(0)
        .filter(|t| CONTAINER_KINDS.contains(&t.kind()))
}

/// [`Spec::makes_type`]: a function that returns a type it declares.
fn makes_type(node: Node<'_>) -> bool {
    returned_type(node).is_some()
}

/// A declaration without `pub` is the file's own.
fn not_pub(node: Node<'_>, _: &str) -> bool {
    let mut cursor = node.walk();
    !node.children(&mut cursor).any(|c| c.kind() == "pub")
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

    const GENERIC: &str = r#"const std = @import("std");

/// Reads a stream a few bits at a time.
pub fn BitReader(comptime T: type) type {
    assert(T == u32 or T == u64);
    return struct {
        bits: T = 0,
        nbits: u32 = 0,

        const Self = @This();

        /// Fills the buffer with at least `nice` bits.
        pub fn fill(self: *Self, nice: u6) !void {
            if (self.nbits >= nice) return;
            const b = try self.reader.readByte();
            self.bits |= @as(T, b) << self.nbits;
            self.nbits += 8;
        }

        /// Drops `n` bits.
        pub fn shift(self: *Self, n: u6) !void {
            if (n > self.nbits) return error.EndOfStream;
            self.bits >>= n;
            self.nbits -= n;
        }
    };
}

fn checkWidth(comptime T: type) void {
    assert(@bitSizeOf(T) <= 64);
}
"#;

    #[test]
    fn a_function_that_returns_a_struct_holds_its_functions() {
        let small = ChunkOptions {
            max_chars: 300,
            ..opts()
        };
        let doc = chunk_code("flate/bit_reader.zig", GENERIC, &small);
        check_lines(GENERIC, &doc);
        let c: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        for member in ["fill", "shift"] {
            let crumb = format!("flate/bit_reader.zig > BitReader > {member}");
            assert!(c.iter().any(|x| x.starts_with(&crumb)), "{member}: {c:?}");
        }
        assert_symbols(
            &doc,
            &[
                ("BitReader", "function"),
                ("fill", "function"),
                ("shift", "function"),
                ("checkWidth", "function"),
            ],
        );
        // Kept whole, the same functions are still its definitions.
        let whole = chunk_code("flate/bit_reader.zig", GENERIC, &opts());
        assert_symbols(&whole, &[("fill", "function"), ("shift", "function")]);
        // A plain function is no container: its members are statements.
        assert!(!doc.symbols.iter().any(|(n, _, _)| n == "Self"));
    }

    #[test]
    fn a_declaration_without_pub_is_hidden() {
        let doc = chunk_code("flate/bit_reader.zig", GENERIC, &opts());
        let weight = |name: &str| {
            doc.links
                .iter()
                .find(|l| l.rel == Relation::Defines && l.to == name)
                .map(|l| l.weight)
        };
        assert_eq!(weight("BitReader"), Some(1.0), "{:?}", doc.links);
        assert_eq!(weight("fill"), Some(1.0), "{:?}", doc.links);
        assert!(
            weight("checkWidth").is_some_and(|w| w > 0.0 && w < 1.0),
            "{:?}",
            doc.links
        );
    }
}
