//! HCL and Terraform (`.tf`, `.tfvars`, `.hcl`): each top-level block its
//! own chunk, named by its last label (`resource "aws_s3_bucket" "logs"`
//! defines `logs`, its type `aws_s3_bucket` the owner, so the breadcrumb
//! reads `main.tf > aws_s3_bucket > logs` and the query
//! `aws_s3_bucket.logs` meets it); a block without labels (`terraform`,
//! `locals`) by its type.

use tree_sitter::Node;

use super::{DefName, Spec, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[("block", "block")],
    containers: &[],
    wrappers: &[],
    // The file's blocks sit in its one `body`.
    transparent: &["body"],
    calls: &[("function_call", FIRST_IDENTIFIER)],
    imports: &[],
    heritage: &[],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: block_name,
    body: no_body,
    owner: block_type,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// A function call's name is its first named child.
const FIRST_IDENTIFIER: &str = super::FIRST_NAMED_CHILD;

/// Terraform's own functions, too common to link on.
const BUILTINS: &[&str] = &[
    "length",
    "lookup",
    "merge",
    "concat",
    "format",
    "join",
    "split",
    "toset",
    "tolist",
    "tomap",
    "try",
    "can",
    "coalesce",
    "element",
    "keys",
    "values",
    "file",
    "jsonencode",
    "jsondecode",
];

/// The labels of a block (`"aws_s3_bucket"`, `"logs"`), unquoted.
fn labels<'s>(node: Node<'_>, src: &'s str) -> Vec<&'s str> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| matches!(c.kind(), "string_lit" | "identifier"))
        .skip(1) // the block's type
        .map(|c| text_of(c, src).trim_matches('"'))
        .collect()
}

/// The block's type: its first identifier (`resource`, `variable`).
fn type_of<'s>(node: Node<'_>, src: &'s str) -> Option<&'s str> {
    let mut cursor = node.walk();
    let id = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "identifier")?;
    Some(text_of(id, src))
}

/// Its last label, else its type (`terraform`, `locals`).
fn block_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = labels(node, src)
        .last()
        .copied()
        .or_else(|| type_of(node, src))?;
    (!name.is_empty()).then(|| (name.to_string(), None))
}

/// A resource's or data source's type (`aws_s3_bucket`), or the block's
/// own type for one label (`variable`, `module`, `output`).
fn block_type(node: Node<'_>, src: &str) -> Option<String> {
    let labels = labels(node, src);
    match labels.len() {
        0 => None,
        1 => type_of(node, src).map(str::to_string),
        n => Some(labels[n - 2].to_string()),
    }
}

/// A block is cut at lines when too long.
fn no_body(_: Node<'_>) -> Option<Node<'_>> {
    None
}

#[cfg(test)]
mod tests {
    use crate::code::tests::{assert_symbols, check_lines, opts};
    use crate::code::{Language, chunk_code};

    const SRC: &str = r#"terraform {
  required_version = ">= 1.5"
}

# Where the access logs of every bucket go.
resource "aws_s3_bucket" "logs" {
  bucket = "${var.prefix}-access-logs"
  tags   = merge(local.tags, { purpose = "logs" })
}

variable "prefix" {
  type        = string
  description = "Prefix of every bucket name"
}

module "vpc" {
  source = "./modules/vpc"
  cidr   = "10.0.0.0/16"
}

output "logs_bucket_arn" {
  value = aws_s3_bucket.logs.arn
}
"#;

    #[test]
    fn terraform_blocks_are_named_by_their_labels() {
        for path in ["infra/main.tf", "prod.tfvars", "config.hcl"] {
            assert_eq!(Language::of_path(path), Some(Language::Hcl), "{path}");
        }
        let doc = chunk_code("infra/main.tf", SRC, &opts());
        assert_eq!(doc.language, "hcl");
        check_lines(SRC, &doc);
        assert_symbols(
            &doc,
            &[
                ("logs", "block"),
                ("prefix", "block"),
                ("vpc", "block"),
                ("logs_bucket_arn", "block"),
            ],
        );
        let crumbs: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        for want in [
            "infra/main.tf > aws_s3_bucket > logs",
            "infra/main.tf > variable > prefix",
            "infra/main.tf > module > vpc",
        ] {
            assert!(
                crumbs.iter().any(|c| c.starts_with(want)),
                "{want} in {crumbs:?}"
            );
        }
    }
}
