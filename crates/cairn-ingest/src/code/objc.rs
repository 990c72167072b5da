//! Objective-C (`.m`, `.mm`, and a `.h` that declares an `@interface` or
//! `@protocol`): classes (`@interface`, `@implementation`, their
//! categories), protocols and their methods, named by the selector's first
//! part (`- (void)setValue:(id)v forKey:(NSString *)k` defines `setValue`),
//! under their class; and C's functions, structs and typedefs as C names
//! them. A message (`[bridge reload]`) and a call link by the name they
//! send or call; `#import` is an import. All-capitals macros alone on a
//! line (`NS_ASSUME_NONNULL_BEGIN`) are blanked before parsing, as for C++,
//! and a macro call that starts a line is read as what it stands for
//! ([`without_macro_calls`]).

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
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
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

/// The text the grammar reads after [`super::cpp::without_class_macros`]:
/// `text` with each call of an all-capitals macro that starts a line and
/// ends without `;` (React Native's `RCT_EXPORT_VIEW_PROPERTY(color,
/// UIColor)`, `RCT_ENUM_CONVERTER(…)` over eight lines) rewritten, or `None`
/// when there is none. Read as written, the grammar loses the class around
/// such a call: an `@implementation` after a multi-line one was no class at
/// all, its methods no definitions. A call followed by a block
/// (`RCT_CUSTOM_VIEW_PROPERTY(size, …) { … }`, `RCT_EXPORT_METHOD(reload:…)
/// { … }`) becomes a method named by its first argument (`-(v)   size   {`);
/// another one with an argument a declaration of it (`int   color   ;`); one
/// without arguments (`RCT_EXPORT_MODULE()`) blank. Only spaces and those
/// few characters are written, over the call's own bytes, so offsets and
/// lines stay the original's (names are read from the original text).
pub(super) fn without_macro_calls(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut line_start = 0;
    while line_start < bytes.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map_or(bytes.len(), |i| line_start + i + 1);
        let indent = text[line_start..line_end].len()
            - text[line_start..line_end]
                .trim_start_matches([' ', '\t'])
                .len();
        let call = macro_call_at(text, line_start + indent)
            .filter(|&(_, close)| indent == 0 || statement_call(text, close));
        if let Some((open, close)) = call {
            let o = out.get_or_insert_with(|| bytes.to_vec());
            if indent == 0 {
                rewrite_call(text, o, line_start, open, close);
            } else {
                rewrite_statement(text, o, line_start + indent, open, close);
            }
            // The call's own lines are done.
            line_start = text[close..]
                .find('\n')
                .map_or(bytes.len(), |i| close + i + 1);
            continue;
        }
        line_start = line_end;
    }
    // Only ASCII bytes replaced ASCII bytes (spaces over the call, which
    // held no newline that was touched): still UTF-8, but checked anyway.
    out.and_then(|o| String::from_utf8(o).ok())
}

/// The longest stretch a macro call's arguments are read over.
const MAX_MACRO_CALL: usize = 4_000;

/// A macro call starting at `at` (a line's start): the offsets of its `(`
/// and of the byte after its `)`, when its name is all capitals with an
/// underscore (three characters at least), its parentheses balance within
/// [`MAX_MACRO_CALL`] bytes (strings skipped), and no `;` follows it on its
/// line (`FOO(x);` is a statement the grammar reads).
fn macro_call_at(text: &str, at: usize) -> Option<(usize, usize)> {
    let rest = &text[at..];
    let name_len = rest
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..name_len];
    let is_macro = name.len() >= 3
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.contains('_')
        && rest[name_len..].starts_with('(');
    if !is_macro {
        return None;
    }
    let open = at + name_len;
    let bytes = text.as_bytes();
    let limit = (open + MAX_MACRO_CALL).min(bytes.len());
    let (mut depth, mut i, mut quote) = (0usize, open, None::<u8>);
    let close = loop {
        if i >= limit {
            return None;
        }
        let b = bytes[i];
        match quote {
            Some(_) if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\'' => quote = Some(b),
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break i + 1;
                    }
                }
                _ => {}
            },
        }
        i += 1;
    };
    let after = text[close..].trim_start_matches([' ', '\t']);
    (!after.starts_with(';')).then_some((open, close))
}

/// Whether an indented macro call ending at `close` is a statement of its
/// own (`RCT_CASE(_C_SEL, SEL)` in a `switch`): nothing but a comment after
/// it on its line, and the next line starts another statement, not the
/// rest of an expression (`+ 1`, `.x`, `;`) nor a block.
fn statement_call(text: &str, close: usize) -> bool {
    let line_rest = text[close..].split('\n').next().unwrap_or("").trim();
    if !(line_rest.is_empty() || line_rest.starts_with("//")) {
        return false;
    }
    text[close..]
        .trim_start()
        .chars()
        .next()
        .is_none_or(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '#' | '}' | '/' | '@' | '['))
}

/// Writes over an indented call `text[start..close]`: an expression
/// statement of its first argument (`_C_SEL   ;`), blank without one.
fn rewrite_statement(text: &str, out: &mut [u8], start: usize, open: usize, close: usize) {
    blank(text, out, start, close);
    if let Some((at, arg)) = first_argument(text, open, close) {
        out[at..at + arg.len()].copy_from_slice(arg.as_bytes());
        out[close - 1] = b';';
    }
}

/// Spaces over `text[start..end]` in `out`, its newlines kept.
fn blank(text: &str, out: &mut [u8], start: usize, end: usize) {
    for (i, b) in out.iter_mut().enumerate().take(end).skip(start) {
        if text.as_bytes()[i] != b'\n' {
            *b = b' ';
        }
    }
}

/// The first argument of a call whose parentheses are at `open` and
/// `close - 1`, when it is an identifier: its offset and text.
fn first_argument(text: &str, open: usize, close: usize) -> Option<(usize, &str)> {
    let args = &text[open + 1..close - 1];
    let lead = args.len() - args.trim_start().len();
    let arg_len = args[lead..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(args.len() - lead);
    let arg = &args[lead..lead + arg_len];
    (!arg.is_empty() && !arg.starts_with(|c: char| c.is_ascii_digit()))
        .then_some((open + 1 + lead, arg))
}

/// Writes over the call `text[start..close]` in `out` (see
/// [`without_macro_calls`]).
fn rewrite_call(text: &str, out: &mut [u8], start: usize, open: usize, close: usize) {
    blank(text, out, start, close);
    let Some((at, arg)) = first_argument(text, open, close) else {
        return;
    };
    out[at..at + arg.len()].copy_from_slice(arg.as_bytes());
    let block = text[close..].trim_start().starts_with('{');
    // The name is three characters at least, and `(` follows it: four
    // bytes before the argument.
    if block {
        out[start..start + 4].copy_from_slice(b"-(v)");
    } else {
        out[start..start + 3].copy_from_slice(b"int");
        out[close - 1] = b';';
    }
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
        // A class of two methods is cut into them, each under its class.
        for crumb in [
            "React/Base/RCTBridge+Reloading.m > RCTBridge > reloadWithReason",
            "React/Base/RCTBridge+Reloading.m > RCTBridge > bundleURL",
        ] {
            assert!(crumbs.contains(&crumb.to_string()), "{crumbs:?}");
        }
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

    const MACROS: &str = r#"#import "RCTActivityIndicatorViewManager.h"

@implementation RCTConvert (UIActivityIndicatorView)

RCT_ENUM_CONVERTER(
    UIActivityIndicatorViewStyle,
    (@{
      @"large" : @(UIActivityIndicatorViewStyleLarge),
      @"small" : @(UIActivityIndicatorViewStyleMedium),
    }),
    UIActivityIndicatorViewStyleLarge,
    integerValue)

@end

@implementation RCTActivityIndicatorViewManager

RCT_EXPORT_MODULE()

- (UIView *)view
{
  return [RCTActivityIndicatorView new];
}

RCT_EXPORT_VIEW_PROPERTY(color, UIColor)
RCT_CUSTOM_VIEW_PROPERTY(animating, BOOL, UIActivityIndicatorView)
{
  BOOL animating = json ? [RCTConvert BOOL:json] : [defaultView isAnimating];
  if (animating != [view isAnimating]) {
    [view startAnimating];
  }
}

@end
"#;

    #[test]
    fn macro_calls_that_start_a_line_leave_the_class_around_them() {
        let doc = chunk_code("RCTActivityIndicatorViewManager.m", MACROS, &opts());
        check_lines(MACROS, &doc);
        assert_symbols(
            &doc,
            &[
                ("RCTConvert", "class"),
                ("RCTActivityIndicatorViewManager", "class"),
                ("view", "method"),
                ("animating", "method"),
            ],
        );
        // A view property's declaration is no definition.
        assert!(!doc.symbols.iter().any(|(n, _, _)| n == "color"));
        // The text is the original's: the rewrite is only what the grammar reads.
        assert!(
            doc.chunks
                .iter()
                .any(|c| c.text.contains("RCT_EXPORT_VIEW_PROPERTY(color, UIColor)"))
        );
        assert!(
            has_link(&doc, "startAnimating", Relation::Calls),
            "{:?}",
            doc.links
        );
    }

    #[test]
    fn a_macro_call_is_rewritten_over_its_own_bytes() {
        let src = "RCT_EXPORT_MODULE()\nRCT_EXPORT_VIEW_PROPERTY(color, UIColor)\nRCT_EXPORT_METHOD(reload:(BOOL)hard)\n{\n}\nFOO_BAR(x);\nfoo_bar(x)\n";
        let out = super::without_macro_calls(src).unwrap();
        assert_eq!(out.len(), src.len());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0].trim(), "");
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["int", "color", ";"]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            ["-(v)", "reload"]
        );
        // A call that is already a statement, and a lower-case name, stay.
        assert_eq!(lines[5], "FOO_BAR(x);");
        assert_eq!(lines[6], "foo_bar(x)");
        // Indented, a call alone on its line is a statement of its first
        // argument; one that continues an expression, or opens a block, stays.
        let body = "  switch (t) {\n    RCT_CASE(_C_SEL, SEL)\n    RCT_CASE(_C_CHARPTR, const char *)\n  }\n  x = 1 +\n    FOO_BAR(y)\n    + 2;\n  FOO_LOCK(m)\n  {\n  }\n";
        let out = super::without_macro_calls(body).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["_C_SEL", ";"]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            ["_C_CHARPTR", ";"]
        );
        assert_eq!(lines[5], "    FOO_BAR(y)");
        assert_eq!(lines[7], "  FOO_LOCK(m)");
        // Unbalanced: left alone.
        assert_eq!(super::without_macro_calls("RCT_FOO(a, (b\n"), None);
    }
}
