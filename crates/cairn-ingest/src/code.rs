//! Code files → chunks and links, by syntax tree (tree-sitter, official grammars).
//!
//! One chunk per definition: function, method, class/struct/impl/trait/
//! interface/enum, with the comments and attributes right above it (its doc
//! comment). A container (class, impl, trait, module) that fits in
//! `max_chars` is one chunk; a larger one gives a header chunk (its
//! signature and fields up to the first member) and one chunk per member. A
//! function body larger than `max_chars` is split between statements; each
//! later part carries the signature as the last element of its heading path,
//! so its breadcrumb and embedding text say whose body it is. Everything
//! between definitions (imports, constants, module docs) forms file-level
//! chunks. The breadcrumb is `path > Type > method`.
//!
//! Links: every definition `defines` its name; a member is `member_of` its
//! type; calls, imports, type references and `implements`/`extends` clauses
//! become edges from the chunk they appear in. Names are taken as written
//! (no type resolution): `x.validate()` links to every `validate`. Names too
//! common to carry meaning (`new`, `get`, `len`, …, and each language's own
//! builtins: JavaScript's `Error`, Rust's `Option`) are left out, but never
//! a type or top-level function the file defines (Python's `class Console`);
//! the graph's hub dampening handles the rest.
//!
//! Languages without a grammar here fall back to [`chunk_lines`]: windows of
//! lines with overlap.

use std::collections::HashSet;

use cairn_core::{Chunk, Link, Relation};
use tree_sitter::{Node, Parser};

use crate::markdown::ChunkOptions;

/// A language with a syntax-tree chunker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// Rust (`.rs`).
    Rust,
    /// Python (`.py`, `.pyi`).
    Python,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// JavaScript (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// Go (`.go`).
    Go,
    /// Java (`.java`).
    Java,
    /// C# (`.cs`).
    CSharp,
}

/// Each file extension (lower case) of a language with a syntax-tree
/// chunker, and the language: the one table [`Language::of_path`] and
/// [`CODE_EXTENSIONS`] are read from.
const EXTENSIONS: [(&str, Language); 14] = [
    ("rs", Language::Rust),
    ("py", Language::Python),
    ("pyi", Language::Python),
    ("ts", Language::TypeScript),
    ("mts", Language::TypeScript),
    ("cts", Language::TypeScript),
    ("tsx", Language::Tsx),
    ("js", Language::JavaScript),
    ("mjs", Language::JavaScript),
    ("cjs", Language::JavaScript),
    ("jsx", Language::JavaScript),
    ("go", Language::Go),
    ("java", Language::Java),
    ("cs", Language::CSharp),
];

/// File extensions of the languages with a syntax-tree chunker.
pub const CODE_EXTENSIONS: &[&str] = &{
    let mut out = [""; EXTENSIONS.len()];
    let mut i = 0;
    while i < EXTENSIONS.len() {
        out[i] = EXTENSIONS[i].0;
        i += 1;
    }
    out
};

impl Language {
    /// The language of a path, by extension.
    pub fn of_path(path: &str) -> Option<Language> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        EXTENSIONS
            .iter()
            .find(|(e, _)| *e == ext)
            .map(|&(_, language)| language)
    }

    /// Lower-case name (`rust`, `python`, `typescript`, …).
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::TypeScript | Language::Tsx => "typescript",
            Language::JavaScript => "javascript",
            Language::Go => "go",
            Language::Java => "java",
            Language::CSharp => "csharp",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        }
    }

    fn spec(self) -> &'static Spec {
        match self {
            Language::Rust => &RUST,
            Language::Python => &PYTHON,
            Language::TypeScript | Language::Tsx | Language::JavaScript => &JS,
            Language::Go => &GO,
            Language::Java => &JAVA,
            Language::CSharp => &CSHARP,
        }
    }
}

/// The breadcrumb of a Python file's `if __name__ == "__main__":` block
/// (`rich/markdown.py > __main__`): the script part of a module.
pub const MAIN_BLOCK: &str = "__main__";

/// What the syntax tree of one language looks like to the chunker.
struct Spec {
    /// Node kinds that define a named symbol, with the symbol's kind.
    defs: &'static [(&'static str, &'static str)],
    /// Definition kinds whose body holds members (split when too large).
    containers: &'static [&'static str],
    /// Kinds that wrap a definition (`export`, decorators): the field that holds it.
    wrappers: &'static [(&'static str, &'static str)],
    /// Kinds that group definitions without naming a type (namespaces).
    transparent: &'static [&'static str],
    /// Call-like kinds and the field holding the callee.
    calls: &'static [(&'static str, &'static str)],
    /// Import kinds.
    imports: &'static [&'static str],
    /// Kinds listing supertypes (`implements`, `extends`, base lists).
    heritage: &'static [&'static str],
    /// Identifier kinds that name a type where it is used.
    type_refs: &'static [&'static str],
    /// The language's own names (builtins, standard types), too common to
    /// link on: compared as written.
    builtins: &'static [&'static str],
    /// Functions and methods are capitalised (`Println`, `ToString`): a
    /// called name is compared case-folded with [`COMMON_NAMES`].
    capital_calls: bool,
    /// Scripts guard their entry point with `if __name__ == "__main__":`
    /// ([`MAIN_BLOCK`]).
    main_guard: bool,
}

static RUST: Spec = Spec {
    defs: &[
        ("function_item", "function"),
        ("function_signature_item", "function"),
        ("struct_item", "struct"),
        ("enum_item", "enum"),
        ("union_item", "union"),
        ("trait_item", "trait"),
        ("impl_item", "impl"),
        ("mod_item", "module"),
        ("type_item", "type"),
        ("macro_definition", "macro"),
    ],
    containers: &["impl_item", "trait_item", "mod_item"],
    wrappers: &[],
    transparent: &[],
    calls: &[("call_expression", "function")],
    imports: &["use_declaration"],
    heritage: &[],
    type_refs: &["type_identifier"],
    builtins: RUST_BUILTINS,
    capital_calls: false,
    main_guard: false,
};

static PYTHON: Spec = Spec {
    defs: &[
        ("function_definition", "function"),
        ("class_definition", "class"),
    ],
    containers: &["class_definition"],
    wrappers: &[("decorated_definition", "definition")],
    transparent: &[],
    calls: &[("call", "function")],
    imports: &["import_statement", "import_from_statement"],
    heritage: &["argument_list"],
    type_refs: &[],
    builtins: PYTHON_BUILTINS,
    capital_calls: false,
    main_guard: true,
};

static JS: Spec = Spec {
    defs: &[
        ("function_declaration", "function"),
        ("generator_function_declaration", "function"),
        ("class_declaration", "class"),
        ("abstract_class_declaration", "class"),
        ("method_definition", "method"),
        ("interface_declaration", "interface"),
        ("type_alias_declaration", "type"),
        ("enum_declaration", "enum"),
        ("lexical_declaration", "function"),
        ("variable_declaration", "function"),
    ],
    containers: &["class_declaration", "abstract_class_declaration"],
    wrappers: &[("export_statement", "declaration")],
    transparent: &[],
    calls: &[
        ("call_expression", "function"),
        ("new_expression", "constructor"),
    ],
    imports: &["import_statement"],
    heritage: &["class_heritage"],
    type_refs: &["type_identifier"],
    builtins: JS_BUILTINS,
    capital_calls: false,
    main_guard: false,
};

static GO: Spec = Spec {
    defs: &[
        ("function_declaration", "function"),
        ("method_declaration", "method"),
        ("type_declaration", "type"),
    ],
    containers: &[],
    wrappers: &[],
    transparent: &[],
    calls: &[("call_expression", "function")],
    imports: &["import_declaration"],
    heritage: &[],
    type_refs: &["type_identifier"],
    builtins: GO_BUILTINS,
    capital_calls: true,
    main_guard: false,
};

static JAVA: Spec = Spec {
    defs: &[
        ("class_declaration", "class"),
        ("interface_declaration", "interface"),
        ("enum_declaration", "enum"),
        ("record_declaration", "record"),
        ("annotation_type_declaration", "annotation"),
        ("method_declaration", "method"),
        ("constructor_declaration", "constructor"),
    ],
    containers: &[
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
    ],
    wrappers: &[],
    transparent: &[],
    calls: &[
        ("method_invocation", "name"),
        ("object_creation_expression", "type"),
    ],
    imports: &["import_declaration"],
    heritage: &["superclass", "super_interfaces"],
    type_refs: &["type_identifier"],
    builtins: JAVA_BUILTINS,
    capital_calls: false,
    main_guard: false,
};

static CSHARP: Spec = Spec {
    defs: &[
        ("class_declaration", "class"),
        ("struct_declaration", "struct"),
        ("interface_declaration", "interface"),
        ("enum_declaration", "enum"),
        ("record_declaration", "record"),
        ("method_declaration", "method"),
        ("constructor_declaration", "constructor"),
        ("property_declaration", "property"),
    ],
    containers: &[
        "class_declaration",
        "struct_declaration",
        "interface_declaration",
        "record_declaration",
    ],
    wrappers: &[],
    transparent: &[
        "namespace_declaration",
        "file_scoped_namespace_declaration",
        "declaration_list",
    ],
    calls: &[
        ("invocation_expression", "function"),
        ("object_creation_expression", "type"),
    ],
    imports: &["using_directive"],
    heritage: &["base_list"],
    type_refs: &[],
    builtins: CSHARP_BUILTINS,
    capital_calls: true,
    main_guard: false,
};

/// Names too common to link on, in any language: a call to `new` or `len`
/// says nothing about which concept the caller is about. Lower-case; a name
/// that starts lower-case is compared case-folded (`toString`, `forEach`
/// meet `tostring`, `foreach`), one that starts upper-case only where the
/// language's methods are capitalised (Go, C# calls: `ToString`,
/// `Println`). A capitalised name is otherwise a type, and only its own
/// language's builtins ([`Spec::builtins`]) are too common: Python's
/// `Console`, `Error` or `Value` is a class of the project.
const COMMON_NAMES: &[&str] = &[
    // Module names every project has: as graph nodes they join unrelated
    // code (every `mod tests` of a crate was one 445-link hub).
    "tests",
    "test",
    "testing",
    "main",
    "lib",
    "mod",
    "utils",
    "util",
    "helpers",
    "prelude",
    "imp",
    "inner",
    "new",
    "default",
    "clone",
    "from",
    "into",
    "to_string",
    "tostring",
    "unwrap",
    "expect",
    "len",
    "push",
    "pop",
    "get",
    "set",
    "map",
    "ok",
    "err",
    "some",
    "none",
    "self",
    "this",
    "super",
    "string",
    "str",
    "int",
    "bool",
    "vec",
    "option",
    "result",
    "print",
    "println",
    "format",
    "append",
    "init",
    "__init__",
    "iter",
    "collect",
    "insert",
    "remove",
    "contains",
    "is_empty",
    "as_str",
    "as_ref",
    "to_owned",
    "unwrap_or",
    "and_then",
    "map_err",
    "join",
    "split",
    "trim",
    "parse",
    "write",
    "read",
    "log",
    // JavaScript's global, and a property of many a Python class (`def
    // console(self)`): as a definition it would split the node of the
    // class `Console` (one key) into one node per defining file.
    "console",
    "equals",
    "hashcode",
    "add",
    "put",
    "list",
    "dict",
    "object",
    "error",
    "value",
    "key",
    "data",
    "item",
    "items",
    "keys",
    "values",
    "assert",
    "assert_eq",
    "range",
    "type",
    "var",
    "let",
    "const",
    "sort",
    "filter",
    "reduce",
    "foreach",
    "then",
    "catch",
    "emit",
    "send",
    "close",
    "open",
    "into_iter",
    "iter_mut",
    "next",
    "json",
    "path",
    "to_vec",
    "as_deref",
    "unwrap_or_default",
    "unwrap_or_else",
    "ok_or_else",
    "with_capacity",
    "chars",
    "bytes",
    "lines",
    "extend",
    "entry",
    "or_default",
    "or_insert",
    "take",
    "skip",
    "any",
    "all",
    "find",
    "position",
    "max",
    "min",
    "sum",
    "count",
    "first",
    "last",
    "windows",
    "zip",
    "rev",
    "enumerate",
    "cloned",
    "copied",
    "to_lowercase",
    "starts_with",
    "ends_with",
    "display",
    "fmt",
    "args",
    "index",
];

/// Rust's own: the prelude's types, variants and traits.
const RUST_BUILTINS: &[&str] = &[
    "Self",
    "String",
    "Vec",
    "Box",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Default",
    "Clone",
    "Copy",
    "Debug",
    "Display",
    "From",
    "Into",
    "ToString",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Hash",
    "Send",
    "Sync",
    "Sized",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "AsRef",
    "Iterator",
    "IntoIterator",
];

/// Python's own: builtins, exceptions every module raises, and `typing`.
const PYTHON_BUILTINS: &[&str] = &[
    "cls",
    "kwargs",
    "isinstance",
    "issubclass",
    "getattr",
    "setattr",
    "hasattr",
    "sorted",
    "float",
    "tuple",
    "Exception",
    "BaseException",
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "AttributeError",
    "RuntimeError",
    "NotImplementedError",
    "Any",
    "Optional",
    "Union",
    "List",
    "Dict",
    "Tuple",
    "Set",
    "Type",
    "Callable",
    "Iterable",
    "Iterator",
    "Sequence",
    "Mapping",
    "TYPE_CHECKING",
];

/// JavaScript's and TypeScript's own: globals and utility types.
const JS_BUILTINS: &[&str] = &[
    "require",
    "module",
    "exports",
    "Object",
    "Array",
    "String",
    "Number",
    "Boolean",
    "Symbol",
    "Function",
    "Error",
    "TypeError",
    "RangeError",
    "Promise",
    "JSON",
    "Math",
    "Date",
    "RegExp",
    "Map",
    "Set",
    "Record",
    "Partial",
    "Readonly",
    "Pick",
    "Omit",
];

/// Go's own: predeclared types and functions, `fmt`'s printers.
const GO_BUILTINS: &[&str] = &[
    "byte", "rune", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32",
    "uint64", "uintptr", "float32", "float64", "make", "cap", "panic", "recover", "Printf",
    "Sprintf", "Errorf", "Fprintf", "Fprintln", "Sprint",
];

/// Java's own: `java.lang` and the collections every file uses.
const JAVA_BUILTINS: &[&str] = &[
    "Object",
    "String",
    "Integer",
    "Long",
    "Boolean",
    "Double",
    "Override",
    "Exception",
    "RuntimeException",
    "System",
    "Math",
    "StringBuilder",
    "List",
    "ArrayList",
    "Map",
    "HashMap",
    "Set",
    "HashSet",
    "Optional",
];

/// C#'s own: `System` types and the LINQ calls every file makes.
const CSHARP_BUILTINS: &[&str] = &[
    "Object",
    "String",
    "Int32",
    "Boolean",
    "Console",
    "WriteLine",
    "Exception",
    "ArgumentException",
    "ArgumentNullException",
    "InvalidOperationException",
    "Math",
    "List",
    "Dictionary",
    "HashSet",
    "IEnumerable",
    "Task",
    "Func",
    "Action",
    "Select",
    "Where",
    "ToList",
    "ToArray",
    "FirstOrDefault",
    "GetType",
    "nameof",
];

/// Whether `name` is too common to link on in the language of `spec`;
/// `call` when it is the name of a called function or method (not a
/// constructor).
fn is_common(spec: &Spec, name: &str, call: bool) -> bool {
    if name.len() < 3 || spec.builtins.contains(&name) {
        return true;
    }
    let capital = name.starts_with(|c: char| c.is_uppercase());
    (!capital || (call && spec.capital_calls))
        && COMMON_NAMES.contains(&name.to_ascii_lowercase().as_str())
}

/// Definition kinds that are always a graph node, whatever their name: a
/// type the project defines is what people ask about, `Console` included.
/// A function is one when it is top-level; methods named `new` or `get`
/// are left out.
const TYPE_KINDS: &[&str] = &[
    "class",
    "struct",
    "enum",
    "union",
    "trait",
    "interface",
    "type",
    "record",
    "annotation",
];

fn always_node(kind: &str, parent: Option<&str>) -> bool {
    TYPE_KINDS.contains(&kind) || (kind == "function" && parent.is_none())
}

/// A code file cut into chunks, with the links its syntax tree shows.
#[derive(Clone, Debug, Default)]
pub struct CodeDoc {
    /// Language name (`rust`, …), or `text` for the line-window fallback.
    pub language: &'static str,
    /// The chunks, in file order.
    pub chunks: Vec<Chunk>,
    /// Links from those chunks (by index) to symbols and paths.
    pub links: Vec<Link>,
    /// Definitions found: `(name, kind, chunk index)`.
    pub symbols: Vec<(String, &'static str, usize)>,
}

/// Why a file is treated as generated or minified (and skipped), if it is.
///
/// Heuristics, in order: a name that generators use (`*.min.js`,
/// `*.pb.go`, `*_pb2.py`, `*.g.cs`, `*.designer.cs`, `*.generated.*`, lock
/// files); a marker in the first five lines (`@generated`, `DO NOT EDIT`,
/// `auto-generated`, `Code generated`); or minified text: an average line
/// longer than 300 characters, or any line over 5,000 characters.
pub fn generated_reason(path: &str, text: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let generated_names = [
        ".min.js",
        ".min.css",
        ".min.mjs",
        ".pb.go",
        "_pb2.py",
        "_pb2_grpc.py",
        ".g.cs",
        ".designer.cs",
        ".bundle.js",
        "-lock.json",
    ];
    if generated_names.iter().any(|s| name.ends_with(s)) || name.contains(".generated.") {
        return Some("generated file name");
    }
    let head: String = text.lines().take(5).collect::<Vec<_>>().join("\n");
    let head = head.to_ascii_lowercase();
    if [
        "@generated",
        "do not edit",
        "auto-generated",
        "autogenerated",
        "code generated",
    ]
    .iter()
    .any(|m| head.contains(m))
    {
        return Some("generated-code marker in its first lines");
    }
    let lines = text.lines().count().max(1);
    if text.len() / lines > 300 || text.lines().any(|l| l.len() > 5000) {
        return Some("minified (very long lines)");
    }
    None
}

/// Cuts a code file into chunks and links; languages without a grammar get
/// [`chunk_lines`].
pub fn chunk_code(path: &str, text: &str, opts: &ChunkOptions) -> CodeDoc {
    let Some(lang) = Language::of_path(path) else {
        return CodeDoc {
            language: "text",
            chunks: chunk_lines(path, text, opts),
            ..CodeDoc::default()
        };
    };
    let mut parser = Parser::new();
    let tree = match parser.set_language(&lang.grammar()) {
        Ok(()) => parser.parse(text, None),
        Err(_) => None,
    };
    let Some(tree) = tree else {
        tracing::debug!(path, "no syntax tree: line windows");
        return CodeDoc {
            language: lang.name(),
            chunks: chunk_lines(path, text, opts),
            ..CodeDoc::default()
        };
    };
    let mut b = Builder {
        path,
        src: text,
        lines: text.lines().collect(),
        spec: lang.spec(),
        opts,
        doc: CodeDoc {
            language: lang.name(),
            ..CodeDoc::default()
        },
        owners: Vec::new(),
        defined: HashSet::new(),
    };
    b.block(tree.root_node(), &[], 0);
    if b.doc.chunks.is_empty() && !text.trim().is_empty() {
        b.doc.chunks = chunk_lines(path, text, opts);
        b.owners = vec![None; b.doc.chunks.len()];
    }
    b.references(tree.root_node());
    merge_small(&mut b.doc, path, &b.lines, opts);
    b.doc.links.dedup();
    b.doc
}

/// Merges chunks under `opts.min_chars` (a `mod x;`, a `use` line, a one-line
/// struct, a two-line method) into their neighbours: a run of small ones
/// becomes one chunk, a lone small one joins the chunk before or after it,
/// as long as the result stays within `opts.max_chars`. Alone, such a stub
/// outranks the code that answers (it is all keyword) and tells an agent
/// nothing. The merged chunk spans whole lines from its first part to its
/// last and keeps the breadcrumb of its largest part when that one is of
/// full size (the stubs ride along as context), else the parts' common
/// breadcrumb. Symbols and links follow their chunk.
fn merge_small(doc: &mut CodeDoc, path: &str, lines: &[&str], opts: &ChunkOptions) {
    let n = doc.chunks.len();
    if n < 2 || opts.min_chars == 0 {
        return;
    }
    let small = |c: &Chunk| c.text.trim().chars().count() < opts.min_chars;
    let span = |a: &Chunk, b: &Chunk| -> usize {
        let (s, e) = (
            a.start_line as usize - 1,
            (b.end_line as usize).min(lines.len()),
        );
        lines[s.min(e)..e]
            .iter()
            .map(|l| l.chars().count() + 1)
            .sum()
    };
    // Groups of consecutive chunk indices, in order.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n {
            let (first, last, next) = (&doc.chunks[i], &doc.chunks[j], &doc.chunks[j + 1]);
            // Windows of one long body overlap: they stay apart.
            if next.start_line <= last.end_line {
                break;
            }
            let group_small =
                span(first, last) < opts.min_chars + 1 && (i..=j).all(|k| small(&doc.chunks[k]));
            if !(group_small || small(next)) || span(first, next) > opts.max_chars {
                break;
            }
            j += 1;
        }
        groups.push((i, j));
        i = j + 1;
    }
    if groups.len() == n {
        return;
    }
    let mut remap = vec![0; n];
    let mut merged = Vec::with_capacity(groups.len());
    for (g, &(a, b)) in groups.iter().enumerate() {
        for slot in &mut remap[a..=b] {
            *slot = g;
        }
        if a == b {
            merged.push(doc.chunks[a].clone());
            continue;
        }
        let parts = &doc.chunks[a..=b];
        let largest = parts
            .iter()
            .max_by_key(|c| c.text.trim().chars().count())
            .unwrap_or(&parts[0]);
        let heading = if small(largest) {
            let mut common = parts[0].heading_path.clone();
            for c in &parts[1..] {
                let same = common
                    .iter()
                    .zip(&c.heading_path)
                    .take_while(|(x, y)| x == y)
                    .count();
                common.truncate(same);
            }
            if common.is_empty() {
                common.push(path.to_string());
            }
            common
        } else {
            largest.heading_path.clone()
        };
        let (start, end) = (parts[0].start_line, parts[parts.len() - 1].end_line);
        let text = lines[start as usize - 1..(end as usize).min(lines.len())].join("\n");
        let level = heading.len().min(6) as u8;
        merged.push(Chunk::new(path, heading, level, start, end, text));
    }
    doc.chunks = merged;
    for l in &mut doc.links {
        if let Some(c) = l.chunk.as_mut() {
            *c = remap[*c];
        }
    }
    for (_, _, c) in &mut doc.symbols {
        *c = remap[*c];
    }
}

/// A definition of a code file, as [`enclosing_definition`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    /// What it defines: `function`, `impl`, `struct`, `class`, `method`, …
    pub kind: &'static str,
    /// Its name (for `impl Trait for Type`, the type).
    pub name: String,
    /// First line, 1-based, with the comments and attributes right above it.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
}

/// The smallest definition (function, method, impl, class, struct, …) of a
/// code file that holds all of lines `start_line..=end_line` (1-based), its
/// doc comment and attributes counted as part of it, the way [`chunk_code`]
/// counts them; `None` when no definition holds them (imports, constants
/// between definitions) or the language has no grammar here.
pub fn enclosing_definition(
    path: &str,
    text: &str,
    start_line: u32,
    end_line: u32,
) -> Option<Definition> {
    let lang = Language::of_path(path)?;
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    let tree = parser.parse(text, None)?;
    let opts = ChunkOptions::default();
    let b = Builder {
        path,
        src: text,
        lines: Vec::new(),
        spec: lang.spec(),
        opts: &opts,
        doc: CodeDoc::default(),
        owners: Vec::new(),
        defined: HashSet::new(),
    };
    let first = start_line.max(1) as usize - 1;
    let last = (end_line.max(start_line).max(1) as usize) - 1;
    let mut best: Option<(usize, usize, &'static str, String)> = None;
    visit(tree.root_node(), &mut |n| {
        // Only nodes that reach the lines asked for can hold them.
        if end_row(n) < last {
            return;
        }
        let Some(kind) = b.def_kind(n) else { return };
        let Some((name, _)) = b.def_name(n) else {
            return;
        };
        // The node the chunker sees: the definition with its wrappers
        // (`export`, decorators).
        let mut outer = n;
        while let Some(p) = outer.parent()
            && b.spec
                .wrappers
                .iter()
                .any(|(k, f)| *k == p.kind() && p.child_by_field_name(f) == Some(outer))
        {
            outer = p;
        }
        let end = end_row(outer);
        if end < last {
            return;
        }
        let start = match outer.parent() {
            Some(parent) => {
                let mut cursor = parent.walk();
                let siblings: Vec<Node<'_>> = parent.named_children(&mut cursor).collect();
                siblings
                    .iter()
                    .position(|s| s.id() == outer.id())
                    .map_or(outer.start_position().row, |i| attached_start(&siblings, i))
            }
            None => outer.start_position().row,
        };
        if start > first {
            return;
        }
        // Visited outermost first: an inner definition as small or smaller wins.
        if best
            .as_ref()
            .is_none_or(|(s, e, _, _)| end - start <= e - s)
        {
            best = Some((start, end, kind, name));
        }
    });
    best.map(|(start, end, kind, name)| Definition {
        kind,
        name,
        start_line: u32::try_from(start + 1).unwrap_or(u32::MAX),
        end_line: u32::try_from(end + 1).unwrap_or(u32::MAX),
    })
}

/// Cuts any text into windows of whole lines of at most `opts.max_chars`
/// characters, each repeating the last `opts.overlap_lines` lines of the
/// window before. The breadcrumb is the path.
pub fn chunk_lines(path: &str, text: &str, opts: &ChunkOptions) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    windows(path, &lines, 0, lines.len(), vec![path.to_string()], opts)
}

/// Line windows over `lines[start..end]` (0-based, end exclusive).
fn windows(
    path: &str,
    lines: &[&str],
    start: usize,
    end: usize,
    heading_path: Vec<String>,
    opts: &ChunkOptions,
) -> Vec<Chunk> {
    let mut out = Vec::new();
    let max = opts.max_chars.max(200);
    let mut i = start;
    while i < end {
        let mut j = i;
        let mut size = 0;
        while j < end && (j == i || size + lines[j].len() < max) {
            size += lines[j].len() + 1;
            j += 1;
        }
        let text = lines[i..j].join("\n");
        if !text.trim().is_empty() {
            let level = heading_path.len().min(6) as u8;
            out.push(Chunk::new(
                path,
                heading_path.clone(),
                level,
                i as u32 + 1,
                j as u32,
                text,
            ));
        }
        if j >= end {
            break;
        }
        i = j.saturating_sub(opts.overlap_lines).max(i + 1);
    }
    out
}

/// Leftover text this short (closing braces, a lone `pass`) is no chunk,
/// and a container header this short (`impl Foo {`) gives way to its first
/// member.
const TINY_CHARS: usize = 40;

struct Builder<'a> {
    path: &'a str,
    src: &'a str,
    lines: Vec<&'a str>,
    spec: &'static Spec,
    opts: &'a ChunkOptions,
    doc: CodeDoc,
    /// Per chunk: the qualified name of the definition it belongs to.
    owners: Vec<Option<String>>,
    /// Names of the types and top-level functions this file defines: never
    /// too common to link on here.
    defined: HashSet<String>,
}

impl<'a> Builder<'a> {
    fn text(&self, node: Node<'_>) -> &'a str {
        node.utf8_text(self.src.as_bytes()).unwrap_or("")
    }

    fn def_kind(&self, node: Node<'_>) -> Option<&'static str> {
        self.spec
            .defs
            .iter()
            .find(|(k, _)| *k == node.kind())
            .map(|(_, label)| *label)
    }

    /// The definition a wrapper (export, decorator) holds, or the node itself.
    fn unwrap_def<'t>(&self, node: Node<'t>) -> Node<'t> {
        let mut node = node;
        while let Some((_, field)) = self.spec.wrappers.iter().find(|(k, _)| *k == node.kind()) {
            match node.child_by_field_name(field) {
                Some(inner) => node = inner,
                None => break,
            }
        }
        node
    }

    /// A definition's name (and, for `impl Trait for Type`, the trait).
    fn def_name(&self, node: Node<'_>) -> Option<(String, Option<String>)> {
        let kind = node.kind();
        if kind == "impl_item" {
            let ty = node.child_by_field_name("type")?;
            let trait_ = node
                .child_by_field_name("trait")
                .map(|t| base_name(self.text(t)));
            return Some((base_name(self.text(ty)), trait_));
        }
        if kind == "lexical_declaration" || kind == "variable_declaration" {
            // `const handler = (…) => {…}`: a function by another syntax.
            let mut cursor = node.walk();
            let decl = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "variable_declarator")?;
            let value = decl.child_by_field_name("value")?;
            if !matches!(
                value.kind(),
                "arrow_function" | "function_expression" | "function" | "class"
            ) {
                return None;
            }
            return Some((
                self.text(decl.child_by_field_name("name")?).to_string(),
                None,
            ));
        }
        if kind == "type_declaration" {
            let mut cursor = node.walk();
            let spec = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "type_spec" || c.kind() == "type_alias")?;
            return Some((
                self.text(spec.child_by_field_name("name")?).to_string(),
                None,
            ));
        }
        let name = node.child_by_field_name("name")?;
        Some((self.text(name).to_string(), None))
    }

    /// Whether a node is Python's `if __name__ == "__main__":` guard.
    fn is_main_guard(&self, node: Node<'_>) -> bool {
        if !self.spec.main_guard || node.kind() != "if_statement" {
            return false;
        }
        let Some(cond) = node.child_by_field_name("condition") else {
            return false;
        };
        let c: String = self
            .text(cond)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        matches!(
            c.as_str(),
            "__name__==\"__main__\""
                | "__name__=='__main__'"
                | "\"__main__\"==__name__"
                | "'__main__'==__name__"
        )
    }

    /// Go methods belong to their receiver's type.
    fn receiver(&self, node: Node<'_>) -> Option<String> {
        if node.kind() != "method_declaration" {
            return None;
        }
        let recv = node.child_by_field_name("receiver")?;
        let mut found = None;
        visit(recv, &mut |n| {
            if found.is_none() && n.kind() == "type_identifier" {
                found = Some(self.text(n).to_string());
            }
        });
        found
    }

    /// Chunks the definitions among `node`'s children; what lies between them
    /// becomes chunks of `parents`.
    /// Children starting before `from_row` are already in a header chunk.
    fn block(&mut self, node: Node<'_>, parents: &[String], from_row: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|c| c.start_position().row >= from_row)
            .collect();
        let mut run: Option<(usize, usize)> = None; // leftover rows, inclusive
        let mut i = 0;
        while i < children.len() {
            let child = children[i];
            let inner = self.unwrap_def(child);
            if self.spec.transparent.contains(&inner.kind()) {
                self.flush(&mut run, parents);
                match inner.child_by_field_name("body") {
                    Some(body) => self.block(body, parents, 0),
                    None => self.block(inner, parents, 0),
                }
                i += 1;
                continue;
            }
            if self.is_main_guard(child) {
                // Python's `if __name__ == "__main__":` is a script that
                // uses the module (argparse, a demo): its own chunks, named
                // [`MAIN_BLOCK`], so that ranking can tell it from the
                // module's implementation.
                self.flush(&mut run, parents);
                let mut inner = parents.to_vec();
                inner.push(MAIN_BLOCK.to_string());
                let mut block = Some((child.start_position().row, end_row(child)));
                self.flush(&mut block, &inner);
                i += 1;
                continue;
            }
            let def = self
                .def_kind(inner)
                .and_then(|k| self.def_name(inner).map(|n| (k, n)));
            let Some((kind, (name, trait_))) = def else {
                let (s, e) = (child.start_position().row, end_row(child));
                run = Some(match run {
                    Some((rs, _)) => (rs, e),
                    None => (s, e),
                });
                i += 1;
                continue;
            };
            // Comments and attributes right above belong to the definition.
            let start = if run.is_some() {
                attached_start(&children, i)
            } else {
                child.start_position().row
            };
            // Take those rows back from the leftover run.
            if let Some((rs, _)) = run {
                if start <= rs {
                    run = None;
                } else {
                    run = Some((rs, start - 1));
                }
            }
            self.flush(&mut run, parents);
            let owner = self.receiver(inner);
            let mut path = parents.to_vec();
            if let Some(r) = &owner
                && path.last() != Some(r)
            {
                path.push(r.clone());
            }
            self.definition(inner, start, end_row(child), kind, name, trait_, &path);
            i += 1;
        }
        self.flush(&mut run, parents);
    }

    fn flush(&mut self, run: &mut Option<(usize, usize)>, parents: &[String]) {
        let Some((s, e)) = run.take() else { return };
        let text = self.lines[s..=e.min(self.lines.len().saturating_sub(1))].join("\n");
        if text.trim().len() < TINY_CHARS {
            return; // closing braces, a lone `pass`
        }
        let mut heading = vec![self.path.to_string()];
        heading.extend(parents.iter().cloned());
        let chunks = windows(self.path, &self.lines, s, e + 1, heading, self.opts);
        let owner = parents.last().cloned();
        for c in chunks {
            self.push(c, owner.clone());
        }
    }

    fn push(&mut self, chunk: Chunk, owner: Option<String>) -> usize {
        self.doc.chunks.push(chunk);
        self.owners.push(owner);
        self.doc.chunks.len() - 1
    }

    #[allow(clippy::too_many_arguments)]
    fn definition(
        &mut self,
        node: Node<'_>,
        start: usize,
        end: usize,
        kind: &'static str,
        name: String,
        trait_: Option<String>,
        parents: &[String],
    ) {
        // Its members are `member_of` it, whatever its name.
        if always_node(kind, parents.last().map(String::as_str)) {
            self.defined.insert(name.clone());
        }
        let end = end.min(self.lines.len().saturating_sub(1));
        let start = start.min(end);
        let mut heading = vec![self.path.to_string()];
        heading.extend(parents.iter().cloned());
        // A member (method) is named by its signature, so that a question
        // about what it takes or returns meets it, not its type's header.
        heading.push(match self.member_signature(node, parents) {
            Some(sig) => sig,
            None => name.clone(),
        });
        let size: usize = self.lines[start..=end.min(self.lines.len() - 1)]
            .iter()
            .map(|l| l.len() + 1)
            .sum();
        let body = node.child_by_field_name("body");
        let first;
        if size <= self.opts.max_chars || body.is_none() {
            let text = self.lines[start..=end].join("\n");
            let level = heading.len().min(6) as u8;
            first = self.push(
                Chunk::new(
                    self.path,
                    heading,
                    level,
                    start as u32 + 1,
                    end as u32 + 1,
                    text,
                ),
                Some(name.clone()),
            );
            // Members of a container kept whole are still its symbols.
            if let Some(body) = body
                && self.spec.containers.contains(&node.kind())
            {
                let mut cursor = body.walk();
                let members: Vec<Node<'_>> = body.named_children(&mut cursor).collect();
                for m in members {
                    let m = self.unwrap_def(m);
                    if let (Some(k), Some((n, _))) = (self.def_kind(m), self.def_name(m)) {
                        self.symbol(n, k, first, Some(&name));
                    }
                }
            }
        } else if let Some(body) = body
            && self.spec.containers.contains(&node.kind())
        {
            // Header (signature, fields up to the first member), then members.
            let mut cursor = body.walk();
            let members: Vec<Node<'_>> = body.named_children(&mut cursor).collect();
            let first_member = members
                .iter()
                .position(|m| self.def_kind(self.unwrap_def(*m)).is_some())
                .map_or(end + 1, |i| attached_start(&members, i));
            let header_end = first_member.saturating_sub(1).max(start);
            let text = self.lines[start..=header_end].join("\n");
            let level = heading.len().min(6) as u8;
            // A header that is only `impl Foo {` is no chunk of its own: the
            // type's links go to its first member instead.
            let tiny = first_member > start && text.trim().len() < TINY_CHARS;
            let header = Chunk::new(
                self.path,
                heading,
                level,
                start as u32 + 1,
                header_end as u32 + 1,
                text,
            );
            let before = self.doc.chunks.len();
            let mut inner = parents.to_vec();
            inner.push(name.clone());
            if tiny {
                self.block(body, &inner, first_member);
                first = if self.doc.chunks.len() > before {
                    before
                } else {
                    self.push(header, Some(name.clone()))
                };
            } else {
                first = self.push(header, Some(name.clone()));
                self.block(body, &inner, first_member);
            }
        } else {
            first = self.split_body(node, start, end, &heading, &name);
        }
        self.symbol(
            name.clone(),
            kind,
            first,
            parents.last().map(String::as_str),
        );
        if let Some(t) = trait_ {
            self.doc
                .links
                .push(Link::from_chunk(first, t.clone(), Relation::Implements));
            self.doc
                .links
                .push(Link::between(name, t, Relation::Implements));
        }
    }

    /// Whether a name is too common to link on in this file: a type or
    /// top-level function it defines never is.
    fn is_common(&self, name: &str, call: bool) -> bool {
        !self.defined.contains(name) && is_common(self.spec, name, call)
    }

    fn symbol(&mut self, name: String, kind: &'static str, chunk: usize, parent: Option<&str>) {
        if always_node(kind, parent) {
            self.defined.insert(name.clone());
        }
        if !self.is_common(&name, false) {
            self.doc
                .links
                .push(Link::from_chunk(chunk, name.clone(), Relation::Defines));
        }
        if let Some(p) = parent
            && !self.is_common(p, false)
        {
            self.doc
                .links
                .push(Link::from_chunk(chunk, p, Relation::MemberOf));
        }
        self.doc.symbols.push((name, kind, chunk));
    }

    /// `name(params) -> ret` of a function defined inside a type (`parents`
    /// not empty), on one line, without visibility and keywords before the
    /// name; `None` for other definitions.
    fn member_signature(&self, node: Node<'_>, parents: &[String]) -> Option<String> {
        if parents.is_empty() || self.spec.containers.contains(&node.kind()) {
            return None;
        }
        let name = node.child_by_field_name("name")?;
        let params = node.child_by_field_name("parameters")?;
        let sig_end = node
            .child_by_field_name("body")
            .map_or(params.end_byte(), |b| b.start_byte());
        let sig: String = self
            .src
            .get(name.start_byte()..sig_end)?
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let sig = sig.trim_end_matches([':', '{', ' ']);
        Some(clip_at_token(sig, 120))
    }

    /// A function too big for one chunk, cut between the statements of its
    /// body; later parts name the signature in their heading path.
    fn split_body(
        &mut self,
        node: Node<'_>,
        start: usize,
        end: usize,
        heading: &[String],
        name: &str,
    ) -> usize {
        let body = node.child_by_field_name("body");
        // The signature: everything before the body, on one line.
        let sig_end = body.map_or(node.end_byte(), |b| b.start_byte());
        let signature: String = self
            .src
            .get(node.start_byte()..sig_end)
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let signature = clip_at_token(&signature, 160);
        let mut bounds: Vec<(usize, usize)> = Vec::new(); // statement rows
        if let Some(body) = body {
            let mut cursor = body.walk();
            for s in body.named_children(&mut cursor) {
                bounds.push((s.start_position().row, end_row(s)));
            }
        }
        let mut cont = heading.to_vec();
        if let Some(last) = cont.last_mut() {
            *last = signature;
        }
        let mut pieces: Vec<(usize, usize)> = Vec::new();
        let mut cur_start = start;
        let mut cur_end: Option<usize> = None;
        let mut size = 0usize;
        let lens: Vec<usize> = self.lines.iter().map(|l| l.len() + 1).collect();
        let row_len = |r: usize| lens.get(r).copied().unwrap_or(1);
        for &(s, e) in &bounds {
            let len: usize = (s..=e).map(row_len).sum();
            if let Some(ce) = cur_end
                && size + len > self.opts.max_chars
            {
                pieces.push((cur_start, ce));
                cur_start = ce + 1;
                size = (cur_start..s).map(row_len).sum();
            }
            if cur_end.is_none() {
                size += (cur_start..s).map(row_len).sum::<usize>();
            }
            size += len;
            cur_end = Some(e);
        }
        pieces.push((cur_start, end));
        let mut first = None;
        for (n, &(s, e)) in pieces.iter().enumerate() {
            if s > e {
                continue;
            }
            let h = if n == 0 {
                heading.to_vec()
            } else {
                cont.clone()
            };
            let size: usize = (s..=e).map(row_len).sum();
            let chunks = if size > self.opts.max_chars * 2 {
                windows(self.path, &self.lines, s, e + 1, h, self.opts)
            } else {
                let level = h.len().min(6) as u8;
                vec![Chunk::new(
                    self.path,
                    h,
                    level,
                    s as u32 + 1,
                    e as u32 + 1,
                    self.lines[s..=e].join("\n"),
                )]
            };
            for c in chunks {
                let idx = self.push(c, Some(name.to_string()));
                first.get_or_insert(idx);
            }
        }
        first.unwrap_or(0)
    }

    /// Calls, imports, type references and supertypes, each linked from the
    /// chunk holding its line.
    fn references(&mut self, root: Node<'_>) {
        let mut by_row: Vec<Option<usize>> = vec![None; self.lines.len() + 1];
        for (i, c) in self.doc.chunks.iter().enumerate() {
            for r in c.start_line as usize - 1..(c.end_line as usize).min(by_row.len()) {
                by_row[r].get_or_insert(i);
            }
        }
        let spec = self.spec;
        // (row, name, relation, a called function's or method's name)
        let mut found: Vec<(usize, String, Relation, bool)> = Vec::new();
        visit(root, &mut |n| {
            let kind = n.kind();
            let row = n.start_position().row;
            if let Some((_, field)) = spec.calls.iter().find(|(k, _)| *k == kind) {
                if let Some(f) = n.child_by_field_name(field)
                    && let Some(name) = callee(f, self.src)
                {
                    let constructor =
                        matches!(kind, "new_expression" | "object_creation_expression");
                    found.push((row, name, Relation::Calls, !constructor));
                }
            } else if spec.imports.contains(&kind) {
                visit(n, &mut |m| {
                    if matches!(
                        m.kind(),
                        "identifier" | "type_identifier" | "scoped_identifier"
                    ) && m.named_child_count() == 0
                    {
                        found.push((
                            row,
                            text_of(m, self.src).to_string(),
                            Relation::Imports,
                            false,
                        ));
                    }
                });
            } else if spec.heritage.contains(&kind)
                && (kind != "argument_list"
                    || n.parent().is_some_and(|p| p.kind() == "class_definition"))
            {
                visit(n, &mut |m| {
                    if matches!(m.kind(), "identifier" | "type_identifier") {
                        found.push((
                            row,
                            text_of(m, self.src).to_string(),
                            Relation::Implements,
                            false,
                        ));
                    }
                });
            } else if spec.type_refs.contains(&kind) {
                found.push((row, text_of(n, self.src).to_string(), Relation::Uses, false));
            }
        });
        for (row, name, rel, call) in found {
            if self.is_common(&name, call)
                || !name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            {
                continue;
            }
            let Some(Some(chunk)) = by_row.get(row) else {
                continue;
            };
            if self.owners[*chunk].as_deref() == Some(name.as_str()) {
                continue; // a type naming itself
            }
            self.doc.links.push(Link::from_chunk(*chunk, name, rel));
        }
        self.doc
            .links
            .sort_by(|a, b| (a.chunk, &a.to, &a.rel).cmp(&(b.chunk, &b.to, &b.rel)));
    }
}

/// `text` cut to at most `max` characters at a token boundary, with `…`
/// where it was cut: at the last space that leaves at least half of it
/// (`…, highlight: …`), else after the last punctuation, else mid-word (one
/// long word). A breadcrumb cut at `highlight: Optiona` read as a typo.
fn clip_at_token(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    // Room for " …".
    let head: String = text.chars().take(max.saturating_sub(2)).collect();
    let next = text[head.len()..].chars().next();
    if next.is_some_and(char::is_whitespace) {
        return format!("{} …", head.trim_end());
    }
    let half = head.len() / 2;
    if let Some(i) = head.rfind(char::is_whitespace).filter(|i| *i >= half) {
        return format!("{} …", head[..i].trim_end());
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    match head.rfind(|c: char| !word(c)).filter(|i| *i >= half) {
        Some(i) => {
            let end = i + head[i..].chars().next().map_or(1, char::len_utf8);
            format!("{}…", head[..end].trim_end())
        }
        None => format!("{head}…"),
    }
}

/// The first row of `children[i]` with the comments and attributes right
/// above it (no blank line between).
fn attached_start(children: &[Node<'_>], i: usize) -> usize {
    let mut start = children[i].start_position().row;
    for prev in children[..i].iter().rev() {
        let is_note = prev.kind().contains("comment") || prev.kind() == "attribute_item";
        if is_note && end_row(*prev) + 1 >= start {
            start = prev.start_position().row;
        } else {
            break;
        }
    }
    start
}

fn end_row(node: Node<'_>) -> usize {
    let end = node.end_position();
    // A node ending at column 0 ends on the line before (trailing newline).
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

fn text_of<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    node.utf8_text(src.as_bytes()).unwrap_or("")
}

/// The called name in a callee expression: the last identifier of
/// `a.b.c`, `a::b`, `new Foo<T>`.
fn callee(node: Node<'_>, src: &str) -> Option<String> {
    if node.named_child_count() == 0 {
        let t = text_of(node, src);
        return t
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_')
            .then(|| t.to_string());
    }
    for field in ["name", "field", "property", "attribute", "function", "type"] {
        if let Some(f) = node.child_by_field_name(field) {
            return callee(f, src);
        }
    }
    let last = node.named_child(u32::try_from(node.named_child_count().checked_sub(1)?).ok()?)?;
    callee(last, src)
}

/// `Foo<T>` → `Foo`, `crate::a::Foo` → `Foo`, `&mut Foo` → `Foo`.
fn base_name(text: &str) -> String {
    let t = text.split('<').next().unwrap_or(text);
    let t = t.rsplit("::").next().unwrap_or(t);
    t.trim_start_matches(['&', '*'])
        .trim_start_matches("mut ")
        .trim()
        .to_string()
}

/// Depth-first visit of every node under (and including) `node`.
fn visit<'t>(node: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        f(n);
        let children: Vec<Node<'t>> = n.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_extension_names_its_language() {
        assert_eq!(CODE_EXTENSIONS.len(), EXTENSIONS.len());
        for ext in CODE_EXTENSIONS {
            assert!(Language::of_path(&format!("a/b.{ext}")).is_some(), "{ext}");
            let upper = ext.to_ascii_uppercase();
            assert!(Language::of_path(&format!("B.{upper}")).is_some(), "{ext}");
        }
        assert_eq!(Language::of_path("x.pyi"), Some(Language::Python));
        assert_eq!(Language::of_path("x.tsx"), Some(Language::Tsx));
        assert_eq!(Language::of_path("x.md"), None);
        assert_eq!(Language::of_path("Makefile"), None);
    }

    /// Merging of small chunks off: these tests look at each definition of
    /// files made of small ones; `small_chunks_join_their_neighbours` below
    /// looks at the merge.
    fn opts() -> ChunkOptions {
        ChunkOptions {
            max_chars: 1500,
            overlap_lines: 2,
            min_chars: 0,
        }
    }

    #[test]
    fn a_method_is_named_by_its_class_and_signature() {
        // Big enough to be cut into a header and one chunk per method.
        let mut src = String::from(
            "class LineDecoder:\n    \"\"\"Splits bytes into lines.\"\"\"\n\n    def decode(self, data: bytes, final: bool = False) -> list:\n        return data.split(b\"\\n\")\n",
        );
        for i in 0..30 {
            src.push_str(&format!(
                "\n    def helper_{i}(self, x):\n        return x + {i} * len(str(x))\n"
            ));
        }
        let doc = chunk_code("pkg/lines.py", &src, &opts());
        let c = crumbs(&doc);
        assert!(
            c.contains(&"pkg/lines.py > LineDecoder > decode(self, data: bytes, final: bool = False) -> list".to_string()),
            "{c:?}"
        );
    }

    #[test]
    fn a_long_signature_is_cut_between_tokens() {
        // rich 13.9.4's Console.out: its breadcrumb was cut at `highlight: Optiona`.
        let src = "class Console:\n    def out(\n        self,\n        *objects: Any,\n        sep: str = \" \",\n        end: str = \"\\n\",\n        style: Optional[Union[str, Style]] = None,\n        highlight: Optional[bool] = None,\n    ) -> None:\n        pass\n";
        // Big enough to be cut into a header and one chunk per method.
        let mut src = src.to_string();
        for i in 0..30 {
            src.push_str(&format!(
                "\n    def helper_{i}(self, x):\n        return x + {i} * len(str(x))\n"
            ));
        }
        let doc = chunk_code("rich/console.py", &src, &opts());
        let c = crumbs(&doc);
        let out = c
            .iter()
            .find(|c| c.starts_with("rich/console.py > Console > out("))
            .expect("the method's breadcrumb");
        let sig = out.trim_start_matches("rich/console.py > Console > ");
        assert_eq!(
            sig,
            "out( self, *objects: Any, sep: str = \" \", end: str = \"\\n\", style: Optional[Union[str, Style]] = None, highlight: …"
        );
        assert!(sig.chars().count() <= 120, "{sig}");
        assert_eq!(clip_at_token("short", 120), "short");
        assert_eq!(
            clip_at_token("style: str | Style = \"none\"", 24),
            "style: str | Style = …"
        );
        assert_eq!(
            clip_at_token("a(bcdefghijklmnop.qrstuvwxyz)", 24),
            "a(bcdefghijklmnop.…"
        );
        assert_eq!(
            clip_at_token(&"x".repeat(30), 10),
            format!("{}…", "x".repeat(8))
        );
    }

    #[test]
    fn test_modules_and_common_names_are_no_graph_nodes() {
        let src = "pub fn parse_flags(x: u32) -> u32 { x }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn parses_one() {\n        assert_eq!(parse_flags(1), 1);\n    }\n\n    #[test]\n    fn parses_two() {\n        assert_eq!(parse_flags(2), 2);\n    }\n}\n";
        let doc = chunk_code("src/flags.rs", src, &opts());
        assert!(
            has_link(&doc, "parse_flags", Relation::Defines),
            "{:?}",
            doc.links
        );
        assert!(
            !doc.links.iter().any(|l| l.to == "tests"),
            "no node for `mod tests`: {:?}",
            doc.links
        );
    }

    #[test]
    fn a_class_named_like_a_common_word_is_a_node_a_builtin_call_is_not() {
        let py = "class Console:\n    \"\"\"A terminal.\"\"\"\n\n    def log(self, *objects):\n        self.print(*objects)\n\n\nclass Error(Exception):\n    pass\n\n\ndef get_console():\n    return Console()\n";
        let doc = chunk_code("rich/console.py", py, &opts());
        assert!(
            has_link(&doc, "Console", Relation::Defines),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "Error", Relation::Defines),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "Console", Relation::MemberOf),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "Console", Relation::Calls),
            "{:?}",
            doc.links
        );
        // Python's own names and generic methods stay out.
        assert!(
            !has_link(&doc, "Exception", Relation::Implements),
            "{:?}",
            doc.links
        );
        assert!(!has_link(&doc, "log", Relation::Defines), "{:?}", doc.links);
        // A property named `console` defines no second `console` (one key
        // with the class: its node would be split per defining file).
        let status =
            "class Status:\n    @property\n    def console(self):\n        return self._console\n";
        let doc = chunk_code("rich/status.py", status, &opts());
        assert!(
            has_link(&doc, "Status", Relation::Defines),
            "{:?}",
            doc.links
        );
        assert!(
            !has_link(&doc, "console", Relation::Defines),
            "{:?}",
            doc.links
        );

        let js =
            "function report(message) {\n  console.log(message);\n  throw new Error(message);\n}\n";
        let doc = chunk_code("web/report.js", js, &opts());
        assert!(
            has_link(&doc, "report", Relation::Defines),
            "{:?}",
            doc.links
        );
        for name in ["console", "log", "Error"] {
            assert!(
                !doc.links.iter().any(|l| l.to == name),
                "{name}: {:?}",
                doc.links
            );
        }
        // A JavaScript class of the project named like a global is a node,
        // and its own file's references to it are links.
        let js = "class Error {\n  describe() { return 'e'; }\n}\n\nfunction fail() {\n  throw new Error();\n}\n";
        let doc = chunk_code("web/error.js", js, &opts());
        assert!(
            has_link(&doc, "Error", Relation::Defines),
            "{:?}",
            doc.links
        );
        assert!(has_link(&doc, "Error", Relation::Calls), "{:?}", doc.links);
    }

    #[test]
    fn small_chunks_join_their_neighbours() {
        let mut src = String::from("mod binary;\nmod config;\n\nuse std::io;\n\n");
        src.push_str("/// Decides whether a file is binary by its first bytes.\n");
        src.push_str("pub fn is_binary(head: &[u8]) -> bool {\n");
        for i in 0..12 {
            src.push_str(&format!(
                "    let probe{i} = head.iter().take({i}).any(|b| *b == 0);\n"
            ));
        }
        src.push_str("    false\n}\n\npub struct SmartCase;\n\n");
        src.push_str("fn big() {\n");
        for i in 0..60 {
            src.push_str(&format!(
                "    println!(\"line {i} of a function far too long to join\");\n"
            ));
        }
        src.push_str("}\n");
        let merged = chunk_code(
            "src/lib.rs",
            &src,
            &ChunkOptions {
                min_chars: 100,
                ..opts()
            },
        );
        check_lines(&src, &merged);
        // No stub stands alone; the function keeps its name, the stubs ride along.
        for c in &merged.chunks {
            assert!(c.text.trim().len() >= 100, "{c:?}");
        }
        let first = &merged.chunks[0];
        assert!(first.text.starts_with("mod binary;") && first.text.contains("fn is_binary"));
        assert_eq!(
            first.heading_path.last().map(String::as_str),
            Some("is_binary")
        );
        assert!(
            merged
                .chunks
                .iter()
                .any(|c| c.text.contains("struct SmartCase"))
        );
        // The long function stays apart, and symbols still point at their chunks.
        assert!(
            merged
                .chunks
                .iter()
                .any(|c| c.heading_path.last().map(String::as_str) == Some("big"))
        );
        for (name, _, i) in &merged.symbols {
            assert!(
                merged.chunks[*i].text.contains(name.as_str()),
                "{name} -> {i}"
            );
        }
        let unmerged = chunk_code("src/lib.rs", &src, &opts());
        assert!(unmerged.chunks.iter().any(|c| c.text.trim().len() < 100));
    }

    fn crumbs(doc: &CodeDoc) -> Vec<String> {
        doc.chunks.iter().map(|c| c.breadcrumb()).collect()
    }

    fn has_link(doc: &CodeDoc, to: &str, rel: Relation) -> bool {
        doc.links.iter().any(|l| l.to == to && l.rel == rel)
    }

    fn check_lines(text: &str, doc: &CodeDoc) {
        let lines: Vec<&str> = text.lines().collect();
        for c in &doc.chunks {
            let want = lines[c.start_line as usize - 1..c.end_line as usize].join("\n");
            assert_eq!(c.text, want, "{c:?}");
        }
    }

    const RUST_SRC: &str = r#"use std::collections::HashMap;
use crate::cache::Redis;

const MAX_RETRIES: u32 = 3;

/// Checks tokens against the policy.
#[derive(Debug)]
pub struct PolicyController {
    cache: Redis,
}

impl PolicyController {
    /// Validates a JWT.
    pub fn validate_token(&self, token: &str) -> bool {
        let claims = decode_claims(token);
        self.cache.lookup(&claims)
    }
}

impl Display for PolicyController {
    fn fmt(&self, f: &mut Formatter) -> Result {
        write!(f, "policy")
    }
}

fn decode_claims(token: &str) -> Claims {
    Claims::parse(token)
}
"#;

    #[test]
    fn rust_definitions_breadcrumbs_and_links() {
        let doc = chunk_code("src/auth.rs", RUST_SRC, &opts());
        assert_eq!(doc.language, "rust");
        check_lines(RUST_SRC, &doc);
        let c = crumbs(&doc);
        assert!(c.contains(&"src/auth.rs".to_string()), "{c:?}");
        assert!(
            c.contains(&"src/auth.rs > PolicyController".to_string()),
            "{c:?}"
        );
        assert!(
            c.contains(&"src/auth.rs > decode_claims".to_string()),
            "{c:?}"
        );
        // The doc comment and attribute travel with the struct.
        let st = doc
            .chunks
            .iter()
            .find(|c| c.text.contains("pub struct PolicyController"))
            .unwrap();
        assert!(st.text.starts_with("/// Checks tokens"), "{}", st.text);
        assert!(has_link(&doc, "PolicyController", Relation::Defines));
        assert!(has_link(&doc, "validate_token", Relation::Defines));
        assert!(has_link(&doc, "decode_claims", Relation::Calls));
        assert!(has_link(&doc, "lookup", Relation::Calls));
        assert!(has_link(&doc, "Redis", Relation::Imports));
        assert!(has_link(&doc, "Redis", Relation::Uses));
        assert!(has_link(&doc, "Display", Relation::Implements));
        assert!(
            doc.links
                .iter()
                .any(|l| l.from.as_deref() == Some("PolicyController") && l.to == "Display")
        );
        assert!(!has_link(&doc, "new", Relation::Calls));
    }

    #[test]
    fn large_containers_split_into_members_and_big_bodies_at_statements() {
        let mut src = String::from("impl Engine {\n");
        for i in 0..12 {
            src.push_str(&format!(
                "    /// Method {i}.\n    pub fn method_{i}(&self) -> u32 {{\n        let x = {i};\n        helper_{i}(x) + self.other_{i}()\n    }}\n\n"
            ));
        }
        src.push_str("    pub fn huge(&self) {\n");
        for i in 0..80 {
            src.push_str(&format!(
                "        let value_{i} = compute_{i}(self.items[{i}]);\n"
            ));
        }
        src.push_str("    }\n}\n");
        let small = ChunkOptions {
            max_chars: 600,
            ..opts()
        };
        let doc = chunk_code("src/engine.rs", &src, &small);
        check_lines(&src, &doc);
        let c = crumbs(&doc);
        assert!(
            c.contains(&"src/engine.rs > Engine > method_3(&self) -> u32".to_string()),
            "{c:?}"
        );
        let huge: Vec<&Chunk> = doc
            .chunks
            .iter()
            .filter(|c| c.text.contains("compute_"))
            .collect();
        assert!(huge.len() >= 4, "{}", huge.len());
        assert_eq!(huge[0].breadcrumb(), "src/engine.rs > Engine > huge(&self)");
        assert_eq!(
            huge[1].breadcrumb(),
            "src/engine.rs > Engine > pub fn huge(&self)"
        );
        // `impl Engine {` alone is no chunk; the type's links go to its first member.
        assert!(!doc.chunks.iter().any(|c| c.text.trim() == "impl Engine {"));
        let defines_engine = doc
            .links
            .iter()
            .find(|l| l.to == "Engine" && l.rel == Relation::Defines)
            .and_then(|l| l.chunk)
            .unwrap();
        assert!(doc.chunks[defines_engine].text.contains("method_0"));
        for h in &huge {
            assert!(h.text.len() <= 600 + 80, "{}", h.text.len());
        }
        assert!(
            doc.links
                .iter()
                .any(|l| l.to == "Engine" && l.rel == Relation::MemberOf)
        );
    }

    #[test]
    fn every_language_gives_named_chunks() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "app/auth.py",
                "import jwt\nfrom app.cache import Redis\n\n@cached\ndef validate_token(token):\n    \"\"\"Checks a token.\"\"\"\n    return jwt.decode(token)\n\nclass PolicyController(BaseController):\n    def check(self, user):\n        return validate_token(user.token)\n",
                &[
                    "app/auth.py > validate_token",
                    "app/auth.py > PolicyController",
                ],
            ),
            (
                "web/auth.ts",
                "import { Redis } from './cache';\n\nexport interface Policy { allow(user: User): boolean }\n\nexport class PolicyController implements Policy {\n  allow(user: User): boolean {\n    return validateToken(user.token);\n  }\n}\n\nexport const validateToken = (t: string) => {\n  return new Verifier().check(t);\n};\n",
                &[
                    "web/auth.ts > PolicyController",
                    "web/auth.ts > validateToken",
                    "web/auth.ts > Policy",
                ],
            ),
            (
                "web/auth.js",
                "const x = require('x');\n\nfunction validateToken(t) {\n  return verify(t);\n}\n\nclass PolicyController {\n  allow(u) { return validateToken(u.t); }\n}\n",
                &[
                    "web/auth.js > validateToken",
                    "web/auth.js > PolicyController",
                ],
            ),
            (
                "auth/auth.go",
                "package auth\n\nimport \"fmt\"\n\ntype PolicyController struct {\n\tcache Redis\n}\n\n// ValidateToken checks a token.\nfunc (p *PolicyController) ValidateToken(t string) bool {\n\treturn verify(t)\n}\n\nfunc verify(t string) bool {\n\tfmt.Println(t)\n\treturn true\n}\n",
                &[
                    "auth/auth.go > PolicyController",
                    "auth/auth.go > PolicyController > ValidateToken(t string) bool",
                    "auth/auth.go > verify",
                ],
            ),
            (
                "src/Auth.java",
                "package auth;\n\nimport java.util.List;\n\npublic class PolicyController extends BaseController implements Policy {\n  public boolean validateToken(String t) {\n    return Verifier.verify(t);\n  }\n}\n",
                &["src/Auth.java > PolicyController"],
            ),
            (
                "src/Auth.cs",
                "using System;\n\nnamespace App.Auth\n{\n    public class PolicyController : IPolicy\n    {\n        public bool ValidateToken(string t)\n        {\n            return Verifier.Verify(t);\n        }\n    }\n}\n",
                &["src/Auth.cs > PolicyController"],
            ),
        ];
        for (path, src, want) in cases {
            let doc = chunk_code(path, src, &opts());
            check_lines(src, &doc);
            let c = crumbs(&doc);
            for w in *want {
                assert!(c.contains(&w.to_string()), "{path}: {w} not in {c:?}");
            }
            assert!(
                has_link(&doc, "PolicyController", Relation::Defines),
                "{path}: {:?}",
                doc.links
            );
        }
        let java = chunk_code("src/Auth.java", cases[4].1, &opts());
        assert!(
            has_link(&java, "Policy", Relation::Implements),
            "{:?}",
            java.links
        );
        assert!(
            has_link(&java, "verify", Relation::Calls),
            "{:?}",
            java.links
        );
        let cs = chunk_code("src/Auth.cs", cases[5].1, &opts());
        assert!(
            has_link(&cs, "IPolicy", Relation::Implements),
            "{:?}",
            cs.links
        );
        assert!(
            has_link(&cs, "ValidateToken", Relation::Defines),
            "{:?}",
            cs.links
        );
        let py = chunk_code("app/auth.py", cases[0].1, &opts());
        assert!(
            has_link(&py, "BaseController", Relation::Implements),
            "{:?}",
            py.links
        );
        assert!(
            has_link(&py, "validate_token", Relation::Calls),
            "{:?}",
            py.links
        );
        let ts = chunk_code("web/auth.ts", cases[1].1, &opts());
        assert!(has_link(&ts, "Verifier", Relation::Calls), "{:?}", ts.links);
        assert!(
            has_link(&ts, "Policy", Relation::Implements),
            "{:?}",
            ts.links
        );
    }

    #[test]
    fn a_python_script_block_is_its_own_chunk_named_main() {
        let src = "import sys\n\n\ndef parse(markup):\n    \"\"\"Parse console markup into tags.\"\"\"\n    return [t for t in markup.split('[') if t]\n\n\nif __name__ == \"__main__\":  # pragma: no cover\n    import argparse\n\n    parser = argparse.ArgumentParser(description=\"Render markup\")\n    parser.add_argument(\"path\", help=\"the file to render\")\n    args = parser.parse_args()\n    print(parse(open(args.path).read()))\n";
        let doc = chunk_code("rich/markup.py", src, &opts());
        let main: Vec<&Chunk> = doc
            .chunks
            .iter()
            .filter(|c| c.heading_path.last().map(String::as_str) == Some(MAIN_BLOCK))
            .collect();
        assert_eq!(main.len(), 1, "{:?}", crumbs(&doc));
        assert!(main[0].text.starts_with("if __name__ == \"__main__\":"));
        assert!(main[0].text.contains("parser.parse_args()"));
        assert_eq!(main[0].heading_path, vec!["rich/markup.py", "__main__"]);
        // The function above stays its own definition, not part of the block.
        assert!(crumbs(&doc).iter().any(|c| c == "rich/markup.py > parse"));
        // Any other `if` at the top is plain leftover code, and other
        // languages have no such block.
        let other = chunk_code(
            "a.py",
            "if DEBUG == \"__main__\":\n    import logging\n    logging.basicConfig(level=logging.DEBUG)\n",
            &opts(),
        );
        assert!(other.chunks.iter().all(|c| c.heading_path.len() == 1));
    }

    #[test]
    fn unknown_languages_get_overlapping_line_windows() {
        let src: String = (0..100)
            .map(|i| format!("line number {i} of a shell script\n"))
            .collect();
        let doc = chunk_code("run.sh", &src, &opts());
        assert_eq!(doc.language, "text");
        check_lines(&src, &doc);
        assert!(doc.chunks.len() > 1);
        for w in doc.chunks.windows(2) {
            assert_eq!(w[1].start_line, w[0].end_line - 1, "two lines of overlap");
        }
        assert_eq!(doc.chunks.last().unwrap().end_line, 100);
    }

    #[test]
    fn generated_and_minified_files_are_recognised() {
        assert!(generated_reason("dist/app.min.js", "x").is_some());
        assert!(generated_reason("api/x.pb.go", "package x").is_some());
        assert!(generated_reason("a.rs", "// @generated by build.rs\nfn a() {}").is_some());
        assert!(generated_reason("a.go", "// Code generated by protoc. DO NOT EDIT.\n").is_some());
        let minified = format!("var a={};\n", "x".repeat(6000));
        assert!(generated_reason("app.js", &minified).is_some());
        assert!(generated_reason("src/lib.rs", RUST_SRC).is_none());
    }

    #[test]
    fn broken_code_still_chunks() {
        let src = "fn ok() {\n    works();\n}\n\nfn broken( {\n    let x = ;\n";
        let doc = chunk_code("src/broken.rs", src, &opts());
        check_lines(src, &doc);
        assert!(!doc.chunks.is_empty());
        assert!(has_link(&doc, "works", Relation::Calls));
    }

    #[test]
    fn the_enclosing_definition_is_the_smallest_that_holds_the_lines() {
        let src = "use std::io;\n\
                   \n\
                   /// A gate.\n\
                   pub struct Gate {\n\
                   \x20   limit: usize,\n\
                   }\n\
                   \n\
                   impl Gate {\n\
                   \x20   /// Lets n through?\n\
                   \x20   #[inline]\n\
                   \x20   pub fn admit(&self, n: usize) -> bool {\n\
                   \x20       let ok = n < self.limit;\n\
                   \x20       ok\n\
                   \x20   }\n\
                   \n\
                   \x20   fn close(&mut self) {\n\
                   \x20       self.limit = 0;\n\
                   \x20   }\n\
                   }\n";
        let def = |a, b| enclosing_definition("src/gate.rs", src, a, b);
        let admit = def(12, 12).expect("a line of admit");
        assert_eq!(
            (
                admit.kind,
                admit.name.as_str(),
                admit.start_line,
                admit.end_line
            ),
            ("function", "admit", 9, 14),
            "doc comment and attribute included"
        );
        assert_eq!(def(9, 14), Some(admit.clone()), "the chunk of admit itself");
        let imp = def(12, 17).expect("two methods");
        assert_eq!((imp.kind, imp.start_line, imp.end_line), ("impl", 8, 19));
        let gate = def(5, 5).expect("a field");
        assert_eq!((gate.kind, gate.name.as_str()), ("struct", "Gate"));
        assert_eq!((gate.start_line, gate.end_line), (3, 6));
        assert_eq!(def(1, 1), None, "an import belongs to no definition");
        assert_eq!(enclosing_definition("run.sh", "echo hi\n", 1, 1), None);

        let py = "import os\n\n\nclass Store:\n    @cached\n    def get(self, key):\n        return self.data[key]\n";
        let get = enclosing_definition("store.py", py, 7, 7).expect("python method");
        assert_eq!(
            (get.name.as_str(), get.start_line, get.end_line),
            ("get", 5, 7)
        );
        let ts = "import x from 'y';\n\nexport function verify(token: string) {\n  return check(token);\n}\n";
        let f = enclosing_definition("auth.ts", ts, 4, 4).expect("exported function");
        assert_eq!(
            (f.name.as_str(), f.start_line, f.end_line),
            ("verify", 3, 5)
        );
    }
}
