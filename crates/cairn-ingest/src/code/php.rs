//! PHP (`.php`): classes, interfaces, traits and enums, their methods,
//! functions (also inside `if (!function_exists(…)) { … }`, the way helper
//! files guard them). A namespace groups definitions without naming them;
//! `use` declarations are imports, `extends`/`implements` supertype links.

use super::{Spec, field_body, field_name, no_owner, no_script_block};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class_declaration", "class"),
        ("interface_declaration", "interface"),
        ("trait_declaration", "trait"),
        ("enum_declaration", "enum"),
        ("function_definition", "function"),
        ("method_declaration", "method"),
    ],
    containers: &[
        "class_declaration",
        "interface_declaration",
        "trait_declaration",
        "enum_declaration",
    ],
    wrappers: &[],
    transparent: &["namespace_definition", "if_statement", "compound_statement"],
    calls: &[
        ("function_call_expression", "function"),
        ("member_call_expression", "name"),
        ("nullsafe_member_call_expression", "name"),
        ("scoped_call_expression", "name"),
    ],
    imports: &["namespace_use_declaration"],
    heritage: &[("base_clause", None), ("class_interface_clause", None)],
    type_refs: &["named_type"],
    builtins: BUILTINS,
    capital_calls: false,
    name: field_name,
    body: field_body,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// PHP's own: the standard functions and classes every file uses.
const BUILTINS: &[&str] = &[
    "array",
    "count",
    "isset",
    "unset",
    "empty",
    "is_array",
    "is_string",
    "is_int",
    "is_null",
    "is_callable",
    "in_array",
    "array_map",
    "array_filter",
    "array_merge",
    "array_keys",
    "array_values",
    "array_key_exists",
    "sprintf",
    "implode",
    "explode",
    "strlen",
    "str_replace",
    "strtolower",
    "strtoupper",
    "substr",
    "trim",
    "json_encode",
    "json_decode",
    "function_exists",
    "class_exists",
    "method_exists",
    "get_class",
    "func_get_args",
    "call_user_func",
    "call_user_func_array",
    "self",
    "static",
    "parent",
    "Exception",
    "Throwable",
    "InvalidArgumentException",
    "RuntimeException",
    "LogicException",
    "Closure",
    "Traversable",
    "Countable",
    "ArrayAccess",
    "IteratorAggregate",
    "Stringable",
    "mixed",
    "void",
    "null",
];

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{assert_crumbs, assert_symbols, check_lines, has_link, opts};
    use crate::code::{Language, chunk_code, enclosing_definition, highlight};
    use crate::markdown::ChunkOptions;

    const SRC: &str = r#"<?php

declare(strict_types=1);

namespace Monolog;

use Monolog\Handler\HandlerInterface;
use Psr\Log\LoggerInterface;

/**
 * Monolog log channel: a name and a stack of handlers.
 */
class Logger implements LoggerInterface, ResettableInterface
{
    /** @var list<HandlerInterface> */
    protected array $handlers;

    public function __construct(string $name, array $handlers = [])
    {
        $this->name = $name;
        $this->setHandlers($handlers);
    }

    /**
     * Adds a log record at an arbitrary level.
     */
    public function addRecord(int|Level $level, string $message, array $context = []): bool
    {
        $record = new LogRecord($message, $context);
        foreach ($this->handlers as $handler) {
            if ($handler->handle($record)) {
                break;
            }
        }
        return static::toMonologLevel($level) !== null;
    }
}

if (!function_exists('Monolog\log_level')) {
    /** The level of a name. */
    function log_level(string $name): int
    {
        return Logger::toMonologLevel($name);
    }
}
"#;

    #[test]
    fn php_classes_methods_and_guarded_functions_get_breadcrumbs() {
        assert_eq!(
            Language::of_path("src/Monolog/Logger.php"),
            Some(Language::Php)
        );
        assert_eq!(Language::Php.name(), "php");
        let small = ChunkOptions {
            max_chars: 500,
            ..opts()
        };
        let doc = chunk_code("src/Monolog/Logger.php", SRC, &small);
        assert_eq!(doc.language, "php");
        check_lines(SRC, &doc);
        assert_crumbs(
            &doc,
            &[
                "src/Monolog/Logger.php > Logger > __construct(string $name, array $handlers = [])",
                "src/Monolog/Logger.php > Logger > addRecord(int|Level $level, string $message, array $context = []): bool",
                "src/Monolog/Logger.php > log_level",
            ],
        );
        let add = doc
            .chunks
            .iter()
            .find(|c| c.breadcrumb().contains("> addRecord("))
            .expect("addRecord");
        assert!(add.text.trim_start().starts_with("/**"), "{}", add.text);
        assert_symbols(
            &doc,
            &[
                ("Logger", "class"),
                ("addRecord", "method"),
                ("log_level", "function"),
            ],
        );
        for (to, rel) in [
            ("setHandlers", Relation::Calls),
            ("handle", Relation::Calls),
            ("toMonologLevel", Relation::Calls),
            ("LoggerInterface", Relation::Implements),
            ("ResettableInterface", Relation::Implements),
            ("HandlerInterface", Relation::Imports),
            ("Logger", Relation::MemberOf),
        ] {
            let what = format!("{to} {rel:?}");
            assert!(has_link(&doc, to, rel), "{what}: {:?}", doc.links);
        }
        assert!(!doc.links.iter().any(|l| l.to == "function_exists"));
        let def =
            enclosing_definition("src/Monolog/Logger.php", SRC, 30, 30).expect("in addRecord");
        assert_eq!((def.kind, def.name.as_str()), ("method", "addRecord"));
        let lines = highlight("src/Monolog/Logger.php", SRC).expect("highlighted");
        assert_eq!(lines.len(), SRC.lines().count());
    }
}
