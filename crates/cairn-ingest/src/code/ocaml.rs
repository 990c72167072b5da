//! OCaml (`.ml`, and interfaces `.mli` with the grammar's interface
//! variant): `let` bindings, `external`s, types, modules, module types,
//! classes and their methods; an interface's `val`s. A module's members
//! belong to it (`Re > Group > get`); `open M` is an import; an
//! application links by the applied function's name.

use tree_sitter::Node;

use super::{DefName, Spec, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("value_definition", "function"),
        ("external", "function"),
        ("value_specification", "function"),
        ("type_definition", "type"),
        ("module_definition", "module"),
        ("module_type_definition", "module"),
        ("class_definition", "class"),
        ("method_definition", "method"),
    ],
    containers: &[
        "module_definition",
        "module_type_definition",
        "class_definition",
    ],
    wrappers: &[],
    transparent: &[],
    calls: &[("application_expression", "function")],
    imports: &["open_module"],
    heritage: &[],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: def_name,
    body: body_of,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// The standard library's most used, too common to link on.
const BUILTINS: &[&str] = &[
    "print_endline",
    "print_string",
    "printf",
    "sprintf",
    "failwith",
    "invalid_arg",
    "raise",
    "ignore",
    "fst",
    "snd",
    "not",
    "ref",
    "incr",
    "decr",
    "List.map",
    "List.iter",
    "List.fold_left",
    "List.rev",
    "List.length",
    "String.length",
    "String.concat",
    "Printf.printf",
    "Printf.sprintf",
    "Format.fprintf",
];

/// The first named child of `node` of one of `kinds`.
fn child<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .find(|c| kinds.contains(&c.kind()))
}

/// A definition's name: a `let`'s bound name (none for `let () = …`), a
/// type's, a module's, a class's, a method's, a `val`'s or an `external`'s.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = match node.kind() {
        "value_definition" => {
            let binding = child(node, &["let_binding"])?;
            let pattern = binding.child_by_field_name("pattern")?;
            (pattern.kind() == "value_name").then_some(pattern)?
        }
        "type_definition" => child(node, &["type_binding"])?.child_by_field_name("name")?,
        "module_definition" => child(child(node, &["module_binding"])?, &["module_name"])?,
        "module_type_definition" => child(node, &["module_type_name"])?,
        "class_definition" => child(child(node, &["class_binding"])?, &["class_name"])?,
        "method_definition" => child(node, &["method_name"])?,
        "value_specification" | "external" => child(node, &["value_name"])?,
        _ => return None,
    };
    Some((text_of(name, src).to_string(), None))
}

/// Where a module's, a module type's or a class's members are: the
/// `structure`, `signature` or `object_expression` of its binding.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    let holder = match node.kind() {
        "module_definition" => child(node, &["module_binding"])?,
        "class_definition" => child(node, &["class_binding"])?,
        _ => node,
    };
    holder
        .child_by_field_name("body")
        .or_else(|| holder.child_by_field_name("module_type"))
        .filter(|b| matches!(b.kind(), "structure" | "signature" | "object_expression"))
}

#[cfg(test)]
mod tests {
    use crate::code::tests::{assert_symbols, check_lines, opts};
    use crate::code::{Language, chunk_code};

    const ML: &str = "open Printf\n\n(** The shapes we draw. *)\ntype shape = Circle of float | Square of float\n\nlet area s = match s with Circle r -> r *. r | Square a -> a *. a\n\nlet () = print_endline (string_of_float (area (Circle 1.0)))\n\nmodule Registry = struct\n  let table = Hashtbl.create 16\n\n  (** Registers a shape under a name. *)\n  let register name shape = Hashtbl.replace table name (area shape)\nend\n\nclass greeter = object method hello = \"hi\" end\n";

    const MLI: &str = "(** Shapes. *)\ntype shape\n\nval area : shape -> float\n\nmodule Registry : sig\n  val register : string -> shape -> unit\nend\n";

    #[test]
    fn ocaml_definitions_and_interfaces() {
        assert_eq!(Language::of_path("lib/shapes.ml"), Some(Language::OCaml));
        assert_eq!(
            Language::of_path("lib/shapes.mli"),
            Some(Language::OCamlInterface)
        );
        let doc = chunk_code("lib/shapes.ml", ML, &opts());
        assert_eq!(doc.language, "ocaml");
        check_lines(ML, &doc);
        assert_symbols(
            &doc,
            &[
                ("shape", "type"),
                ("area", "function"),
                ("Registry", "module"),
                ("register", "function"),
                ("greeter", "class"),
            ],
        );
        assert!(
            !doc.symbols.iter().any(|(n, _, _)| n == "()"),
            "`let () =` defines nothing: {:?}",
            doc.symbols
        );
        let doc = chunk_code("lib/shapes.mli", MLI, &opts());
        assert_eq!(doc.language, "ocaml");
        check_lines(MLI, &doc);
        assert_symbols(
            &doc,
            &[
                ("shape", "type"),
                ("area", "function"),
                ("Registry", "module"),
            ],
        );
    }
}
