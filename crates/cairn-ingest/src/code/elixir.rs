//! Elixir (`.ex`, `.exs`): every definition is a macro call in the syntax
//! tree (`defmodule Name do … end`, `def name(args) do … end`), so the
//! definitions are the calls whose target is one of the defining macros:
//! modules, protocols and their implementations, functions, private
//! functions, macros, guards and delegations. A module's functions belong
//! to it (`Enum.Helper > map`); `@doc` and `@spec` right above a function
//! are its documentation; `import`, `alias`, `require` and `use` are
//! imports; any other call links by the called name.

use tree_sitter::Node;

use super::{DefName, Spec, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[("call", "function")],
    // Modules are containers (`makes_type`), functions are not: a long
    // `def` is cut between its statements.
    containers: &[],
    wrappers: &[],
    transparent: &[],
    calls: &[("call", "target")],
    imports: &[],
    heritage: &[],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: def_name,
    body: body_of,
    owner: no_owner,
    script_block: no_script_block,
    hidden,
    makes_type: is_module,
    kind: kind_of,
};

/// Kernel's macros and functions every module calls, the defining macros
/// among them.
const BUILTINS: &[&str] = &[
    "def",
    "defp",
    "defmacro",
    "defmacrop",
    "defguard",
    "defguardp",
    "defdelegate",
    "defmodule",
    "defprotocol",
    "defimpl",
    "defstruct",
    "defexception",
    "defoverridable",
    "import",
    "alias",
    "require",
    "use",
    "quote",
    "unquote",
    "if",
    "unless",
    "case",
    "cond",
    "with",
    "for",
    "fn",
    "raise",
    "throw",
    "is_atom",
    "is_binary",
    "is_integer",
    "is_list",
    "is_map",
    "is_nil",
    "is_tuple",
    "is_function",
    "elem",
    "hd",
    "tl",
    "length",
    "map_size",
    "inspect",
    "to_string",
    "moduledoc",
    "doc",
    "spec",
    "impl",
    "type",
    "typep",
    "callback",
];

/// The macros that define a module or a function, and what they define.
fn defining(target: &str) -> Option<&'static str> {
    Some(match target {
        "defmodule" | "defprotocol" => "module",
        "defimpl" => "impl",
        "def" | "defp" | "defmacro" | "defmacrop" | "defguard" | "defguardp" | "defdelegate"
        | "defn" | "defnp" => "function",
        _ => return None,
    })
}

/// The defining macro a call is, if it is one: `defmodule` of
/// `defmodule Foo do … end`.
fn definer(node: Node<'_>, src: &str) -> Option<&'static str> {
    if node.kind() != "call" {
        return None;
    }
    let target = node.child_by_field_name("target")?;
    (target.kind() == "identifier")
        .then(|| defining(text_of(target, src)))
        .flatten()
}

/// [`Spec::kind`]: what a call defines, by its macro; `None` for any
/// other call.
fn kind_of(node: Node<'_>, src: &str, _: &'static str) -> Option<&'static str> {
    definer(node, src)
}

/// A module, a protocol or an implementation holds definitions: a call
/// whose first argument is a module's alias (`defmodule Enum.Helper`,
/// `defimpl Size, for: Map`) and that has a `do … end` block; a function's
/// first argument is its head (`map(list, fun)`), never an alias.
fn is_module(node: Node<'_>) -> bool {
    node.kind() == "call"
        && child(node, "do_block").is_some()
        && child(node, "arguments")
            .and_then(|a| a.named_child(0))
            .is_some_and(|first| first.kind() == "alias")
}

/// The first named child of `node` of kind `kind`.
fn child<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).find(|c| c.kind() == kind)
}

/// A defining call's name: a module's alias (`Enum.Helper`), an
/// implementation's type with its protocol (`defimpl Size, for: Map`:
/// `Map`, implementing `Size`), a function's name however it is written
/// (`def f(x)`, `def f(x) when …`, `def f`, `def a + b`). Any other call
/// defines nothing.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let kind = definer(node, src)?;
    let args = child(node, "arguments")?;
    let first = args.named_child(0)?;
    match kind {
        "module" => (first.kind() == "alias").then(|| (text_of(first, src).to_string(), None)),
        "impl" => {
            let protocol = text_of(first, src).to_string();
            let target = child(args, "keywords")
                .and_then(|k| {
                    let mut cursor = k.walk();
                    k.named_children(&mut cursor).find(|p| {
                        p.child_by_field_name("key")
                            .is_some_and(|key| text_of(key, src).trim() == "for:")
                    })
                })
                .and_then(|p| p.child_by_field_name("value"))
                .map(|v| text_of(v, src).to_string());
            Some(match target {
                Some(t) => (t, Some(protocol)),
                None => (protocol, None),
            })
        }
        _ => {
            let mut head = first;
            // `def f(x) when is_integer(x)`: the head is left of `when`.
            while head.kind() == "binary_operator" {
                head = head.child_by_field_name("left")?;
            }
            let name = match head.kind() {
                "call" => head.child_by_field_name("target")?,
                "identifier" => head,
                _ => return None,
            };
            (name.kind() == "identifier").then(|| (text_of(name, src).to_string(), None))
        }
    }
}

/// A defining call's `do … end` block: a module's members, a function's
/// statements.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    child(node, "do_block")
}

/// `defp`, `defmacrop` and `defguardp` define private names.
fn hidden(node: Node<'_>, src: &str) -> bool {
    node.child_by_field_name("target")
        .is_some_and(|t| matches!(text_of(t, src), "defp" | "defmacrop" | "defguardp"))
}

/// Whether `node` is a module attribute (`@doc "…"`, `@spec f(t) :: t`):
/// documentation of the definition below it.
pub(super) fn is_attribute(node: Node<'_>) -> bool {
    node.kind() == "unary_operator" && node.child(0).is_some_and(|op| op.kind() == "@")
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::Language;
    use crate::code::tests::{assert_symbols, chunk_named, chunk_small, has_link};

    const SRC: &str = "defmodule Enum.Helper do\n  @moduledoc \"\"\"\n  Helpers for enumerables.\n  \"\"\"\n  import Kernel, except: [max: 2]\n  alias String.Chars\n\n  @doc \"Maps a list with a function.\"\n  @spec map(list, fun) :: list\n  def map(list, fun) do\n    Enum.reduce(list, [], fn x, acc -> [fun.(x) | acc] end)\n    |> reverse_all()\n  end\n\n  defp reverse_all(list), do: :lists.reverse(list)\n\n  defmacro unless(cond, do: block) do\n    quote do: if(!unquote(cond), do: unquote(block))\n  end\n\n  def positive?(n) when is_integer(n), do: n > 0\n\n  defimpl Size, for: Map do\n    def size(map), do: map_size(map)\n  end\nend\n";

    #[test]
    fn elixir_definitions_are_the_defining_calls() {
        assert_eq!(
            Language::of_path("lib/enum/helper.ex"),
            Some(Language::Elixir)
        );
        assert_eq!(
            Language::of_path("test/helper_test.exs"),
            Some(Language::Elixir)
        );
        let doc = chunk_small("lib/enum/helper.ex", SRC, 250, "elixir");
        assert_symbols(
            &doc,
            &[
                ("Enum.Helper", "module"),
                ("map", "function"),
                ("reverse_all", "function"),
                ("unless", "function"),
                ("positive?", "function"),
                ("Map", "impl"),
                ("size", "function"),
            ],
        );
        // `@doc` and `@spec` open the function's chunk.
        let map = chunk_named(&doc, "lib/enum/helper.ex > Enum.Helper > map");
        assert!(map.text.starts_with("  @doc \"Maps"), "{}", map.text);
        assert!(
            !doc.symbols
                .iter()
                .any(|(n, _, _)| n == "import" || n == "alias"),
            "{:?}",
            doc.symbols
        );
        assert!(
            has_link(&doc, "reverse_all", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "reverse", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            !doc.links.iter().any(|l| l.to == "defp" || l.to == "def"),
            "{:?}",
            doc.links
        );
    }
}
