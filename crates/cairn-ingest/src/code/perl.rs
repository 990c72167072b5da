//! Perl (`.pl`, `.pm`, `.t`): subroutines and packages. A `sub` belongs to
//! the package the `package Name;` above it names (`Moose::Meta::Class >
//! new_object`); a `package Name { … }` block holds its subs. Calls link by
//! the called sub's or method's name, `use parent`/`use base` is a
//! supertype link.

use tree_sitter::Node;

use super::{DefName, Spec, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("subroutine_declaration_statement", "function"),
        ("package_statement", "module"),
    ],
    containers: &["package_statement"],
    wrappers: &[],
    // A bare `{ … }` around subs scopes the lexicals they close over.
    transparent: &["block_statement"],
    calls: &[
        ("function_call_expression", "function"),
        ("ambiguous_function_call_expression", "function"),
        ("method_call_expression", "method"),
    ],
    imports: &["use_statement"],
    heritage: &[],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: def_name,
    body: body_of,
    owner: package,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// Perl's own functions, too common to link on.
const BUILTINS: &[&str] = &[
    "print",
    "printf",
    "sprintf",
    "die",
    "warn",
    "return",
    "defined",
    "ref",
    "bless",
    "shift",
    "unshift",
    "push",
    "pop",
    "splice",
    "scalar",
    "keys",
    "values",
    "each",
    "exists",
    "delete",
    "join",
    "split",
    "map",
    "grep",
    "sort",
    "reverse",
    "length",
    "substr",
    "index",
    "lc",
    "uc",
    "local",
    "wantarray",
    "caller",
    "eval",
    "require",
    "croak",
    "confess",
    "carp",
    "blessed",
    "can",
    "isa",
    "DOES",
];

/// A sub by its `name`; a package only in its block form (`package Name {
/// … }`): the statement form names the package of the subs below it
/// ([`package`]), and defines no chunk of its own.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    if node.kind() == "package_statement" && body_of(node).is_none() {
        return None;
    }
    let name = node.child_by_field_name("name")?;
    Some((text_of(name, src).to_string(), None))
}

/// A sub's `body`; a package's block (in no field).
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    if node.kind() == "package_statement" {
        let mut cursor = node.walk();
        return node
            .named_children(&mut cursor)
            .find(|c| c.kind() == "block");
    }
    node.child_by_field_name("body")
}

/// The package a sub belongs to: the nearest `package Name;` statement
/// before it among its siblings.
fn package(node: Node<'_>, src: &str) -> Option<String> {
    if node.kind() != "subroutine_declaration_statement" {
        return None;
    }
    let mut at = node.prev_named_sibling();
    while let Some(n) = at {
        if n.kind() == "package_statement" && body_of(n).is_none() {
            return n
                .child_by_field_name("name")
                .map(|name| text_of(name, src).to_string());
        }
        at = n.prev_named_sibling();
    }
    None
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{assert_symbols, check_lines, has_link, opts};
    use crate::code::{Language, chunk_code, enclosing_definition};

    const SRC: &str = r#"package Counter::Store;
use strict;
use warnings;
use parent -norequire, 'Counter::Base';

# Makes a store with its counts.
sub new {
    my ($class, %args) = @_;
    my $self = bless { counts => {}, %args }, $class;
    $self->reset_counts;
    return $self;
}

sub increment {
    my ($self, $key) = @_;
    $self->{counts}{$key}++;
    return _clamp($self->{counts}{$key});
}

sub _clamp { my ($n) = @_; return $n > 100 ? 100 : $n }

{
    my %cache;
    sub cached_total { my ($key) = @_; return $cache{$key} //= compute_total($key) }
}

package Counter::Report {
    sub render {
        my ($store) = @_;
        return join ", ", map { "$_=" . $store->get($_) } sort keys %{ $store->{counts} };
    }
}

1;
"#;

    #[test]
    fn perl_subs_belong_to_their_package() {
        for path in ["lib/Counter/Store.pm", "script/run.pl", "t/basic.t"] {
            assert_eq!(Language::of_path(path), Some(Language::Perl), "{path}");
        }
        let doc = chunk_code("lib/Counter/Store.pm", SRC, &opts());
        assert_eq!(doc.language, "perl");
        check_lines(SRC, &doc);
        let crumbs: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        for want in [
            "lib/Counter/Store.pm > Counter::Store > new",
            "lib/Counter/Store.pm > Counter::Store > increment",
            "lib/Counter/Store.pm > Counter::Report",
        ] {
            assert!(
                crumbs.iter().any(|c| c.starts_with(want)),
                "{want} in {crumbs:?}"
            );
        }
        assert_symbols(
            &doc,
            &[
                ("new", "function"),
                ("increment", "function"),
                ("Counter::Report", "module"),
                ("render", "function"),
                ("cached_total", "function"),
            ],
        );
        assert!(has_link(&doc, "_clamp", Relation::Calls), "{:?}", doc.links);
        assert!(
            has_link(&doc, "reset_counts", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            !doc.links.iter().any(|l| l.to == "bless"),
            "{:?}",
            doc.links
        );
        let def = enclosing_definition("lib/Counter/Store.pm", SRC, 16, 16).expect("increment");
        assert_eq!(def.name, "increment");
        let def = enclosing_definition("lib/Counter/Store.pm", SRC, 24, 24).expect("cached_total");
        assert_eq!(def.name, "cached_total");
    }
}
