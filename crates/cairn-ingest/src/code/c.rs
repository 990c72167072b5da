//! C (`.c`, `.h`): functions, their prototypes, structs, unions and enums
//! with a body, typedefs and function-like macros. A function is named
//! through its declarator chain (`static char *LZ4_find(…)` → `LZ4_find`);
//! preprocessor conditionals (`#if`, `#ifdef`, `#else`) group definitions
//! without naming anything, so an `#ifdef`-guarded function is chunked as
//! one at the top. `#include "x.h"` is an import of `x.h`; `<stdio.h>` and
//! the other system headers are not linked. Headers are read as C: a C++
//! header (`.h` with classes) still chunks, by whatever of it parses as C,
//! else by line windows.

use tree_sitter::Node;

use super::{DefName, Spec, field_body, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_definition", "function"),
        ("declaration", "function"),
        ("struct_specifier", "struct"),
        ("union_specifier", "union"),
        ("enum_specifier", "enum"),
        ("type_definition", "type"),
        ("preproc_function_def", "macro"),
    ],
    containers: &[],
    wrappers: &[],
    transparent: &[
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        // `extern "C" { … }` around a header's declarations.
        "linkage_specification",
    ],
    calls: &[("call_expression", "function")],
    imports: &["preproc_include"],
    heritage: &[],
    type_refs: &["type_identifier"],
    builtins: BUILTINS,
    capital_calls: false,
    name: def_name,
    body: def_body,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// C's own: the standard library's functions, types and macros every file
/// uses.
const BUILTINS: &[&str] = &[
    "printf",
    "fprintf",
    "sprintf",
    "snprintf",
    "vprintf",
    "vfprintf",
    "vsnprintf",
    "puts",
    "fputs",
    "putchar",
    "fputc",
    "getchar",
    "fgetc",
    "fgets",
    "scanf",
    "sscanf",
    "malloc",
    "calloc",
    "realloc",
    "free",
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "memchr",
    "strlen",
    "strcmp",
    "strncmp",
    "strcpy",
    "strncpy",
    "strcat",
    "strncat",
    "strchr",
    "strrchr",
    "strstr",
    "strdup",
    "strerror",
    "strtol",
    "strtoul",
    "strtoull",
    "atoi",
    "atol",
    "fopen",
    "fclose",
    "fread",
    "fwrite",
    "fflush",
    "fseek",
    "ftell",
    "feof",
    "ferror",
    "fileno",
    "remove",
    "rename",
    "perror",
    "exit",
    "abort",
    "atexit",
    "getenv",
    "qsort",
    "bsearch",
    "time",
    "clock",
    "assert",
    "static_assert",
    "va_start",
    "va_end",
    "va_arg",
    "va_copy",
    "va_list",
    "sizeof",
    "offsetof",
    "errno",
    "NULL",
    "FILE",
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "bool",
    "true",
    "false",
    "stdin",
    "stdout",
    "stderr",
    "EXIT_SUCCESS",
    "EXIT_FAILURE",
    "__attribute__",
    "__declspec",
];

/// A definition's name: a function's through its declarator chain, a
/// prototype's likewise (`None` for a variable), a typedef's first declared
/// name, a struct's, union's or enum's own name when it has a body (`None`
/// for `struct x;` or a use of it), a macro's.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = match node.kind() {
        "function_definition" => declarator_name(node.child_by_field_name("declarator")?, src)?,
        "declaration" => prototype_name(node, src)?,
        "struct_specifier" | "union_specifier" | "enum_specifier" => {
            node.child_by_field_name("body")?;
            text_of(node.child_by_field_name("name")?, src).to_string()
        }
        "type_definition" => declarator_name(node.child_by_field_name("declarator")?, src)?,
        _ => text_of(node.child_by_field_name("name")?, src).to_string(),
    };
    (!name.is_empty()).then_some((name, None))
}

/// The name a declarator declares: `*name`, `name(…)`, `(*name)(…)`,
/// `name[…]`, `name = …` down to the identifier; in C++ also `&name`, the
/// last segment of `Class::name`, `~Class`, `operator==` (C's trees hold
/// none of those kinds).
pub(super) fn declarator_name(node: Node<'_>, src: &str) -> Option<String> {
    let mut node = node;
    // A declarator chain is short; the bound keeps a broken tree finite.
    for _ in 0..32 {
        match node.kind() {
            "identifier" | "type_identifier" | "field_identifier" | "primitive_type"
            | "destructor_name" | "operator_name" => {
                return Some(text_of(node, src).to_string());
            }
            "qualified_identifier" | "template_function" => {
                node = node.child_by_field_name("name")?;
            }
            _ => {
                node = node
                    .child_by_field_name("declarator")
                    .or_else(|| node.named_child(0))?;
            }
        }
    }
    None
}

/// The name of a function a declaration declares (`int f(void);`,
/// `char *g(int);`; in C++ also a member's `Status Get(…) override;`,
/// `~DBImpl();`, `Foo& operator=(…)`), `None` for a variable or a field
/// (`int x;`, a function pointer `int (*fp)(int);`).
pub(super) fn prototype_name(node: Node<'_>, src: &str) -> Option<String> {
    let mut d = node.child_by_field_name("declarator")?;
    while matches!(d.kind(), "pointer_declarator" | "reference_declarator") {
        d = d
            .child_by_field_name("declarator")
            .or_else(|| d.named_child(0))?;
    }
    if d.kind() != "function_declarator" {
        return None;
    }
    let name = d.child_by_field_name("declarator")?;
    matches!(
        name.kind(),
        "identifier"
            | "field_identifier"
            | "qualified_identifier"
            | "destructor_name"
            | "operator_name"
            | "template_function"
    )
    .then(|| declarator_name(name, src))
    .flatten()
}

/// What a large definition is cut in: a function's statements, a struct's
/// fields (a typedef's through its struct), a macro's text in windows.
fn def_body(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "type_definition" => node
            .child_by_field_name("type")?
            .child_by_field_name("body"),
        "preproc_function_def" => node.child_by_field_name("value"),
        _ => field_body(node),
    }
}

/// The header a `#include "dir/x.h"` names (`x.h`); `None` for a system
/// header (`<stdio.h>`), which is no concept of the project.
pub(super) fn included_header(node: Node<'_>, src: &str) -> Option<String> {
    let path = node.child_by_field_name("path")?;
    if path.kind() != "string_literal" {
        return None;
    }
    let text = text_of(path, src).trim_matches('"');
    let name = text.rsplit(['/', '\\']).next().unwrap_or(text);
    (!name.is_empty()).then(|| name.to_string())
}

/// The texts the C grammar reads in place of a file whose preprocessor
/// conditionals break its syntax tree, best guess first.
///
/// tree-sitter-c parses `#if`/`#ifdef`/`#else`/`#endif` only where a
/// statement or a declaration may stand; one inside an expression
/// (zlib's `s->status =` `#ifdef GZIP` `… :` `#endif` `INIT_STATE;`) makes
/// the rest of the file one error node, and every function after it falls
/// back to line windows (1,500 lines of `deflate.c`, `deflate()` itself
/// among them). The compiler reads one branch of each conditional; these
/// texts approximate that. The first blanks only the directives and keeps
/// every branch (so alternatives of one definition all stay); the second
/// also blanks all but the longest branch of each conditional (the first
/// of equals), the one most likely to hold the code (`#ifdef ASMINF` a
/// pragma `#else` the whole C version `#endif`). Blanking writes a space
/// for every byte but a newline, so each text has the original's byte
/// offsets and lines: a tree of it reads names and lines from the
/// original. Empty when the file has no conditional.
pub(super) fn conditional_variants(src: &str) -> Vec<String> {
    let lines: Vec<&str> = src.split_inclusive('\n').collect();
    // Per line: a directive (or its continuation), or in a branch not kept.
    let mut directive = vec![false; lines.len()];
    let mut dropped = vec![false; lines.len()];
    // Per open conditional: its branches as line ranges, the last still open.
    let mut open: Vec<Vec<(usize, usize)>> = Vec::new();
    let close = |branches: &[(usize, usize)], dropped: &mut [bool]| {
        let longest = branches
            .iter()
            .enumerate()
            .max_by_key(|&(i, &(s, e))| (e - s, std::cmp::Reverse(i)))
            .map_or(0, |(i, _)| i);
        for (i, &(s, e)) in branches.iter().enumerate() {
            if i != longest {
                dropped[s..e].fill(true);
            }
        }
    };
    let mut continued = false;
    for (i, line) in lines.iter().enumerate() {
        if continued {
            directive[i] = true;
            continued = line.trim_end().ends_with('\\');
            continue;
        }
        let Some(d) = conditional_directive(line) else {
            continue;
        };
        directive[i] = true;
        continued = line.trim_end().ends_with('\\');
        match d {
            Directive::If => open.push(vec![(i + 1, i + 1)]),
            Directive::Else => {
                if let Some(branches) = open.last_mut() {
                    if let Some(last) = branches.last_mut() {
                        last.1 = i;
                    }
                    branches.push((i + 1, i + 1));
                }
            }
            Directive::End => {
                if let Some(mut branches) = open.pop() {
                    if let Some(last) = branches.last_mut() {
                        last.1 = i;
                    }
                    close(&branches, &mut dropped);
                }
            }
        }
    }
    // Conditionals the file leaves open end with it.
    while let Some(mut branches) = open.pop() {
        if let Some(last) = branches.last_mut() {
            last.1 = lines.len();
        }
        close(&branches, &mut dropped);
    }
    if !directive.contains(&true) {
        return Vec::new();
    }
    let mut all_branches = String::with_capacity(src.len());
    let mut longest_branch = String::with_capacity(src.len());
    for (i, line) in lines.iter().enumerate() {
        if directive[i] {
            blank(line, &mut all_branches);
        } else {
            all_branches.push_str(line);
        }
        if directive[i] || dropped[i] {
            blank(line, &mut longest_branch);
        } else {
            longest_branch.push_str(line);
        }
    }
    vec![all_branches, longest_branch]
}

/// What a conditional directive does to the branch read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Directive {
    /// `#if`, `#ifdef`, `#ifndef`: a conditional opens.
    If,
    /// `#else`, `#elif…`: its next branch.
    Else,
    /// `#endif`.
    End,
}

/// The conditional directive a line is, if any (`#  ifdef X`, `# endif`).
fn conditional_directive(line: &str) -> Option<Directive> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    match word.as_str() {
        "if" | "ifdef" | "ifndef" => Some(Directive::If),
        "else" | "elif" | "elifdef" | "elifndef" => Some(Directive::Else),
        "endif" => Some(Directive::End),
        _ => None,
    }
}

/// Appends `line` with every byte but a newline made a space.
fn blank(line: &str, out: &mut String) {
    out.extend(line.bytes().map(|b| if b == b'\n' { '\n' } else { ' ' }));
}

#[cfg(test)]
mod tests {
    use cairn_core::{Chunk, Relation};

    use crate::code::tests::{
        assert_crumbs, assert_symbols, check_lines, chunk_named, crumbs, has_link, has_link_from,
        opts,
    };
    use crate::code::{Language, chunk_code, enclosing_definition};
    use crate::markdown::ChunkOptions;

    const C_SRC: &str = r#"#include <stdio.h>
#include <string.h>
#include "lib/lz4.h"
#include "xxhash.h"

#define KB *(1 << 10)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* The state of one stream. */
struct LZ4_stream_s {
    unsigned int hashTable[4096];
    const char *dictionary;
};

typedef struct LZ4_stream_s LZ4_stream_t;

typedef enum { notLimited = 0, limitedOutput = 1 } limitedOutput_directive;

int LZ4_compressBound(int inputSize);

/*! LZ4_hash:
 *  Hashes a sequence of four bytes. */
static unsigned LZ4_hash(unsigned sequence)
{
    return (sequence * 2654435761U) >> 20;
}

static const char *LZ4_find(LZ4_stream_t *s, const char *p)
{
    unsigned h = LZ4_hash(MIN(p[0], p[1]));
    memcpy(s->hashTable, p, 4);
    printf("%u\n", h);
    return s->dictionary + XXH32(p, 4, 0);
}

#ifdef LZ4_DEBUG
/* Prints a stream. */
void LZ4_dump(const LZ4_stream_t *s)
{
    fprintf(stderr, "%p\n", (const void *)s->dictionary);
}
#else
static void LZ4_quiet(void)
{
    LZ4_hash(0);
}
#endif
"#;

    #[test]
    fn c_definitions_get_their_own_chunks_and_breadcrumbs() {
        assert_eq!(Language::of_path("lib/lz4.c"), Some(Language::C));
        assert_eq!(Language::of_path("lib/LZ4.H"), Some(Language::C));
        let doc = chunk_code("lib/lz4.c", C_SRC, &opts());
        assert_eq!(doc.language, "c");
        check_lines(C_SRC, &doc);
        let c = crumbs(&doc);
        assert_crumbs(
            &doc,
            &[
                "lib/lz4.c > LZ4_hash",
                "lib/lz4.c > LZ4_find",
                "lib/lz4.c > LZ4_stream_s",
                "lib/lz4.c > LZ4_stream_t",
                "lib/lz4.c > limitedOutput_directive",
                "lib/lz4.c > MIN",
                "lib/lz4.c > LZ4_compressBound",
            ],
        );
        // The comment above travels with its definition.
        let hash = chunk_named(&doc, "lib/lz4.c > LZ4_hash");
        assert!(hash.text.starts_with("/*! LZ4_hash:"), "{}", hash.text);
        assert!(hash.text.ends_with('}'), "{}", hash.text);
        let st = chunk_named(&doc, "lib/lz4.c > LZ4_stream_s");
        assert!(st.text.starts_with("/* The state"), "{}", st.text);
        // A constant macro and the includes are file-level text.
        assert!(
            !c.iter().any(|c| c.ends_with("> KB")),
            "an object-like macro is no definition: {c:?}"
        );
        assert_symbols(
            &doc,
            &[
                ("LZ4_hash", "function"),
                ("LZ4_stream_s", "struct"),
                ("LZ4_stream_t", "type"),
                ("limitedOutput_directive", "type"),
                ("MIN", "macro"),
            ],
        );
    }

    #[test]
    fn definitions_under_preprocessor_conditionals_are_found() {
        let doc = chunk_code("lib/lz4.c", C_SRC, &opts());
        let c = crumbs(&doc);
        assert!(c.contains(&"lib/lz4.c > LZ4_dump".to_string()), "{c:?}");
        assert!(c.contains(&"lib/lz4.c > LZ4_quiet".to_string()), "{c:?}");
        let dump = chunk_named(&doc, "lib/lz4.c > LZ4_dump");
        assert!(dump.text.starts_with("/* Prints a stream. */"));
        assert!(has_link(&doc, "LZ4_dump", Relation::Defines));
        // A whole header inside its include guard and `extern "C"` (lz4.h).
        let h = "#ifndef LZ4_H\n#define LZ4_H\n\n#if defined (__cplusplus)\nextern \"C\" {\n#endif\n\n#if defined(LZ4_STATIC)\ntypedef struct {\n    int level;\n} LZ4_prefs;\n#elif defined(LZ4_DLL)\n#define LZ4_EXPORT(f) __declspec(dllexport) f\n#endif\n\nint LZ4_versionNumber(void);\n\n#if defined (__cplusplus)\n}\n#endif\n\n#endif /* LZ4_H */\n";
        let doc = chunk_code("lib/lz4.h", h, &opts());
        check_lines(h, &doc);
        assert_crumbs(
            &doc,
            &[
                "lib/lz4.h > LZ4_prefs",
                "lib/lz4.h > LZ4_EXPORT",
                "lib/lz4.h > LZ4_versionNumber",
            ],
        );
        let def = enclosing_definition("lib/lz4.h", h, 10, 10).expect("a field of the typedef");
        assert_eq!((def.kind, def.name.as_str()), ("type", "LZ4_prefs"));
        assert_eq!((def.start_line, def.end_line), (9, 11));
    }

    #[test]
    fn c_calls_includes_and_types_are_linked_builtins_are_not() {
        let doc = chunk_code("lib/lz4.c", C_SRC, &opts());
        let from_find =
            |to: &str, rel: Relation| has_link_from(&doc, "lib/lz4.c > LZ4_find", to, rel);
        assert!(from_find("LZ4_hash", Relation::Calls), "{:?}", doc.links);
        assert!(from_find("MIN", Relation::Calls), "{:?}", doc.links);
        assert!(from_find("XXH32", Relation::Calls), "{:?}", doc.links);
        assert!(from_find("LZ4_stream_t", Relation::Uses), "{:?}", doc.links);
        assert!(
            has_link(&doc, "lz4.h", Relation::Imports),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "xxhash.h", Relation::Imports),
            "{:?}",
            doc.links
        );
        for name in [
            "memcpy", "printf", "fprintf", "stdio.h", "string.h", "stderr",
        ] {
            assert!(
                !doc.links.iter().any(|l| l.to == name),
                "{name}: {:?}",
                doc.links
            );
        }
        for name in ["LZ4_hash", "LZ4_stream_s", "LZ4_stream_t", "MIN"] {
            assert!(has_link(&doc, name, Relation::Defines), "{name}");
        }
        // A variable is no definition, nor is a function pointer.
        let vars = "int counter = 0;\nint (*handler)(int);\nstruct LZ4_stream_s;\n";
        let doc = chunk_code("lib/vars.c", vars, &opts());
        assert!(doc.symbols.is_empty(), "{:?}", doc.symbols);
    }

    #[test]
    fn a_line_is_in_one_chunk_however_many_nodes_it_holds() {
        // lz4's bench.h: a prototype and its comment on one line gave two
        // chunks of the same lines, so the same id (the index refused it).
        let src = "void BMK_setAdditionalParam(int additionalParam); /* hidden param, influence output format, for python parsing */\n\nstruct a { int x; }; struct b { int y; };\n";
        let doc = chunk_code("programs/bench.h", src, &opts());
        check_lines(src, &doc);
        let mut ids: Vec<&str> = doc.chunks.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), doc.chunks.len(), "{:?}", crumbs(&doc));
        assert!(has_link(&doc, "BMK_setAdditionalParam", Relation::Defines));
        assert!(
            has_link(&doc, "b", Relation::Defines) || doc.symbols.iter().any(|(n, _, _)| n == "b")
        );
    }

    #[test]
    fn a_conditional_inside_an_expression_does_not_hide_the_functions_after_it() {
        // zlib's deflate.c: a `#ifdef` splitting an expression made the rest
        // of the file one error node, every function after it line windows.
        let mut src = String::from(
            "#include \"deflate.h\"\n\nint ZEXPORT deflateResetKeep(z_streamp strm) {\n    deflate_state *s = strm->state;\n    s->status =\n#ifdef GZIP\n        s->wrap == 2 ? GZIP_STATE :\n#endif\n        INIT_STATE;\n    return Z_OK;\n}\n\n",
        );
        for i in 0..12 {
            src.push_str(&format!(
                "/* Step {i}. */\nlocal int step_{i}(deflate_state *s) {{\n    s->pending += {i};\n    return s->pending > {i} ? Z_OK : Z_BUF_ERROR;\n}}\n\n"
            ));
        }
        src.push_str("#ifdef ASMINF\n#  pragma message(\"asm\")\n#else\nint ZEXPORT deflate(z_streamp strm, int flush) {\n    return step_0(strm->state) + flush;\n}\n#endif\n");
        let doc = chunk_code("zlib/deflate.c", &src, &opts());
        check_lines(&src, &doc);
        let c = crumbs(&doc);
        for want in ["deflateResetKeep", "step_0", "step_11", "deflate"] {
            assert!(
                c.contains(&format!("zlib/deflate.c > {want}")),
                "{want} not in {c:?}"
            );
        }
        // The chunk keeps the text as written, directives and all.
        let reset = chunk_named(&doc, "zlib/deflate.c > deflateResetKeep");
        assert!(reset.text.contains("#ifdef GZIP"), "{}", reset.text);
        // step_i's comment opens line 13 + 6i.
        let def = enclosing_definition("zlib/deflate.c", &src, 45, 45).expect("in step_5");
        assert_eq!(def.name, "step_5");
        // The highlighter reads the same tree: the function after the
        // conditional is highlighted as a function.
        let lines = crate::code::highlight("zlib/deflate.c", &src).expect("highlighted");
        assert_eq!(lines.len(), src.lines().count());
    }

    #[test]
    fn a_backslash_on_the_last_line_ends_no_chunk_past_the_text() {
        // Found by the property test: the last node ran past the last line
        // and the line windows after the last definition read beyond it.
        for (path, text) in [
            (
                "a.h",
                "---class API Foo {------]class C {'\r\n&a\n- #ifdef X\nclass C {#if A \\\n",
            ),
            ("a.c", "int x;\n&a\n- y\nstatic int z {#if A \\\n"),
            ("a.c", "#define LONG(a) \\\n  (a) \\\n"),
        ] {
            let doc = chunk_code(path, text, &opts());
            check_lines(text, &doc);
        }
    }

    #[test]
    fn conditional_variants_keep_offsets_and_choose_branches() {
        let src = "a;\n#if X\nb;\n#else\nc;\nd;\n#endif\n#ifdef ASM\n#pragma p\n#elif Y \\\n  && Z\nint f(void) {\n  return 1;\n}\n#endif\ne;\n";
        let variants = super::conditional_variants(src);
        assert_eq!(variants.len(), 2);
        for v in &variants {
            assert_eq!(v.len(), src.len());
            assert_eq!(v.lines().count(), src.lines().count());
            for (a, b) in v.lines().zip(src.lines()) {
                assert!(a.trim().is_empty() || a == b, "{a:?} vs {b:?}");
            }
            // Every conditional directive, its continuation too, is blank.
            for d in ["#if", "#else", "#elif", "#endif", "&& Z"] {
                assert!(!v.contains(d), "{d}: {v}");
            }
        }
        let kept = |v: &str| -> Vec<String> {
            v.lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect()
        };
        // All branches.
        assert_eq!(
            kept(&variants[0]),
            [
                "a;",
                "b;",
                "c;",
                "d;",
                "#pragma p",
                "int f(void) {",
                "  return 1;",
                "}",
                "e;"
            ]
        );
        // The longest branch of each: `c; d;` over `b;`, the function over
        // the pragma.
        assert_eq!(
            kept(&variants[1]),
            ["a;", "c;", "d;", "int f(void) {", "  return 1;", "}", "e;"]
        );
        assert!(super::conditional_variants("int x;\n#define A 1\n").is_empty());
        // A conditional the file never closes, and an `#endif` with none open.
        let v = super::conditional_variants("#endif\n#if A\nx;\n#else\ny;\nz;\n");
        assert_eq!(kept(&v[1]), ["y;", "z;"]);
    }

    #[test]
    fn a_large_c_function_is_cut_between_statements() {
        let mut src = String::from(
            "#include \"lz4.h\"\n\nint LZ4_decompress_generic(const char *src, char *dst, int size)\n{\n",
        );
        for i in 0..80 {
            src.push_str(&format!(
                "    if (size > {i}) {{ dst[{i}] = LZ4_read_{i}(src + {i}); }}\n"
            ));
        }
        src.push_str("    return size;\n}\n");
        let small = ChunkOptions {
            max_chars: 600,
            ..opts()
        };
        let doc = chunk_code("lib/lz4.c", &src, &small);
        check_lines(&src, &doc);
        let parts: Vec<&Chunk> = doc
            .chunks
            .iter()
            .filter(|c| c.text.contains("LZ4_read_"))
            .collect();
        assert!(parts.len() >= 4, "{}", parts.len());
        assert_eq!(parts[0].breadcrumb(), "lib/lz4.c > LZ4_decompress_generic");
        assert_eq!(
            parts[1].breadcrumb(),
            "lib/lz4.c > int LZ4_decompress_generic(const char *src, char *dst, int size)"
        );
        for p in &parts {
            assert!(p.text.len() <= 600 + 80, "{}", p.text.len());
            // Cut between statements: every part holds whole lines of `if`s.
            assert!(
                p.text
                    .lines()
                    .all(|l| !l.trim_start().starts_with("if") || l.trim_end().ends_with('}')),
                "{}",
                p.text
            );
        }
        assert!(has_link(&doc, "LZ4_read_79", Relation::Calls));
    }
}
