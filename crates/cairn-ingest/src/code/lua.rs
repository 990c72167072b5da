//! Lua (`.lua`): functions, local functions and a table's functions
//! (`function M.join(…)`, `function M:method(…)`), which belong to their
//! table (`M > join`). Calls link by the called function's name.

use tree_sitter::Node;

use super::{DefName, Spec, field_body, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[("function_declaration", "function")],
    containers: &[],
    wrappers: &[],
    // `do … end` around a module's functions scopes their helpers.
    transparent: &["do_statement"],
    calls: &[("function_call", "name")],
    imports: &[],
    heritage: &[],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: function_name,
    body: field_body,
    owner: table,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// Lua's own: the base library and the standard tables' functions.
const BUILTINS: &[&str] = &[
    "require",
    "print",
    "pairs",
    "ipairs",
    "next",
    "type",
    "tostring",
    "tonumber",
    "setmetatable",
    "getmetatable",
    "rawget",
    "rawset",
    "rawequal",
    "rawlen",
    "assert",
    "error",
    "pcall",
    "xpcall",
    "select",
    "unpack",
    "concat",
    "insert",
    "remove",
    "format",
    "sub",
    "gsub",
    "match",
    "gmatch",
    "find",
    "byte",
    "char",
    "rep",
    "lower",
    "upper",
];

/// `function f`, `function M.f` and `function M:f` are named `f`.
fn function_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = node.child_by_field_name("name")?;
    let last = match name.kind() {
        "dot_index_expression" => name.child_by_field_name("field")?,
        "method_index_expression" => name.child_by_field_name("method")?,
        _ => name,
    };
    Some((text_of(last, src).to_string(), None))
}

/// The table a function is defined on (`M` of `function M.a.f`: `M.a`).
fn table(node: Node<'_>, src: &str) -> Option<String> {
    let name = node.child_by_field_name("name")?;
    matches!(
        name.kind(),
        "dot_index_expression" | "method_index_expression"
    )
    .then(|| name.child_by_field_name("table"))
    .flatten()
    .map(|t| text_of(t, src).to_string())
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{assert_crumbs, assert_symbols, check_lines, has_link, opts};
    use crate::code::{Language, chunk_code};

    const SRC: &str = "local M = {}\n\n-- Joins a list with a separator.\nfunction M.join(list, sep)\n  return table.concat(list, sep)\nend\n\ndo\n  local function index(t, k)\n    return t[k]\n  end\n\n  -- A column of a 2D array.\n  function M.column(a, j)\n    return imap(index, a, j)\n  end\nend\n\nfunction M:render(x)\n  return self.prefix .. helper(x)\nend\n\nlocal function helper(a)\n  return tostring(a)\nend\n\nreturn M\n";

    #[test]
    fn lua_functions_belong_to_their_table() {
        assert_eq!(Language::of_path("lua/pl/list.lua"), Some(Language::Lua));
        let doc = chunk_code("pl/list.lua", SRC, &opts());
        assert_eq!(doc.language, "lua");
        check_lines(SRC, &doc);
        assert_crumbs(
            &doc,
            &["pl/list.lua > M > join(list, sep)", "pl/list.lua > helper"],
        );
        assert!(
            doc.chunks
                .iter()
                .any(|c| c.breadcrumb().starts_with("pl/list.lua > M > render")),
            "{:?}",
            doc.chunks
                .iter()
                .map(|c| c.breadcrumb())
                .collect::<Vec<_>>()
        );
        assert_symbols(
            &doc,
            &[
                ("join", "function"),
                ("render", "function"),
                ("helper", "function"),
            ],
        );
        assert!(has_link(&doc, "helper", Relation::Calls), "{:?}", doc.links);
        assert!(
            !doc.links.iter().any(|l| l.to == "tostring"),
            "{:?}",
            doc.links
        );
    }

    #[test]
    fn a_method_named_like_a_builtin_is_defined_for_the_names_not_the_graph() {
        // penlight's `List:remove`: `remove` is Lua's own (table.remove), too
        // common to be a graph node, but `cairn search remove` wants it.
        let src = "local List = {}\n\nfunction List:remove(i)\n  table.remove(self, i)\n  return self\nend\n\nfunction List:chop(i1, i2)\n  return tremove(self, i1, i2)\nend\n\nreturn List\n";
        let doc = chunk_code("pl/List.lua", src, &opts());
        let defines = |name: &str| -> Vec<f32> {
            doc.links
                .iter()
                .filter(|l| l.to == name && l.rel == Relation::Defines)
                .map(|l| l.weight)
                .collect()
        };
        assert_eq!(defines("remove"), [0.0], "{:?}", doc.links);
        assert_eq!(defines("chop"), [1.0], "{:?}", doc.links);
        assert!(
            !doc.links
                .iter()
                .any(|l| l.to == "remove" && l.rel != Relation::Defines),
            "{:?}",
            doc.links
        );
    }
}
