//! Objective-C (`.m`, `.mm`, and a `.h` that declares an `@interface` or
//! `@protocol`): classes (`@interface`, `@implementation`, their
//! categories), protocols and their methods, named by the selector's first
//! part (`- (void)setValue:(id)v forKey:(NSString *)k` defines `setValue`),
//! under their class; and C's functions, structs and typedefs as C names
//! them. A message (`[bridge reload]`) and a call link by the name they
//! send or call; `#import` is an import. All-capitals macros alone on a
//! line (`NS_ASSUME_NONNULL_BEGIN`) are blanked before parsing, as for C++.

use tree_sitter::Node;

use super::{DefName, FIRST_NAMED_CHILD, Spec, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class_interface", "class"),
        ("class_implementation", "class"),
        ("protocol_declaration", "protocol"),
        ("method_declaration", "method"),
        ("method_definition", "method"),
        ("function_definition", "function"),
        ("struct_specifier", "struct"),
        ("enum_specifier", "enum"),
        ("type_definition", "type"),
        ("preproc_function_def", "macro"),
    ],
    containers: &[
        "class_interface",
        "class_implementation",
        "protocol_declaration",
    ],
    // Each method of an `@implementation` sits in its own
    // `implementation_definition`.
    wrappers: &[("implementation_definition", FIRST_NAMED_CHILD)],
    transparent: &[
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "linkage_specification",
    ],
    calls: &[
        ("message_expression", "method"),
        ("call_expression", "function"),
    ],
    imports: &["preproc_include"],
    heritage: &[("protocol_reference_list", None)],
    type_refs: &["type_identifier"],
    builtins: BUILTINS,
    capital_calls: false,
    name: def_name,
    body: body_of,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
};

/// Foundation's and the runtime's own, too common to link on.
const BUILTINS: &[&str] = &[
    "NSObject",
    "NSString",
    "NSArray",
    "NSDictionary",
    "NSMutableArray",
    "NSMutableDictionary",
    "NSNumber",
    "NSInteger",
    "NSUInteger",
    "NSError",
    "NSLog",
    "alloc",
    "init",
    "new",
    "copy",
    "retain",
    "release",
    "autorelease",
    "dealloc",
    "description",
    "class",
    "respondsToSelector",
    "isKindOfClass",
    "objectForKey",
    "setObject",
    "count",
    "length",
    "stringWithFormat",
    "arrayWithObjects",
    "dictionaryWithObjectsAndKeys",
    "dispatch_async",
    "dispatch_get_main_queue",
];

/// A class or protocol by its first identifier, a category as
/// `Class (Category)`'s class; a method by its selector's first part; C's
/// kinds as C names them.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    match node.kind() {
        "class_interface"
        | "class_implementation"
        | "protocol_declaration"
        | "method_declaration"
        | "method_definition" => {
            let mut cursor = node.walk();
            let id = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "identifier")?;
            Some((text_of(id, src).to_string(), None))
        }
        _ => (super::c::SPEC.name)(node, src),
    }
}

/// A class's or protocol's members are its own children; a method's and a
/// function's body is their compound statement; C's kinds as C has them.
fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "class_interface" | "class_implementation" | "protocol_declaration" => Some(node),
        "method_definition" => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .find(|c| c.kind() == "compound_statement")
        }
        _ => (super::c::SPEC.body)(node),
    }
}

/// Whether a header reads as Objective-C: it declares an interface or a
/// protocol, or has an `#import` (C and MATLAB have none).
pub(super) fn looks_like_objc(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("@interface")
            || l.starts_with("@protocol")
            || l.starts_with("@implementation")
            || l.starts_with("#import ")
    })
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{assert_symbols, check_lines, has_link, opts};
    use crate::code::{Language, chunk_code, enclosing_definition};

    const SRC: &str = r#"#import "RCTBridge.h"

NS_ASSUME_NONNULL_BEGIN

@protocol RCTReloadListener <NSObject>
- (void)didReceiveReloadCommand;
@end

@implementation RCTBridge (Reloading)

/** Reloads the bridge: every module is invalidated, the bundle fetched anew. */
- (void)reloadWithReason:(NSString *)reason
{
  [self invalidate];
  RCTTriggerReloadCommandListeners(reason);
}

- (NSURL *)bundleURL
{
  return [self.delegate sourceURLForBridge:self];
}

@end

void RCTTriggerReloadCommandListeners(NSString *reason)
{
  NSLog(@"reload: %@", reason);
}

NS_ASSUME_NONNULL_END
"#;

    #[test]
    fn objc_methods_belong_to_their_class() {
        assert_eq!(
            Language::of_path("React/Base/RCTBridge.m"),
            Some(Language::ObjC)
        );
        assert_eq!(
            Language::of_path("React/Base/RCTBridge.mm"),
            Some(Language::ObjC)
        );
        assert_eq!(
            Language::of_file(
                "React/Base/RCTBridge.h",
                "@interface RCTBridge : NSObject\n@end\n"
            ),
            Some(Language::ObjC)
        );
        assert_eq!(
            Language::of_file("lib/lz4.h", "int LZ4_compress(const char *src);\n"),
            Some(Language::C)
        );
        // A `.m` that is not Objective-C (MATLAB, Octave) is line windows.
        assert_eq!(
            Language::of_file("signal/fft.m", "function y = f(x)\n  y = x;\nend\n"),
            None
        );

        let doc = chunk_code("React/Base/RCTBridge+Reloading.m", SRC, &opts());
        assert_eq!(doc.language, "objc");
        check_lines(SRC, &doc);
        assert_symbols(
            &doc,
            &[
                ("RCTReloadListener", "protocol"),
                ("RCTBridge", "class"),
                ("reloadWithReason", "method"),
                ("bundleURL", "method"),
                ("RCTTriggerReloadCommandListeners", "function"),
            ],
        );
        let crumbs: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        // A class this small is one chunk, which defines its methods.
        assert!(
            crumbs.contains(&"React/Base/RCTBridge+Reloading.m > RCTBridge".to_string()),
            "{crumbs:?}"
        );
        assert!(
            has_link(&doc, "invalidate", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "RCTTriggerReloadCommandListeners", Relation::Calls),
            "{:?}",
            doc.links
        );
        let def = enclosing_definition("React/Base/RCTBridge+Reloading.m", SRC, 15, 15)
            .expect("in reloadWithReason");
        assert_eq!(def.name, "reloadWithReason");
    }
}
