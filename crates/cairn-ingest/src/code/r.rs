//! R (`.R`, `.r`): functions assigned to a name (`ggplot <- function(…)`,
//! `ggplot.default = function(…)`: S3 methods keep their dotted names), and
//! the classes built by a call: `ggproto("Geom", …)`, `R6Class("Person",
//! …)` and `setRefClass(…)` assigned to a name, whose function-valued
//! arguments are its methods (`Geom > draw_panel`; an R6 class's `public`,
//! `private` and `active` lists are its sections, `Person > public >
//! greet`). Definitions in a top-level `if (…) { … } else { … }` are the
//! file's (a backport for old R versions). Roxygen comments (`#'`) right above are the definition's.
//! Calls link by the called name, `library(x)` and `require(x)` are
//! imports.

use tree_sitter::Node;

use super::{DefName, Spec, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[("function_definition", "function"), ("call", "class")],
    containers: &["call"],
    // `name <- value` and a call's `name = value` argument hold the
    // definition in their value.
    wrappers: &[("binary_operator", "rhs"), ("argument", "value")],
    // `if (…) { f <- function… } else { … }` at the top: both branches'
    // definitions are the file's.
    transparent: &["if_statement", "braced_expression"],
    calls: &[("call", "function")],
    imports: &[],
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

/// Base R's most called, too common to link on.
const BUILTINS: &[&str] = &[
    "c",
    "list",
    "length",
    "names",
    "is.null",
    "stop",
    "warning",
    "message",
    "paste",
    "paste0",
    "function",
    "return",
    "invisible",
    "lapply",
    "sapply",
    "vapply",
    "seq_along",
    "seq_len",
    "vector",
    "character",
    "numeric",
    "logical",
    "integer",
    "match.arg",
    "missing",
    "inherits",
    "structure",
    "cat",
    "print",
    "format",
    "library",
    "require",
    "UseMethod",
    "NextMethod",
];

/// Calls that make a class of their arguments.
const CLASS_MAKERS: &[&str] = &["ggproto", "R6Class", "setRefClass"];

/// The sections of an R6 class: lists of members.
const R6_SECTIONS: &[&str] = &["public", "private", "active"];

/// A call's function's name (`R6::R6Class` is `R6Class`).
fn called<'s>(call: Node<'_>, src: &'s str) -> &'s str {
    call.child_by_field_name("function")
        .map(|f| {
            let t = text_of(f, src);
            t.rsplit("::").next().unwrap_or(t)
        })
        .unwrap_or("")
}

/// The name a value is given by what holds it: the left side of `name <-
/// value` (`<-`, `<<-`, `=`; a string `"name" <- …` unquoted), or the
/// name of a `name = value` argument.
fn given_name<'s>(value: Node<'_>, src: &'s str) -> Option<&'s str> {
    let holder = value.parent()?;
    let name = match holder.kind() {
        "binary_operator" => {
            let op = holder.child_by_field_name("operator")?;
            if !matches!(text_of(op, src), "<-" | "<<-" | "=") {
                return None;
            }
            holder.child_by_field_name("lhs")?
        }
        "argument" => holder.child_by_field_name("name")?,
        _ => return None,
    };
    matches!(name.kind(), "identifier" | "string")
        .then(|| text_of(name, src).trim_matches(['"', '\'', '`']))
        .filter(|n| !n.is_empty())
}

/// The class-making call whose arguments hold `argument` (through an R6
/// section's list), if there is one.
fn maker_of(argument: Node<'_>, src: &str) -> Option<()> {
    let call = argument.parent()?.parent()?;
    if call.kind() != "call" {
        return None;
    }
    if CLASS_MAKERS.contains(&called(call, src)) {
        return Some(());
    }
    // `public = list(…)` inside `R6Class(…)`.
    let section = call.parent()?;
    (called(call, src) == "list"
        && section.kind() == "argument"
        && given_name(call, src).is_some_and(|n| R6_SECTIONS.contains(&n)))
    .then(|| maker_of(section, src))
    .flatten()
}

/// Whether an assignment stands among a file's statements (in a top-level
/// `if` or `{ … }` too), not inside a call (`test_that("…", { f <- … })`,
/// `on_load(…)`) or a function.
fn at_top(assignment: Node<'_>) -> bool {
    let mut n = assignment;
    while let Some(p) = n.parent() {
        match p.kind() {
            "program" => return true,
            "braced_expression" | "if_statement" => n = p,
            _ => return false,
        }
    }
    false
}

/// A function's name, given by its assignment or, for a class's method,
/// by its argument; a class's by its assignment; an R6 class's section by
/// its argument. An anonymous function (`lapply(x, function(i) …)`), an
/// argument of any other call and any other call define nothing.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = given_name(node, src)?;
    let holder = node.parent()?;
    let ok = match node.kind() {
        "function_definition" => {
            (holder.kind() == "binary_operator" && at_top(holder))
                || maker_of(holder, src).is_some()
        }
        "call" => {
            let f = called(node, src);
            if CLASS_MAKERS.contains(&f) {
                holder.kind() == "binary_operator"
            } else {
                f == "list"
                    && holder.kind() == "argument"
                    && R6_SECTIONS.contains(&name)
                    && maker_of(holder, src).is_some()
            }
        }
        _ => false,
    };
    ok.then(|| (name.to_string(), None))
}

/// A class's arguments; a function's braced body; a conditional's and a
/// braced group's statements are their own children.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "if_statement" | "braced_expression" => Some(node),
        "call" => node.child_by_field_name("arguments"),
        "function_definition" => node
            .child_by_field_name("body")
            .filter(|b| b.kind() == "braced_expression"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::Language;
    use crate::code::tests::{assert_symbols, chunk_named, chunk_small, has_link};

    const SRC: &str = "#' Create a new ggplot\n#'\n#' @export\nggplot <- function(data = NULL, mapping = aes(), ...) {\n  UseMethod(\"ggplot\")\n}\n\nggplot.default <- function(data = NULL, mapping = aes(), ...) {\n  fortify(data, ...)\n}\n\nGeom <- ggproto(\"Geom\",\n  required_aes = character(),\n  draw_panel = function(self, data, panel_params, coord) {\n    draw_key(data)\n  },\n  setup_data = function(data, params) data\n)\n\nPerson <- R6Class(\"Person\",\n  public = list(\n    name = NULL,\n    greet = function() {\n      cat(\"Hello, \", self$name)\n    }\n  )\n)\n\nif (getRversion() < \"3.5\") {\n  isFALSE <- function(x) is.logical(x) && !x\n} else {\n  backport <- function() {}\n}\n\nsquares <- lapply(1:3, function(i) i * i)\ntest_that(\"it greets\", {\n  local_helper <- function() 1\n})\n";

    #[test]
    fn r_functions_and_classes_made_by_calls() {
        for path in ["R/plot.R", "R/plot.r"] {
            assert_eq!(Language::of_path(path), Some(Language::R), "{path}");
        }
        let doc = chunk_small("R/plot.R", SRC, 120, "r");
        assert_symbols(
            &doc,
            &[
                ("ggplot", "function"),
                ("ggplot.default", "function"),
                ("Geom", "class"),
                ("draw_panel", "function"),
                ("setup_data", "function"),
                ("Person", "class"),
                ("greet", "function"),
                ("isFALSE", "function"),
                ("backport", "function"),
            ],
        );
        for not in ["squares", "required_aes", "name", "local_helper"] {
            assert!(
                !doc.symbols.iter().any(|(n, _, _)| n == not),
                "{not}: {:?}",
                doc.symbols
            );
        }
        // The roxygen block opens the function's chunk.
        let ggplot = chunk_named(&doc, "R/plot.R > ggplot");
        assert!(ggplot.text.starts_with("#' Create"), "{}", ggplot.text);
        assert!(
            has_link(&doc, "fortify", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "draw_key", Relation::Calls),
            "{:?}",
            doc.links
        );
    }
}
