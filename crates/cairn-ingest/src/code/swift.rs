//! Swift (`.swift`): classes, structs, enums, actors and extensions (one
//! node kind in the grammar), protocols and their requirements, functions,
//! initializers and type aliases. Calls link by the called name; the types
//! after `:` are supertype links.

use tree_sitter::Node;

use super::{DefName, FIRST_NAMED_CHILD, Spec, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class_declaration", "class"),
        ("protocol_declaration", "interface"),
        ("function_declaration", "function"),
        ("protocol_function_declaration", "method"),
        ("init_declaration", "constructor"),
        ("typealias_declaration", "type"),
    ],
    containers: &["class_declaration", "protocol_declaration"],
    wrappers: &[],
    transparent: &[],
    calls: &[("call_expression", FIRST_NAMED_CHILD)],
    imports: &["import_declaration"],
    heritage: &[("inheritance_specifier", None)],
    type_refs: &["type_identifier"],
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

/// Swift's own: the standard library's types and functions.
const BUILTINS: &[&str] = &[
    "Any",
    "AnyObject",
    "Void",
    "Int",
    "UInt",
    "Int32",
    "Int64",
    "Double",
    "Float",
    "Bool",
    "String",
    "Character",
    "Array",
    "Dictionary",
    "Set",
    "Optional",
    "Error",
    "NSObject",
    "print",
    "fatalError",
    "precondition",
    "assert",
    "min",
    "max",
    "Self",
];

/// An initializer is `init`; an extension is named by the type it extends
/// (`extension Array where …` → `Array`); the rest by `name`.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    if node.kind() == "init_declaration" {
        return Some(("init".to_string(), None));
    }
    let name = node.child_by_field_name("name")?;
    let text = text_of(name, src);
    let base = text.split('<').next().unwrap_or(text).trim();
    Some((base.to_string(), None))
}

/// A type's body; a function's statements.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    let body = node.child_by_field_name("body")?;
    if body.kind() == "function_body" {
        let mut cursor = body.walk();
        let statements = body
            .named_children(&mut cursor)
            .find(|c| c.kind() == "statements");
        return Some(statements.unwrap_or(body));
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{assert_crumbs, assert_symbols, check_lines, has_link, opts};
    use crate::code::{Language, chunk_code};
    use crate::markdown::ChunkOptions;

    const SRC: &str = r#"import Foundation
import ExpoModulesCore

/// The context every module of an app shares.
public final class AppContext: NSObject, ModuleRegistry {
  let name: String

  init(name: String) {
    self.name = name
  }

  /// Calls a module's function by name, with its arguments.
  public func call(_ method: String, arguments: [Any]) -> Int {
    return lookup(method).invoke(arguments)
  }
}

struct Point {
  var x: Int
  func length() -> Int { abs(x) }
}

protocol ModuleRegistry {
  func call(_ method: String, arguments: [Any]) -> Int
}

extension AppContext {
  func reload() { restart(name) }
}

typealias Callback = (Int) -> Void

func lookup(_ name: String) -> Method { Method(name) }
"#;

    #[test]
    fn swift_types_protocols_and_extensions() {
        assert_eq!(
            Language::of_path("ios/AppContext.swift"),
            Some(Language::Swift)
        );
        let small = ChunkOptions {
            max_chars: 300,
            ..opts()
        };
        let doc = chunk_code("ios/AppContext.swift", SRC, &small);
        assert_eq!(doc.language, "swift");
        check_lines(SRC, &doc);
        let c: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        assert!(
            c.iter()
                .any(|x| x.starts_with("ios/AppContext.swift > AppContext > call")),
            "{c:?}"
        );
        assert_crumbs(
            &doc,
            &[
                "ios/AppContext.swift > Point",
                "ios/AppContext.swift > ModuleRegistry",
                "ios/AppContext.swift > Callback",
                "ios/AppContext.swift > lookup",
            ],
        );
        assert_symbols(
            &doc,
            &[
                ("AppContext", "class"),
                ("Point", "class"),
                ("ModuleRegistry", "interface"),
                ("lookup", "function"),
                ("reload", "function"),
            ],
        );
        assert!(has_link(&doc, "lookup", Relation::Calls), "{:?}", doc.links);
        assert!(
            has_link(&doc, "restart", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "ModuleRegistry", Relation::Implements),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "Foundation", Relation::Imports),
            "{:?}",
            doc.links
        );
    }
}
