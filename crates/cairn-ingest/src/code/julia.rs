//! Julia (`.jl`): functions in both forms (`function f(x) … end` and
//! `f(x) = …`; a method added to another module's function,
//! `Base.show(io, x) = …`, is `show`), macros, structs, abstract and
//! primitive types, constants and modules, whose definitions belong to
//! them (`PythonCall > pyimport`); a macro around a definition (`@kwdef
//! struct`, `@inline f(x) = …`) and a top-level `let`, `begin` or `if`
//! around definitions leave them definitions. A docstring right above a definition is
//! its documentation. Calls link by the called name, `using` and `import`
//! are imports.

use tree_sitter::Node;

use super::{
    DefName, FIRST_NAMED_CHILD, LAST_NAMED_CHILD, Spec, no_owner, no_script_block, text_of,
};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_definition", "function"),
        ("assignment", "function"),
        ("macro_definition", "macro"),
        ("struct_definition", "struct"),
        ("abstract_definition", "type"),
        ("primitive_definition", "type"),
        ("const_statement", "constant"),
        ("module_definition", "module"),
    ],
    containers: &["module_definition"],
    // `@kwdef struct …`, `@inline f(x) = …`: the macro's argument.
    wrappers: &[
        ("macrocall_expression", LAST_NAMED_CHILD),
        ("macro_argument_list", LAST_NAMED_CHILD),
    ],
    // `let … end`, `begin … end` and `if … end` at the top hold the file's
    // definitions too.
    transparent: &[
        "let_statement",
        "compound_statement",
        "if_statement",
        "elseif_clause",
        "else_clause",
    ],
    calls: &[("call_expression", FIRST_NAMED_CHILD)],
    imports: &["import_statement", "using_statement"],
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

/// Base's most called, too common to link on.
const BUILTINS: &[&str] = &[
    "println",
    "print",
    "string",
    "length",
    "push!",
    "error",
    "throw",
    "convert",
    "typeof",
    "isa",
    "isnothing",
    "nothing",
    "haskey",
    "get",
    "getindex",
    "setindex!",
    "Int",
    "Float64",
    "String",
    "Symbol",
    "Vector",
    "Dict",
    "Any",
    "Nothing",
    "Bool",
    "esc",
    "map",
    "collect",
    "zip",
    "enumerate",
];

/// The first named child of `node`.
fn first(node: Node<'_>) -> Option<Node<'_>> {
    node.named_child(0)
}

/// The defined name in a function's head: `f` of `f(x)`, `f(x)::T`,
/// `f(x) where T`, `show` of `Base.show(io, x)`; a type's in its head
/// (`Point` of `Point{T}`, `Py` of `Py <: AbstractPy`).
fn head_name<'s>(node: Node<'_>, src: &'s str) -> Option<&'s str> {
    let mut n = node;
    for _ in 0..8 {
        match n.kind() {
            "identifier" => return Some(text_of(n, src)),
            // `Base.show`: the last identifier.
            "field_expression" => {
                let last =
                    n.named_child(u32::try_from(n.named_child_count().checked_sub(1)?).ok()?)?;
                return (last.kind() == "identifier").then(|| text_of(last, src));
            }
            "where_expression"
            | "typed_expression"
            | "call_expression"
            | "parametrized_type_expression"
            | "binary_expression"
            | "curly_expression"
            | "signature"
            | "type_head" => n = first(n)?,
            _ => return None,
        }
    }
    None
}

/// A definition's name; an assignment defines a function only when its
/// left side is a call (`f(x) = …`), a `const` its constant.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = match node.kind() {
        "module_definition" => text_of(node.child_by_field_name("name")?, src),
        "function_definition" | "macro_definition" => {
            let mut cursor = node.walk();
            let sig = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "signature")?;
            head_name(sig, src)?
        }
        "assignment" => {
            let lhs = first(node)?;
            let mut call = lhs;
            while matches!(call.kind(), "where_expression" | "typed_expression") {
                call = first(call)?;
            }
            if call.kind() != "call_expression" {
                return None;
            }
            head_name(call, src)?
        }
        "const_statement" => {
            let assignment = first(node)?;
            let lhs = first(assignment)?;
            (lhs.kind() == "identifier").then(|| text_of(lhs, src))?
        }
        _ => {
            let mut cursor = node.walk();
            let head = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "type_head")?;
            head_name(head, src)?
        }
    };
    Some((name.to_string(), None))
}

/// A module's definitions are its own children, and so are a `let`'s, a
/// `begin`'s and a conditional's statements.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    matches!(
        node.kind(),
        "module_definition"
            | "let_statement"
            | "compound_statement"
            | "if_statement"
            | "elseif_clause"
            | "else_clause"
    )
    .then_some(node)
}

/// Whether `node` is a docstring: a string standing alone among a file's
/// or a module's statements, documenting the definition below it.
pub(super) fn is_docstring(node: Node<'_>) -> bool {
    node.kind() == "string_literal"
        && node
            .parent()
            .is_some_and(|p| matches!(p.kind(), "source_file" | "module_definition"))
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::Language;
    use crate::code::tests::{assert_symbols, chunk_named, chunk_small, has_link};

    const SRC: &str = "module PythonCall\n\nusing Base: @kwdef\nimport ..Utils: helper\n\nexport Py, pyimport\n\n\"\"\"\n    Py(x)\n\nA Python object.\n\"\"\"\nmutable struct Py <: AbstractPy\n    ptr::Ptr{Cvoid}\nend\n\nabstract type AbstractPy end\n\n\"\"\"Imports a Python module by name.\"\"\"\nfunction pyimport(name::AbstractString)\n    return pynew(lookup(name))\nend\n\npyconvert(::Type{T}, x) where {T} = convert_rule(T, x)\nBase.show(io::IO, x::Py) = print(io, \"Py\")\n\nmacro py(ex)\n    esc(ex)\nend\n\nconst VERSION = v\"1.0\"\ncounter = 0\n\n@kwdef struct Options\n    depth::Int = 1\nend\n\nif Sys.iswindows()\n    libname() = \"python.dll\"\nelse\n    @inline libname() = \"libpython.so\"\nend\n\nend\n";

    #[test]
    fn julia_functions_types_and_modules() {
        assert_eq!(
            Language::of_path("src/PythonCall.jl"),
            Some(Language::Julia)
        );
        let doc = chunk_small("src/PythonCall.jl", SRC, 200, "julia");
        assert_symbols(
            &doc,
            &[
                ("PythonCall", "module"),
                ("Py", "struct"),
                ("AbstractPy", "type"),
                ("pyimport", "function"),
                ("pyconvert", "function"),
                ("show", "function"),
                ("py", "macro"),
                ("VERSION", "constant"),
                ("Options", "struct"),
                ("libname", "function"),
            ],
        );
        assert!(
            !doc.symbols.iter().any(|(n, _, _)| n == "counter"),
            "{:?}",
            doc.symbols
        );
        // The docstring opens the function's chunk.
        let f = chunk_named(&doc, "src/PythonCall.jl > PythonCall > pyimport");
        assert!(f.text.starts_with("\"\"\"Imports"), "{}", f.text);
        assert!(has_link(&doc, "lookup", Relation::Calls), "{:?}", doc.links);
        assert!(
            has_link(&doc, "convert_rule", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "helper", Relation::Imports),
            "{:?}",
            doc.links
        );
    }
}
