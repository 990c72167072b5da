//! Kotlin (`.kt`, `.kts`): classes, interfaces, enum classes, objects,
//! functions, extension functions and type aliases; a `companion object`'s
//! members belong to the class around it. Calls link by the called name,
//! `: Base(), Iface` is a supertype link.

use tree_sitter::Node;

use super::{DefName, FIRST_NAMED_CHILD, Spec, field_name, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class_declaration", "class"),
        ("object_declaration", "class"),
        ("function_declaration", "function"),
        ("type_alias", "type"),
    ],
    containers: &["class_declaration", "object_declaration"],
    wrappers: &[],
    transparent: &["companion_object"],
    calls: &[("call_expression", FIRST_NAMED_CHILD)],
    imports: &["import"],
    heritage: &[("delegation_specifiers", None)],
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

/// Kotlin's own: the standard library's types and functions every file uses.
const BUILTINS: &[&str] = &[
    "Any",
    "Unit",
    "Nothing",
    "Int",
    "Long",
    "Short",
    "Byte",
    "Float",
    "Double",
    "Boolean",
    "Char",
    "String",
    "Array",
    "List",
    "MutableList",
    "Map",
    "MutableMap",
    "Set",
    "MutableSet",
    "listOf",
    "mutableListOf",
    "mapOf",
    "mutableMapOf",
    "setOf",
    "mutableSetOf",
    "arrayOf",
    "emptyList",
    "emptyMap",
    "println",
    "require",
    "requireNotNull",
    "check",
    "checkNotNull",
    "error",
    "let",
    "also",
    "apply",
    "run",
    "with",
    "takeIf",
    "lazy",
    "repeat",
    "to",
    "Exception",
    "IllegalArgumentException",
    "IllegalStateException",
];

/// A type alias is named by its `type` field; the rest by `name`.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    if node.kind() == "type_alias" {
        let name = node.child_by_field_name("type")?;
        return Some((text_of(name, src).to_string(), None));
    }
    field_name(node, src)
}

/// A class's or object's `class_body`, a function's block (its statements).
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    let body = node
        .named_children(&mut cursor)
        .find(|c| matches!(c.kind(), "class_body" | "enum_class_body" | "function_body"))?;
    if body.kind() == "function_body" {
        let mut cursor = body.walk();
        let block = body
            .named_children(&mut cursor)
            .find(|c| c.kind() == "block");
        return Some(block.unwrap_or(body));
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{assert_crumbs, assert_symbols, check_lines, has_link, opts};
    use crate::code::{Language, chunk_code, enclosing_definition};
    use crate::markdown::ChunkOptions;

    const SRC: &str = r#"package expo.modules.kotlin

import android.os.Bundle

/** Holds one module and calls its functions by name. */
class ModuleHolder(val module: Module) : Base(), Callable {
  val name get() = module.name

  /** Calls one of the module's functions with the arguments given. */
  fun call(methodName: String, args: Array<Any>): Any {
    val definition = module.definition()
    return definition.functions[methodName]!!.invoke(args)
  }

  companion object {
    /** A holder for a module made from its class. */
    fun create(type: Class<*>): ModuleHolder {
      return ModuleHolder(instantiate(type))
    }
  }
}

interface Callable {
  fun call(methodName: String, args: Array<Any>): Any
}

object Registry {
  fun register(holder: ModuleHolder) {
    holders.add(holder)
  }
}

typealias Promise = (Any?) -> Unit

fun ModuleHolder.describe(): String = "module $name"
"#;

    #[test]
    fn kotlin_classes_objects_and_companions() {
        for path in ["a/ModuleHolder.kt", "build.gradle.kts"] {
            assert_eq!(Language::of_path(path), Some(Language::Kotlin), "{path}");
        }
        let small = ChunkOptions {
            max_chars: 300,
            ..opts()
        };
        let doc = chunk_code("kotlin/ModuleHolder.kt", SRC, &small);
        assert_eq!(doc.language, "kotlin");
        check_lines(SRC, &doc);
        let c: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        for want in [
            "kotlin/ModuleHolder.kt > ModuleHolder > call",
            "kotlin/ModuleHolder.kt > ModuleHolder > create",
        ] {
            assert!(c.iter().any(|x| x.starts_with(want)), "{want} not in {c:?}");
        }
        assert_crumbs(
            &doc,
            &[
                "kotlin/ModuleHolder.kt > Callable",
                "kotlin/ModuleHolder.kt > Registry",
                "kotlin/ModuleHolder.kt > Promise",
                "kotlin/ModuleHolder.kt > describe",
            ],
        );
        assert_symbols(
            &doc,
            &[
                ("ModuleHolder", "class"),
                ("Registry", "class"),
                ("create", "function"),
                ("Promise", "type"),
            ],
        );
        assert!(
            has_link(&doc, "instantiate", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "definition", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "Callable", Relation::Implements),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "Bundle", Relation::Imports),
            "{:?}",
            doc.links
        );
        let def = enclosing_definition("kotlin/ModuleHolder.kt", SRC, 18, 18).expect("in create");
        assert_eq!(def.name, "create");
    }
}
