//! Code → lines of classed tokens, for a page to colour: the same
//! tree-sitter grammars the chunker reads, so what the page calls a
//! keyword, a string or a function name is what indexing parsed.
//!
//! Each leaf of the syntax tree gets a class from its node kind and its
//! place (a comment, a string or a number whole; a keyword, an anonymous
//! node spelt as a word; a type; a name a definition gives or a call
//! calls); text between leaves is plain. A fragment (one chunk of a file)
//! parses with error nodes here and there, and its tokens still classify.

use tree_sitter::Node;

use super::Language;

/// Largest text highlighted (bytes); longer text is left plain.
pub const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;

/// A token's class, as the page's stylesheet names it (`tok-kw`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenClass {
    /// Text between tokens, punctuation, plain names.
    Plain,
    /// A keyword (`fn`, `def`, `return`, `if`).
    Kw,
    /// A comment.
    Com,
    /// A string or character literal.
    Str,
    /// A number.
    Num,
    /// A type's name (and built-in types).
    Ty,
    /// A function's name where it is defined or called.
    Fn,
    /// `true`, `false`, `None`, `null`, `self`.
    Lit,
}

/// One token of a line: its class and its text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Token(pub TokenClass, pub String);

/// `text`'s lines as tokens, when `path`'s language has a grammar here and
/// the text is at most [`MAX_HIGHLIGHT_BYTES`]; `None` otherwise (the page
/// shows it plain). One entry per line of `text` (`\n`-separated; a final
/// newline adds no line), each line's tokens joined giving the line back.
pub fn highlight(path: &str, text: &str) -> Option<Vec<Vec<Token>>> {
    let language = Language::of_file(path, text)?;
    if text.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let tree = language.parse(text)?;
    let mut spans = Vec::new();
    classify(tree.root_node(), text.as_bytes(), &mut spans);
    Some(lines(text, &spans))
}

/// Node kinds that are a value of the language itself.
const LITERALS: [&str; 12] = [
    "true",
    "false",
    "none",
    "null",
    "nil",
    "self",
    "this",
    "boolean",
    "null_literal",
    "undefined",
    "boolean_literal",
    "nullptr",
];

/// Node kinds (or parts of them) coloured whole.
fn whole(kind: &str) -> Option<TokenClass> {
    if LITERALS.contains(&kind) {
        Some(TokenClass::Lit)
    } else if kind.contains("comment") {
        Some(TokenClass::Com)
    } else if kind.contains("string") || kind.contains("char_literal") || kind == "character" {
        Some(TokenClass::Str)
    } else if kind.contains("integer")
        || kind.contains("float")
        || kind.contains("number")
        || kind == "numeric_literal"
    {
        Some(TokenClass::Num)
    } else {
        None
    }
}

/// A leaf's class.
fn leaf(node: Node, src: &[u8]) -> TokenClass {
    let kind = node.kind();
    if !node.is_named() {
        let word = !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
        return if word {
            TokenClass::Kw
        } else {
            TokenClass::Plain
        };
    }
    if matches!(
        kind,
        "primitive_type"
            | "predefined_type"
            | "type_identifier"
            | "integral_type"
            | "floating_point_type"
            | "void_type"
            | "sized_type_specifier"
    ) {
        return TokenClass::Ty;
    }
    if kind.ends_with("identifier") {
        let text = node.utf8_text(src).unwrap_or_default();
        // Python's `self` and `cls` are plain names to its grammar.
        if matches!(text, "self" | "cls") {
            return TokenClass::Lit;
        }
        if let Some(parent) = node.parent() {
            let pk = parent.kind();
            // A name in a type position (Python's `width: int`, `-> str`).
            if matches!(pk, "type" | "generic_type" | "type_annotation") {
                return TokenClass::Ty;
            }
            let field = |name: &str| {
                parent
                    .child_by_field_name(name)
                    .is_some_and(|c| c.id() == node.id())
            };
            if (pk.contains("function") || pk.contains("method") || pk.contains("constructor"))
                && field("name")
            {
                return TokenClass::Fn;
            }
            if (pk.contains("class") || pk.contains("struct") || pk.contains("interface"))
                && field("name")
            {
                return TokenClass::Ty;
            }
            if (pk == "call" || pk.contains("call_expression") || pk == "invocation_expression")
                && field("function")
            {
                return TokenClass::Fn;
            }
            // `obj.method(…)`: the attribute or field a call calls.
            if let Some(call) = parent.parent()
                && (call.kind() == "call" || call.kind().contains("call_expression"))
                && call
                    .child_by_field_name("function")
                    .is_some_and(|f| f.id() == parent.id())
                && (field("attribute") || field("field") || field("property"))
            {
                return TokenClass::Fn;
            }
        }
        // A capitalised name reads as a type in every language here.
        if text.starts_with(|c: char| c.is_ascii_uppercase())
            && text.chars().any(|c| c.is_ascii_lowercase())
        {
            return TokenClass::Ty;
        }
    }
    TokenClass::Plain
}

/// Spans `(start, end, class)` of `node`'s coloured leaves, in order.
fn classify(node: Node, src: &[u8], out: &mut Vec<(usize, usize, TokenClass)>) {
    if let Some(class) = whole(node.kind())
        && node.is_named()
    {
        out.push((node.start_byte(), node.end_byte(), class));
        return;
    }
    if node.child_count() == 0 {
        let class = leaf(node, src);
        if class != TokenClass::Plain {
            out.push((node.start_byte(), node.end_byte(), class));
        }
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        classify(child, src, out);
    }
}

/// The text cut into lines of tokens along the spans.
fn lines(text: &str, spans: &[(usize, usize, TokenClass)]) -> Vec<Vec<Token>> {
    let mut pieces: Vec<(TokenClass, &str)> = Vec::new();
    let mut at = 0;
    for &(start, end, class) in spans {
        // Spans are in tree order; a malformed tree never overlaps them,
        // but stay on char boundaries and in order whatever comes.
        if start < at || end > text.len() || start >= end {
            continue;
        }
        let (Some(gap), Some(tok)) = (text.get(at..start), text.get(start..end)) else {
            continue;
        };
        pieces.push((TokenClass::Plain, gap));
        pieces.push((class, tok));
        at = end;
    }
    pieces.push((TokenClass::Plain, text.get(at..).unwrap_or_default()));
    let mut out = vec![Vec::new()];
    for (class, piece) in pieces {
        for (i, part) in piece.split('\n').enumerate() {
            if i > 0 {
                out.push(Vec::new());
            }
            if part.is_empty() {
                continue;
            }
            let line = out.last_mut().expect("one line at least");
            match line.last_mut() {
                Some(Token(c, t)) if *c == class => t.push_str(part),
                _ => line.push(Token(class, part.to_string())),
            }
        }
    }
    if text.ends_with('\n') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(path: &str, src: &str) -> Vec<(TokenClass, String)> {
        highlight(path, src)
            .unwrap()
            .into_iter()
            .flatten()
            .filter(|t| t.0 != TokenClass::Plain)
            .map(|Token(c, t)| (c, t))
            .collect()
    }

    #[test]
    fn python_keywords_strings_comments_names() {
        let src =
            "# cache\ndef render(self, width: int) -> str:\n    return console.print(\"hi\", 42)\n";
        let got = classes("a.py", src);
        let has = |c: TokenClass, t: &str| got.contains(&(c, t.to_string()));
        assert!(has(TokenClass::Com, "# cache"), "{got:?}");
        assert!(has(TokenClass::Kw, "def"), "{got:?}");
        assert!(has(TokenClass::Fn, "render"), "{got:?}");
        assert!(has(TokenClass::Ty, "int"), "{got:?}");
        assert!(has(TokenClass::Kw, "return"), "{got:?}");
        assert!(has(TokenClass::Fn, "print"), "{got:?}");
        assert!(has(TokenClass::Str, "\"hi\""), "{got:?}");
        assert!(has(TokenClass::Num, "42"), "{got:?}");
        assert!(has(TokenClass::Lit, "self"), "{got:?}");
    }

    #[test]
    fn rust_types_and_functions() {
        let got = classes(
            "a.rs",
            "/// Doc.\npub fn admit(g: &Gate) -> bool { g.ok() && true }\n",
        );
        let has = |c: TokenClass, t: &str| got.contains(&(c, t.to_string()));
        assert!(has(TokenClass::Com, "/// Doc."), "{got:?}");
        assert!(has(TokenClass::Kw, "pub"), "{got:?}");
        assert!(has(TokenClass::Kw, "fn"), "{got:?}");
        assert!(has(TokenClass::Fn, "admit"), "{got:?}");
        assert!(has(TokenClass::Ty, "Gate"), "{got:?}");
        assert!(has(TokenClass::Ty, "bool"), "{got:?}");
        assert!(has(TokenClass::Fn, "ok"), "{got:?}");
        assert!(has(TokenClass::Lit, "true"), "{got:?}");
    }

    #[test]
    fn lines_join_back_to_the_text() {
        let src = "s = \"\"\"a\nmulti-line\nstring\"\"\"  # é\n\nx = 1\n";
        let lines = highlight("m.py", src).unwrap();
        assert_eq!(lines.len(), 5);
        let joined: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|t| t.1.as_str()).collect())
            .collect();
        assert_eq!(joined.join("\n") + "\n", src);
        // The string spans three lines, each part a string token.
        assert_eq!(lines[1], vec![Token(TokenClass::Str, "multi-line".into())]);
    }

    #[test]
    fn a_fragment_and_no_grammar() {
        // Half a function still classifies.
        let got = classes(
            "a.py",
            "    if width > 10:\n        return None\n    else:\n",
        );
        assert!(got.contains(&(TokenClass::Kw, "return".into())), "{got:?}");
        assert!(highlight("README.md", "# Title\n").is_none());
        assert!(highlight("a.py", &"x".repeat(MAX_HIGHLIGHT_BYTES + 1)).is_none());
    }
}
