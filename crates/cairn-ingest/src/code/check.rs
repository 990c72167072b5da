//! The parsing check: how much of a folder of real code the chunker names.
//!
//! For each file it finds the definitions the syntax tree holds — by its
//! own list of node kinds per language ([`probe`]), wider than the
//! chunker's [`Spec::defs`](super::Spec), so that what the chunker misses
//! shows — and looks at the chunks [`chunk_code`] gives: a definition is
//! *own* when a chunk holding its first line has a breadcrumb whose last
//! element names it (`Type > method(…)` for members), *covered* when the
//! breadcrumb of a chunk holding its first line names it or a definition
//! around it (the one method of a small class kept whole), else *missed*. A file *fell back*
//! when it has definitions but no chunk names any. Definitions inside a
//! function body (closures, local helpers) are not counted: they belong to
//! their function's chunk.
//!
//! Run it on folders of code (separated by `:`), one table per run:
//!
//! ```text
//! CAIRN_PARSE_CHECK=/tmp/pc/go:/tmp/pc/ts cargo test -p cairn-ingest --lib \
//!     parse_check -- --ignored --nocapture
//! ```

use std::collections::BTreeMap;

use tree_sitter::Node;

use super::{Language, chunk_code, text_of};
use crate::markdown::ChunkOptions;

/// A definition the syntax tree holds, and what the chunker made of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// The node kind (`function_item`, `pair`, `type_spec`, …).
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its first line (1-based), without the comments above it.
    pub line: u32,
    /// A chunk holding that line is named by it, merging of small chunks off.
    pub own: bool,
    /// The same with the index's options (small chunks merged).
    pub own_indexed: bool,
    /// A chunk holding that line is named by it or a definition around it.
    pub covered: bool,
}

/// One file's definitions and chunks.
#[derive(Clone, Debug)]
pub(crate) struct FileCheck {
    /// Language name, as [`Language::name`] gives it.
    pub language: &'static str,
    /// The definitions found.
    pub found: Vec<Found>,
    /// It has definitions but no chunk names any (line windows).
    pub fell_back: bool,
    /// Its syntax tree has errors.
    pub syntax_error: bool,
    /// Lines under its syntax tree's error nodes (on the tree the chunker
    /// reads: for C, a variant's when it wins).
    pub error_lines: usize,
}

/// A definition kind of one language, for the check: the node kind and
/// whether a node of it defines something (`const x = 1` does not).
fn probe(lang: Language, node: Node<'_>, src: &str) -> Option<String> {
    let kind = node.kind();
    let name_field = || {
        node.child_by_field_name("name")
            .map(|n| text_of(n, src).to_string())
    };
    match lang {
        Language::Rust => match kind {
            "function_item"
            | "function_signature_item"
            | "struct_item"
            | "enum_item"
            | "union_item"
            | "trait_item"
            | "type_item"
            | "macro_definition" => name_field(),
            // `mod x;` declares, `mod x { … }` defines.
            "mod_item" => node.child_by_field_name("body").and_then(|_| name_field()),
            "impl_item" => node
                .child_by_field_name("type")
                .map(|t| super::rust::base_name(text_of(t, src))),
            _ => None,
        },
        Language::Python => match kind {
            "function_definition" | "class_definition" => name_field(),
            _ => None,
        },
        Language::TypeScript | Language::Tsx | Language::JavaScript => match kind {
            "function_declaration"
            | "generator_function_declaration"
            | "class_declaration"
            | "abstract_class_declaration"
            | "method_definition"
            | "abstract_method_signature"
            | "interface_declaration"
            | "type_alias_declaration"
            | "enum_declaration" => name_field(),
            // `const f = () => {}`, `exports.f = function () {}`,
            // `{ f: function () {} }`, `{ f() {} }` is a method_definition.
            "variable_declarator" => {
                let value = node.child_by_field_name("value")?;
                is_js_function(value.kind()).then(name_field)?
            }
            "assignment_expression" => {
                let value = node.child_by_field_name("right")?;
                if !is_js_function(value.kind()) {
                    return None;
                }
                let left = node.child_by_field_name("left")?;
                let target = left.child_by_field_name("property").unwrap_or(left);
                // `module.exports = function query() {…}` is `query`.
                match value.child_by_field_name("name") {
                    Some(own) if text_of(left, src) == "module.exports" => {
                        Some(text_of(own, src).to_string())
                    }
                    _ => Some(text_of(target, src).to_string()),
                }
            }
            "pair" => {
                let value = node.child_by_field_name("value")?;
                if !is_js_function(value.kind()) {
                    return None;
                }
                let key = node.child_by_field_name("key")?;
                Some(text_of(key, src).trim_matches(['"', '\'']).to_string())
            }
            _ => None,
        },
        Language::Go => match kind {
            "function_declaration" | "method_declaration" | "type_spec" | "type_alias" => {
                name_field()
            }
            _ => None,
        },
        Language::Java => match kind {
            "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "annotation_type_declaration"
            | "method_declaration"
            | "constructor_declaration" => name_field(),
            _ => None,
        },
        Language::CSharp => match kind {
            "class_declaration"
            | "struct_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "method_declaration"
            | "constructor_declaration"
            | "property_declaration" => name_field(),
            _ => None,
        },
        Language::C => match kind {
            "function_definition" | "type_definition" => {
                super::c::declarator_name(node.child_by_field_name("declarator")?, src)
            }
            // A prototype (`int f(void);`), not a variable.
            "declaration" => super::c::prototype_name(node, src),
            // `struct s { … }`, not `struct s *p`.
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                node.child_by_field_name("body").and_then(|_| name_field())
            }
            "preproc_function_def" => name_field(),
            _ => None,
        },
        Language::Php => match kind {
            "class_declaration"
            | "interface_declaration"
            | "trait_declaration"
            | "enum_declaration"
            | "function_definition"
            | "method_declaration" => name_field(),
            _ => None,
        },
        Language::Ruby => match kind {
            "class" | "module" | "method" | "singleton_method" => {
                (super::ruby::SPEC.name)(node, src).map(|(name, _)| name)
            }
            _ => None,
        },
        // The languages added with issue 63: their definition kinds and
        // naming as the chunker has them, so the check measures how they
        // are chunked (own chunk, breadcrumb), not which kinds are missing.
        Language::Shell
        | Language::Lua
        | Language::Kotlin
        | Language::Swift
        | Language::Zig
        | Language::Perl
        | Language::Sql
        | Language::Hcl
        | Language::ObjC
        | Language::OCaml
        | Language::OCamlInterface
        | Language::Scala
        | Language::Elixir
        | Language::Haskell
        | Language::Dart
        | Language::R
        | Language::Julia => {
            // A node of a listed kind that defines nothing after all (an
            // Elixir `import`, a Haskell signature above its equations) is
            // no definition here either.
            let spec = lang.spec();
            spec.def_kind(node, src)
                .and_then(|_| (spec.name)(node, src).map(|(name, _)| name))
        }
        // Through the chunker's own naming (as C's arm goes through C's
        // declarator walk): functions and methods however declared, types
        // with a body, aliases, macros.
        Language::Cpp => match kind {
            "function_definition"
            | "declaration"
            | "field_declaration"
            | "class_specifier"
            | "struct_specifier"
            | "union_specifier"
            | "enum_specifier"
            | "type_definition"
            | "alias_declaration"
            | "preproc_function_def" => (super::cpp::SPEC.name)(node, src).map(|(name, _)| name),
            _ => None,
        },
    }
}

fn is_js_function(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function" | "function_expression" | "function" | "generator_function" | "class"
    )
}

/// Node kinds whose body is code run in a call: definitions under them
/// are local (closures, helpers) and not counted.
fn is_function_like(kind: &str) -> bool {
    matches!(
        kind,
        "method"
            | "singleton_method"
            | "function_item"
            | "closure_expression"
            | "function_definition"
            | "lambda"
            | "function_declaration"
            | "generator_function_declaration"
            | "function_expression"
            | "function"
            | "generator_function"
            | "arrow_function"
            | "method_definition"
            | "method_declaration"
            | "constructor_declaration"
            | "func_literal"
            | "lambda_expression"
            | "local_function_statement"
            | "accessor_declaration"
            | "init_declaration"
            | "deinit_declaration"
            | "test_declaration"
    )
}

/// Whether the last element of a breadcrumb names `name`: equal, or a
/// signature that starts with it (`validate(token: &str) -> bool`).
fn names(crumb: &str, name: &str) -> bool {
    crumb == name
        || crumb
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with(|c: char| !(c.is_alphanumeric() || c == '_')))
}

/// The definitions of one code file and what [`chunk_code`] made of them;
/// `None` for a language without a grammar here.
pub(crate) fn check_file(path: &str, text: &str) -> Option<FileCheck> {
    let lang = Language::of_file(path, text)?;
    let tree = lang.parse(text)?;
    // (kind, name, first row, names of the definitions around it)
    let mut defs: Vec<(String, String, usize, Vec<String>)> = Vec::new();
    walk(
        lang,
        tree.root_node(),
        text,
        &mut Vec::new(),
        false,
        &mut defs,
    );
    let unmerged = chunk_code(
        path,
        text,
        &ChunkOptions {
            min_chars: 0,
            ..ChunkOptions::default()
        },
    );
    let indexed = chunk_code(path, text, &ChunkOptions::default());
    let holding = |doc: &super::CodeDoc, line: u32| -> Vec<Vec<String>> {
        doc.chunks
            .iter()
            .filter(|c| c.start_line <= line && line <= c.end_line)
            .map(|c| c.heading_path.clone())
            .collect()
    };
    let found: Vec<Found> = defs
        .into_iter()
        .map(|(kind, name, row, around)| {
            let line = u32::try_from(row + 1).unwrap_or(u32::MAX);
            let own_in = |doc: &super::CodeDoc| {
                holding(doc, line)
                    .iter()
                    .any(|h| h.len() > 1 && h.last().is_some_and(|last| names(last, &name)))
            };
            let covered = holding(&unmerged, line).iter().any(|h| {
                h.iter()
                    .skip(1)
                    .any(|c| names(c, &name) || around.iter().any(|a| names(c, a)))
            });
            Found {
                kind,
                own: own_in(&unmerged),
                own_indexed: own_in(&indexed),
                covered,
                name,
                line,
            }
        })
        .collect();
    let fell_back = !found.is_empty() && unmerged.chunks.iter().all(|c| c.heading_path.len() < 2);
    Some(FileCheck {
        language: lang.name(),
        found,
        fell_back,
        syntax_error: tree.root_node().has_error(),
        error_lines: super::error_lines(tree.root_node()),
    })
}

fn walk(
    lang: Language,
    node: Node<'_>,
    src: &str,
    around: &mut Vec<String>,
    in_function: bool,
    out: &mut Vec<(String, String, usize, Vec<String>)>,
) {
    let name = if in_function {
        None
    } else {
        probe(lang, node, src)
    };
    if let Some(n) = &name {
        out.push((
            node.kind().to_string(),
            n.clone(),
            node.start_position().row,
            around.clone(),
        ));
        around.push(n.clone());
    }
    let in_function = in_function || is_function_like(node.kind());
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    for child in children {
        walk(lang, child, src, around, in_function, out);
    }
    if name.is_some() {
        around.pop();
    }
}

/// Totals of one language.
#[derive(Default)]
struct Totals {
    files: usize,
    defs: usize,
    own: usize,
    own_indexed: usize,
    covered: usize,
    fell_back: usize,
    syntax_error: usize,
    error_lines: usize,
    lines: usize,
    /// Missed definitions by node kind: count and a few examples.
    missed: BTreeMap<String, (usize, Vec<String>)>,
}

/// The table of [`check_file`] over every code file under some folders.
pub(crate) fn report(roots: &[std::path::PathBuf]) -> String {
    let mut by_lang: BTreeMap<&'static str, Totals> = BTreeMap::new();
    let opts = crate::ScanOptions {
        extensions: super::CODE_EXTENSIONS
            .iter()
            .map(|e| e.to_string())
            .collect(),
        ignore_rules: false,
        ..crate::ScanOptions::default()
    };
    for root in roots {
        let (files, _) = crate::scan(root, &opts);
        for f in files {
            let rel = f
                .path
                .strip_prefix(root)
                .unwrap_or(&f.path)
                .to_string_lossy()
                .to_string();
            let Ok(text) = crate::read_text(&f.path) else {
                continue;
            };
            if super::generated_reason(&rel, &text).is_some()
                || rel.ends_with(".d.ts")
                || rel.ends_with(".d.mts")
            {
                continue;
            }
            let Some(check) = check_file(&rel, &text) else {
                continue;
            };
            let t = by_lang.entry(check.language).or_default();
            t.files += 1;
            t.fell_back += usize::from(check.fell_back);
            t.syntax_error += usize::from(check.syntax_error);
            t.error_lines += check.error_lines;
            t.lines += text.lines().count();
            for d in &check.found {
                t.defs += 1;
                t.own += usize::from(d.own);
                t.own_indexed += usize::from(d.own_indexed);
                t.covered += usize::from(d.covered);
                if !d.covered {
                    let e = t.missed.entry(d.kind.clone()).or_default();
                    e.0 += 1;
                    if e.1.len() < 3 {
                        e.1.push(format!("{rel}:{} {}", d.line, d.name));
                    }
                }
            }
        }
    }
    let pct = |a: usize, b: usize| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", 100.0 * a as f64 / b as f64)
        }
    };
    let mut out = String::from(
        "| language | files | definitions | own chunk | own chunk (index) | covered | fell back | syntax errors | lines in error nodes |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for (lang, t) in &by_lang {
        out.push_str(&format!(
            "| {lang} | {} | {} | {} | {} | {} | {} ({}) | {} | {} of {} ({}) |\n",
            t.files,
            t.defs,
            pct(t.own, t.defs),
            pct(t.own_indexed, t.defs),
            pct(t.covered, t.defs),
            t.fell_back,
            pct(t.fell_back, t.files),
            t.syntax_error,
            t.error_lines,
            t.lines,
            pct(t.error_lines, t.lines),
        ));
    }
    for (lang, t) in &by_lang {
        for (kind, (n, examples)) in &t.missed {
            out.push_str(&format!(
                "missed {lang} {kind}: {n} (e.g. {})\n",
                examples.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table for the folders in `CAIRN_PARSE_CHECK` (`:`-separated);
    /// without it (the full tier in CI), this workspace's own crates.
    #[test]
    #[ignore = "reads folders of real code named by CAIRN_PARSE_CHECK"]
    fn parse_check() {
        let mut roots: Vec<std::path::PathBuf> = std::env::var("CAIRN_PARSE_CHECK")
            .unwrap_or_default()
            .split(':')
            .filter(|s| !s.is_empty())
            .map(std::path::PathBuf::from)
            .collect();
        let own = roots.is_empty();
        if own {
            roots.push(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
        }
        let table = report(&roots);
        println!("{table}");
        if own {
            assert!(
                table.contains("rust"),
                "no Rust row for this workspace:\n{table}"
            );
        }
    }

    #[test]
    fn the_check_tells_own_covered_and_missed_definitions() {
        let src = "pub struct Gate {\n    limit: usize,\n}\n\nimpl Gate {\n    pub fn admit(&self, n: usize) -> bool {\n        let check = |m: usize| m < self.limit;\n        fn local() {}\n        check(n)\n    }\n}\n";
        let check = check_file("src/gate.rs", src).expect("rust");
        assert!(!check.fell_back && !check.syntax_error && check.error_lines == 0);
        let got: Vec<(&str, bool, bool)> = check
            .found
            .iter()
            .map(|d| (d.name.as_str(), d.own, d.covered))
            .collect();
        // The local `fn local` is not counted; the small impl is one chunk
        // named `Gate`, so `admit` is covered but not its own chunk.
        assert_eq!(
            got,
            [
                ("Gate", true, true),
                ("Gate", true, true),
                ("admit", false, true)
            ]
        );
        assert!(names("admit(&self) -> bool", "admit"));
        assert!(!names("admitted", "admit"));

        // `module.exports = { f: function () {} }`: a definition the check sees.
        let js = "module.exports = {\n  render: function (view) {\n    return view;\n  },\n};\n";
        let check = check_file("lib/view.js", js).expect("js");
        assert_eq!(check.found.len(), 1);
        assert_eq!(check.found[0].name, "render");
        assert!(check.fell_back, "no chunk names it: {:?}", check.found);
        assert!(check_file("notes.txt", "x").is_none());
    }
}
