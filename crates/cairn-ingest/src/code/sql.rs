//! SQL (`.sql`): the definitions of a schema — tables, views, materialized
//! views, functions, types, indexes, triggers, sequences, schemas — each
//! statement its own chunk named by the object it creates (`CREATE TABLE
//! billing.invoices` defines `invoices`, the schema its owner). Queries and
//! other statements between them are the file's own chunks. Calls link by
//! the called function's name.

use tree_sitter::Node;

use super::{DefName, FIRST_NAMED_CHILD, Spec, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("create_table", "table"),
        ("create_view", "view"),
        ("create_materialized_view", "view"),
        ("create_function", "function"),
        ("create_type", "type"),
        ("create_index", "index"),
        ("create_trigger", "trigger"),
        ("create_sequence", "sequence"),
        ("create_schema", "schema"),
    ],
    containers: &[],
    // A definition is a `statement`'s only child.
    wrappers: &[("statement", FIRST_NAMED_CHILD)],
    transparent: &[],
    calls: &[("invocation", FIRST_NAMED_CHILD)],
    imports: &[],
    heritage: &[],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: object_name,
    body: no_body,
    owner: schema,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// SQL's own functions, too common to link on (compared as written, so
/// both cases).
const BUILTINS: &[&str] = &[
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "coalesce",
    "nullif",
    "now",
    "lower",
    "upper",
    "length",
    "substring",
    "trim",
    "concat",
    "cast",
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "COALESCE",
    "NULLIF",
    "NOW",
    "LOWER",
    "UPPER",
    "LENGTH",
    "SUBSTRING",
    "TRIM",
    "CONCAT",
    "CAST",
];

/// The `object_reference` a `CREATE` names (the first one: a trigger's or
/// an index's table comes after its own name), else its first identifier
/// (`CREATE INDEX name ON …`, `CREATE SCHEMA name`).
fn object_reference(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    if matches!(
        node.kind(),
        "create_index" | "create_trigger" | "create_schema"
    ) && let Some(id) = children.iter().find(|c| c.kind() == "identifier")
    {
        return Some(*id);
    }
    children
        .into_iter()
        .find(|c| c.kind() == "object_reference")
}

/// The created object's name, without its schema.
fn object_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let reference = object_reference(node)?;
    let name = reference.child_by_field_name("name").unwrap_or(reference);
    let name = text_of(name, src).trim_matches(['"', '`', '[', ']']);
    (!name.is_empty()).then(|| (name.to_string(), None))
}

/// The schema a created object is in, when its name says it
/// (`billing.invoices`).
fn schema(node: Node<'_>, src: &str) -> Option<String> {
    let reference = object_reference(node)?;
    let schema = reference.child_by_field_name("schema")?;
    Some(text_of(schema, src).trim_matches(['"', '`']).to_string())
}

/// The text with psql's meta-commands (`\echo …`, `\quit`, `\set`, `\i
/// file`: lines that start with a backslash) blanked, byte for byte, so the
/// grammar parses the SQL around them: every PostgreSQL extension script
/// opens with one, and it left the whole file under an error node. `None`
/// when there is none.
pub(super) fn without_meta_commands(text: &str) -> Option<String> {
    if !text.lines().any(|l| l.trim_start().starts_with('\\')) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('\\') {
            // Every byte but the line end becomes a space: the same length.
            let body = line.trim_end_matches(['\n', '\r']);
            out.push_str(&" ".repeat(body.len()));
            out.push_str(&line[body.len()..]);
        } else {
            out.push_str(line);
        }
    }
    Some(out)
}

/// A statement is cut at lines when too long: it has no members.
fn no_body(_: Node<'_>) -> Option<Node<'_>> {
    None
}

#[cfg(test)]
mod tests {
    use crate::code::tests::{assert_symbols, check_lines, opts};
    use crate::code::{Language, chunk_code};

    const SRC: &str = "-- Billing schema.\n\
\\echo Use \"CREATE EXTENSION billing\" to load this file. \\quit\n\
CREATE SCHEMA billing;\n\
\n\
-- One row per invoice sent.\n\
CREATE TABLE billing.invoices (\n\
    id bigint PRIMARY KEY,\n\
    customer_id bigint NOT NULL,\n\
    settlement_currency char(3) NOT NULL,\n\
    total_cents bigint NOT NULL\n\
);\n\
\n\
CREATE INDEX invoices_by_customer ON billing.invoices (customer_id);\n\
\n\
CREATE VIEW open_invoices AS\n\
    SELECT id, customer_id, total_cents FROM billing.invoices WHERE total_cents > 0;\n\
\n\
CREATE FUNCTION invoice_total(a bigint, b bigint) RETURNS bigint AS $$\n\
    SELECT a + b\n\
$$ LANGUAGE sql;\n\
\n\
SELECT count(*) FROM billing.invoices;\n";

    #[test]
    fn sql_definitions_are_named_by_what_they_create() {
        assert_eq!(
            Language::of_path("db/migrations/001_init.sql"),
            Some(Language::Sql)
        );
        let doc = chunk_code("db/001_init.sql", SRC, &opts());
        assert_eq!(doc.language, "sql");
        check_lines(SRC, &doc);
        assert_symbols(
            &doc,
            &[
                ("invoices", "table"),
                ("open_invoices", "view"),
                ("invoice_total", "function"),
                ("invoices_by_customer", "index"),
            ],
        );
        let crumbs: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        assert!(
            crumbs
                .iter()
                .any(|c| c.starts_with("db/001_init.sql > billing > invoices")),
            "{crumbs:?}"
        );
        let table = doc
            .chunks
            .iter()
            .find(|c| c.breadcrumb().ends_with("invoices"))
            .expect("the table's chunk");
        assert!(
            table.text.starts_with("-- One row per invoice sent."),
            "{}",
            table.text
        );
    }
}
