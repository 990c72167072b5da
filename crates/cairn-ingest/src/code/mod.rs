//! Code files → chunks and links, by syntax tree (tree-sitter, official grammars).
//!
//! One chunk per definition: function, method, class/struct/impl/trait/
//! interface/enum, with the comments and attributes right above it (its doc
//! comment). A container (class, impl, trait, module) with two members or
//! more, or larger than `max_chars`, gives a header chunk (its signature and
//! fields up to the first member) and one chunk per member; one with a single
//! member that fits in `max_chars` is one chunk. A
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

//!
//! Each language (family) is one module here: its [`Spec`] (which node
//! kinds define, contain, call, import), its builtins and its special cases
//! (Rust's `impl` naming, Python's `__main__` block, Go's receivers,
//! JavaScript's `const f = () => {}`). A new language is one new module,
//! its [`Language`] variant with its extensions in [`EXTENSIONS`], and its
//! arm in [`Language::spec`] and [`Language::grammar`].

mod builder;
mod c;
#[cfg(test)]
mod check;
mod cpp;
mod csharp;
mod dart;
mod elixir;
mod go;
mod haskell;
mod hcl;
mod highlight;
mod java;
mod js;
mod julia;
mod kotlin;
mod lua;
mod objc;
mod ocaml;
mod perl;
mod php;
mod python;
mod r;
mod ruby;
mod rust;
mod scala;
mod shell;
mod sql;
mod swift;
mod zig;

use std::collections::HashSet;

use cairn_core::{Chunk, Link};
use tree_sitter::{Node, Parser};

use self::builder::{Builder, attached_start, end_row, visit_where};
use crate::markdown::ChunkOptions;

pub use self::highlight::{MAX_HIGHLIGHT_BYTES, Token, TokenClass, highlight};
pub use self::python::MAIN_BLOCK;

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
    /// C (`.c`, `.h`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`; a `.h` whose
    /// text is C++, [`Language::of_file`]).
    Cpp,
    /// Ruby (`.rb`, `.rake`, `.gemspec`).
    Ruby,
    /// PHP (`.php`).
    Php,
    /// Bash and POSIX shell (`.sh`, `.bash`, `.zsh`, `.ksh`).
    Shell,
    /// Lua (`.lua`).
    Lua,
    /// Kotlin (`.kt`, `.kts`).
    Kotlin,
    /// Swift (`.swift`).
    Swift,
    /// Zig (`.zig`).
    Zig,
    /// Perl (`.pl`, `.pm`, `.t`).
    Perl,
    /// SQL (`.sql`): schema definitions.
    Sql,
    /// HCL and Terraform (`.tf`, `.tfvars`, `.hcl`).
    Hcl,
    /// Objective-C (`.m`, `.mm`; a `.h` that reads as it).
    ObjC,
    /// OCaml (`.ml`).
    OCaml,
    /// An OCaml interface (`.mli`).
    OCamlInterface,
    /// Scala (`.scala`, `.sc`).
    Scala,
    /// Elixir (`.ex`, `.exs`).
    Elixir,
    /// Haskell (`.hs`).
    Haskell,
    /// Dart (`.dart`).
    Dart,
    /// R (`.R`, `.r`).
    R,
    /// Julia (`.jl`).
    Julia,
}

/// Each file extension (lower case) of a language with a syntax-tree
/// chunker, and the language: the one table [`Language::of_path`] and
/// [`CODE_EXTENSIONS`] are read from.
const EXTENSIONS: [(&str, Language); 54] = [
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
    ("c", Language::C),
    ("h", Language::C),
    ("cc", Language::Cpp),
    ("cpp", Language::Cpp),
    ("cxx", Language::Cpp),
    ("hpp", Language::Cpp),
    ("hh", Language::Cpp),
    ("hxx", Language::Cpp),
    ("rb", Language::Ruby),
    ("rake", Language::Ruby),
    ("gemspec", Language::Ruby),
    ("php", Language::Php),
    ("sh", Language::Shell),
    ("bash", Language::Shell),
    ("zsh", Language::Shell),
    ("ksh", Language::Shell),
    ("lua", Language::Lua),
    ("kt", Language::Kotlin),
    ("kts", Language::Kotlin),
    ("swift", Language::Swift),
    ("zig", Language::Zig),
    ("pl", Language::Perl),
    ("pm", Language::Perl),
    ("t", Language::Perl),
    ("sql", Language::Sql),
    ("tf", Language::Hcl),
    ("tfvars", Language::Hcl),
    ("hcl", Language::Hcl),
    ("m", Language::ObjC),
    ("mm", Language::ObjC),
    ("ml", Language::OCaml),
    ("mli", Language::OCamlInterface),
    ("scala", Language::Scala),
    ("sc", Language::Scala),
    ("ex", Language::Elixir),
    ("exs", Language::Elixir),
    ("hs", Language::Haskell),
    ("dart", Language::Dart),
    ("r", Language::R),
    ("jl", Language::Julia),
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

    /// The language of a file, by extension and, for a `.h`, by its text:
    /// C++ when it reads as C++ (a namespace, a class, a template), C
    /// otherwise. What every reader here goes by.
    pub fn of_file(path: &str, text: &str) -> Option<Language> {
        let Some(lang) = Language::of_path(path) else {
            return Language::of_script(path, text);
        };
        let ext = path.rsplit_once('.').map_or("", |(_, ext)| ext);
        if ext.eq_ignore_ascii_case("m") && !objc::looks_like_objc(text) {
            // MATLAB and Octave write `.m` too.
            return None;
        }
        let header = ext.eq_ignore_ascii_case("h");
        Some(if header && objc::looks_like_objc(text) {
            Language::ObjC
        } else if header && cpp::looks_like_cpp(text) {
            Language::Cpp
        } else {
            lang
        })
    }

    /// The language of a file without an extension: by its name (`Gemfile`,
    /// `Rakefile`) or by the interpreter its `#!` line names
    /// (`#!/usr/bin/env bash`, `#!/usr/bin/python3`): scripts in `bin/`.
    pub fn of_script(path: &str, text: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        if name.contains('.') {
            return None;
        }
        if matches!(
            name,
            "Gemfile" | "Rakefile" | "Guardfile" | "Vagrantfile" | "Podfile" | "Brewfile"
        ) {
            return Some(Language::Ruby);
        }
        let first = text.lines().next()?.strip_prefix("#!")?;
        let mut words = first.split_whitespace();
        let mut program = words.next()?.rsplit('/').next()?;
        if program == "env" {
            // `env -S python3 -u`: the first word that is not an option.
            program = words.find(|w| !w.starts_with('-'))?;
        }
        let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match program {
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "mksh" => Language::Shell,
            "python" | "pypy" => Language::Python,
            "ruby" => Language::Ruby,
            "node" | "nodejs" => Language::JavaScript,
            "lua" | "luajit" => Language::Lua,
            "php" => Language::Php,
            "perl" => Language::Perl,
            "Rscript" => Language::R,
            "julia" => Language::Julia,
            "elixir" => Language::Elixir,
            "scala" => Language::Scala,
            "runghc" | "runhaskell" => Language::Haskell,
            _ => return None,
        })
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
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Shell => "shell",
            Language::Lua => "lua",
            Language::Kotlin => "kotlin",
            Language::Swift => "swift",
            Language::Zig => "zig",
            Language::Perl => "perl",
            Language::Sql => "sql",
            Language::Hcl => "hcl",
            Language::ObjC => "objc",
            Language::OCaml | Language::OCamlInterface => "ocaml",
            Language::Scala => "scala",
            Language::Elixir => "elixir",
            Language::Haskell => "haskell",
            Language::Dart => "dart",
            Language::R => "r",
            Language::Julia => "julia",
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
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Language::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Language::Shell => tree_sitter_bash::LANGUAGE.into(),
            Language::Lua => tree_sitter_lua::LANGUAGE.into(),
            Language::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
            Language::Swift => tree_sitter_swift::LANGUAGE.into(),
            Language::Zig => tree_sitter_zig::LANGUAGE.into(),
            Language::Perl => ts_parser_perl::LANGUAGE.into(),
            Language::Sql => tree_sitter_sequel::LANGUAGE.into(),
            Language::Hcl => tree_sitter_hcl::LANGUAGE.into(),
            Language::ObjC => tree_sitter_objc::LANGUAGE.into(),
            Language::OCaml => tree_sitter_ocaml::LANGUAGE_OCAML.into(),
            Language::OCamlInterface => tree_sitter_ocaml::LANGUAGE_OCAML_INTERFACE.into(),
            Language::Scala => tree_sitter_scala::LANGUAGE.into(),
            Language::Elixir => tree_sitter_elixir::LANGUAGE.into(),
            Language::Haskell => tree_sitter_haskell::LANGUAGE.into(),
            Language::Dart => tree_sitter_dart::LANGUAGE.into(),
            Language::R => tree_sitter_r::LANGUAGE.into(),
            Language::Julia => tree_sitter_julia::LANGUAGE.into(),
        }
    }

    /// The syntax tree of a file of this language: the one way every reader
    /// here (chunker, enclosing definition, highlighter, parsing check)
    /// parses. For C, C++ and Objective-C, when the text as written leaves
    /// lines parsed wrong ([`broken_lines`]: under error nodes, or in a block
    /// where only declarations may stand), the texts of
    /// [`c::conditional_variants`] are parsed too (of C++'s text without its
    /// class-head and specifier macros, [`cpp::without_class_macros`]), and
    /// one of them wins when it at least halves those lines and by ten lines
    /// or more: a small error costs a definition or two, a variant
    /// that keeps one branch costs the other branches' names, so only a
    /// large cut pays. Its byte offsets are the original's, so names and
    /// lines are read from `text` as always. `None` when the grammar cannot
    /// be loaded.
    fn parse(self, text: &str) -> Option<tree_sitter::Tree> {
        let mut parser = Parser::new();
        parser.set_language(&self.grammar()).ok()?;
        // C++ class heads lose their export macros first (`class API Foo`).
        let unmacroed = match self {
            Language::Cpp => cpp::without_class_macros(text),
            Language::ObjC => {
                let unmacroed = cpp::without_class_macros(text);
                let base = unmacroed.as_deref().unwrap_or(text);
                objc::without_macro_calls(base).or(unmacroed)
            }
            // psql's `\echo … \quit` lines are no SQL.
            Language::Sql => sql::without_meta_commands(text),
            _ => None,
        };
        let text = unmacroed.as_deref().unwrap_or(text);
        let tree = parser.parse(text, None)?;
        if !matches!(self, Language::C | Language::Cpp | Language::ObjC) {
            return Some(tree);
        }
        let mut best = (broken_lines(tree.root_node()), tree);
        if best.0 < MIN_ERROR_CUT {
            return Some(best.1);
        }
        for variant in c::conditional_variants(text) {
            if let Some(t) = parser.parse(&variant, None) {
                let broken = broken_lines(t.root_node());
                if broken * 2 <= best.0 && best.0 - broken >= MIN_ERROR_CUT {
                    best = (broken, t);
                }
            }
        }
        Some(best.1)
    }

    fn spec(self) -> &'static Spec {
        match self {
            Language::Rust => &rust::SPEC,
            Language::Python => &python::SPEC,
            Language::TypeScript | Language::Tsx | Language::JavaScript => &js::SPEC,
            Language::Go => &go::SPEC,
            Language::Java => &java::SPEC,
            Language::CSharp => &csharp::SPEC,
            Language::C => &c::SPEC,
            Language::Cpp => &cpp::SPEC,
            Language::Ruby => &ruby::SPEC,
            Language::Php => &php::SPEC,
            Language::Shell => &shell::SPEC,
            Language::Lua => &lua::SPEC,
            Language::Kotlin => &kotlin::SPEC,
            Language::Swift => &swift::SPEC,
            Language::Zig => &zig::SPEC,
            Language::Perl => &perl::SPEC,
            Language::Sql => &sql::SPEC,
            Language::Hcl => &hcl::SPEC,
            Language::ObjC => &objc::SPEC,
            Language::OCaml | Language::OCamlInterface => &ocaml::SPEC,
            Language::Scala => &scala::SPEC,
            Language::Elixir => &elixir::SPEC,
            Language::Haskell => &haskell::SPEC,
            Language::Dart => &dart::SPEC,
            Language::R => &r::SPEC,
            Language::Julia => &julia::SPEC,
        }
    }
}

/// What the syntax tree of one language looks like to the chunker.
pub(crate) struct Spec {
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
    /// Kinds listing supertypes (`implements`, `extends`, base lists), and
    /// the kind of parent they must have to (Python's `argument_list` lists
    /// bases only under a `class_definition`).
    heritage: &'static [(&'static str, Option<&'static str>)],
    /// Identifier kinds that name a type where it is used.
    type_refs: &'static [&'static str],
    /// The language's own names (builtins, standard types), too common to
    /// link on: compared as written.
    builtins: &'static [&'static str],
    /// Functions and methods are capitalised (`Println`, `ToString`): a
    /// called name is compared case-folded with [`COMMON_NAMES`].
    capital_calls: bool,
    /// A definition's name and, for Rust's `impl Trait for Type`, the trait;
    /// `None` when the node defines nothing after all (`const x = 1`).
    name: fn(Node<'_>, &str) -> Option<DefName>,
    /// The body of a definition, cut between its statements or members when
    /// too large (JavaScript's `const f = () => {…}` holds it in its value).
    body: for<'t> fn(Node<'t>) -> Option<Node<'t>>,
    /// The type a definition belongs to though it is written outside it
    /// (Go's method receiver).
    owner: fn(Node<'_>, &str) -> Option<String>,
    /// Whether a top-level node is the script part of a module, chunked on
    /// its own as [`MAIN_BLOCK`] (Python's `if __name__ == "__main__":`).
    script_block: fn(Node<'_>, &str) -> bool,
    /// Whether a definition is hidden inside its type though its name does
    /// not say so (Ruby's methods after a bare `private`): its `defines` link
    /// weighs [`HIDDEN_DEFINES_WEIGHT`], and a name's question prefers the
    /// public definition of it.
    hidden: fn(Node<'_>, &str) -> bool,
    /// Whether a function is a type's container after all: Zig's generics
    /// are functions that return a type (`fn BitReader(comptime T: type)
    /// type { … return struct { … }; }`), whose members are definitions
    /// with the function's name as their parent. [`Spec::body`] gives that
    /// type's declaration.
    makes_type: fn(Node<'_>) -> bool,
    /// The kind of symbol a node of a [`Spec::defs`] kind defines, given the
    /// label listed there; `None` when it defines none after all. Where one
    /// node kind defines several kinds of symbol (Elixir's `call`: a
    /// `defmodule` is a module, a `def` a function, an `import` nothing).
    kind: fn(Node<'_>, &str, &'static str) -> Option<&'static str>,
}

impl Spec {
    /// The kind of symbol `node` defines: its kind listed in
    /// [`Spec::defs`], as [`Spec::kind`] reads it; `None` for a node that
    /// defines nothing. What the chunker and the parsing check go by.
    fn def_kind(&self, node: Node<'_>, src: &str) -> Option<&'static str> {
        self.defs
            .iter()
            .find(|(k, _)| *k == node.kind())
            .and_then(|(_, label)| (self.kind)(node, src, label))
    }
}

/// [`Spec::kind`] of languages whose node kinds each define one kind of
/// symbol: the label listed in [`Spec::defs`].
fn listed_kind(_: Node<'_>, _: &str, label: &'static str) -> Option<&'static str> {
    Some(label)
}

/// The weight of a hidden definition's `defines` link (a public one's is
/// [`Relation::Defines`]' 1).
pub(crate) const HIDDEN_DEFINES_WEIGHT: f32 = 0.5;

/// The weight of the `defines` link of a definition whose name is too
/// common to be a graph node ([`is_common`]: a method `clone`, `remove` or
/// `new`): the names retriever still finds it by its name (a query `clone`
/// wants `List:clone`), but the graph skips a link of no weight, so the
/// name does not join every class that has one.
pub(crate) const NAME_ONLY_DEFINES_WEIGHT: f32 = 0.0;

/// [`Spec::wrappers`]' field for a wrapper whose definition is its last
/// named child, in no field (C++'s `template_declaration`).
pub(crate) const LAST_NAMED_CHILD: &str = "";

/// [`Spec::wrappers`]' field for a member declaration that is only a type
/// with its body (C++'s `class handle { … };` inside a class is a
/// `field_declaration` of no declarator): the type is the definition.
pub(crate) const TYPE_ALONE: &str = "type?";

/// [`Spec::calls`]' field for a call whose callee is its first named child,
/// in no field (Kotlin's and Swift's `call_expression`).
pub(crate) const FIRST_NAMED_CHILD: &str = "^";

/// The node in a wrapper's or a call's `field`: its last named child for
/// [`LAST_NAMED_CHILD`], its first for [`FIRST_NAMED_CHILD`].
fn wrapped<'t>(node: Node<'t>, field: &str) -> Option<Node<'t>> {
    match field {
        LAST_NAMED_CHILD => {
            node.named_child(u32::try_from(node.named_child_count().checked_sub(1)?).ok()?)
        }
        FIRST_NAMED_CHILD => node.named_child(0),
        TYPE_ALONE => {
            if node.child_by_field_name("declarator").is_some() {
                return None;
            }
            let ty = node.child_by_field_name("type")?;
            (ty.kind().ends_with("_specifier") && ty.child_by_field_name("body").is_some())
                .then_some(ty)
        }
        _ => node.child_by_field_name(field),
    }
}

/// A definition's name and, for Rust's `impl Trait for Type`, the trait.
type DefName = (String, Option<String>);

/// The name in a definition's `name` field: [`Spec::name`] of most kinds.
fn field_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = node.child_by_field_name("name")?;
    Some((text_of(name, src).to_string(), None))
}

/// The `body` field of a definition: [`Spec::body`] of most kinds.
fn field_body(node: Node<'_>) -> Option<Node<'_>> {
    node.child_by_field_name("body")
}

/// [`Spec::owner`] of languages whose members sit inside their type.
fn no_owner(_: Node<'_>, _: &str) -> Option<String> {
    None
}

/// [`Spec::hidden`] of languages whose hidden definitions say so in their
/// names (`_x`) or not at all.
fn never_hidden(_: Node<'_>, _: &str) -> bool {
    false
}

/// [`Spec::makes_type`] of languages whose types are declared, not made.
fn makes_no_type(_: Node<'_>) -> bool {
    false
}

/// [`Spec::script_block`] of languages without one.
fn no_script_block(_: Node<'_>, _: &str) -> bool {
    false
}

/// The source text of a node.
fn text_of<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    node.utf8_text(src.as_bytes()).unwrap_or("")
}

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
/// longer than 300 characters, or any line over 5,000 characters (counted
/// in characters, so text in any script is measured alike).
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
    // Characters, not bytes: a line of Chinese strings is three bytes a
    // character, and 120 of them are no minified line.
    let lines = text.lines().count().max(1);
    if text.chars().count() / lines > 300 || text.lines().any(|l| l.chars().count() > 5000) {
        return Some("minified (very long lines)");
    }
    None
}

/// The fewest lines under error nodes a C variant must cut to be parsed
/// instead of the text as written ([`Language::parse`]).
const MIN_ERROR_CUT: usize = 10;

/// Lines a C-family parse got wrong: those under error nodes, and those of
/// a block (`{ … }`) standing where only declarations may (the file's top,
/// a namespace's body, a preprocessor branch among them). Such a block is a
/// class whose head the grammar lost (fmt's `class format_arg_store` with an
/// `#if` between its name and its base): no error node says so, yet every
/// definition inside it, to the end of the file, is lost.
fn broken_lines(root: Node<'_>) -> usize {
    fn stray_blocks(node: Node<'_>) -> usize {
        let mut cursor = node.walk();
        node.children(&mut cursor)
            .map(|c| match c.kind() {
                "compound_statement" => c.end_position().row - c.start_position().row + 1,
                "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif"
                | "preproc_elifdef"
                | "declaration_list"
                | "namespace_definition"
                | "linkage_specification" => stray_blocks(c),
                _ => 0,
            })
            .sum()
    }
    error_lines(root) + stray_blocks(root)
}

/// How many lines error nodes of a syntax tree span (each counted once per
/// outermost error node).
fn error_lines(node: Node<'_>) -> usize {
    if node.is_error() {
        return node.end_position().row - node.start_position().row + 1;
    }
    if !node.has_error() {
        return 0;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).map(error_lines).sum()
}

/// What kind of file a path that is not a doc or a memory is, by its name
/// alone, for `cairn status`: `config` (a configuration or build file read
/// by its sections), its language's name (`rust`), or `other text` (line
/// windows; an extensionless script is only known by its text, so it counts
/// here).
pub fn file_kind(path: &str) -> &'static str {
    if crate::notebook::is_notebook(path) {
        "notebook"
    } else if crate::config::ConfigKind::of_path(path).is_some() {
        "config"
    } else if let Some(lang) = Language::of_path(path).or_else(|| Language::of_script(path, "")) {
        lang.name()
    } else {
        "other text"
    }
}

/// Cuts a code file into chunks and links; languages without a grammar get
/// [`chunk_lines`].
pub fn chunk_code(path: &str, text: &str, opts: &ChunkOptions) -> CodeDoc {
    // A notebook: its cells (`crate::notebook`); one that is no JSON, line windows.
    if crate::notebook::is_notebook(path)
        && let Some(doc) = crate::notebook::chunk_notebook(path, text, opts)
    {
        return doc;
    }
    // Configuration and build files: by their sections (`crate::config`).
    if let Some(kind) = crate::config::ConfigKind::of_path(path) {
        // An environment template's values are redacted before anything
        // of it is stored.
        let redacted;
        let text = if kind == crate::config::ConfigKind::Env {
            redacted = crate::config::redact_env(text);
            redacted.as_str()
        } else {
            text
        };
        let found = crate::config::sections(kind, text);
        return CodeDoc {
            language: kind.name(),
            chunks: crate::markdown::chunk_sections(path, text, opts, found),
            ..CodeDoc::default()
        };
    }
    let Some(lang) = Language::of_file(path, text) else {
        return CodeDoc {
            language: "text",
            chunks: chunk_lines(path, text, opts),
            ..CodeDoc::default()
        };
    };
    let Some(tree) = lang.parse(text) else {
        tracing::debug!(path, "no syntax tree: line windows");
        return CodeDoc {
            language: lang.name(),
            chunks: chunk_lines(path, text, opts),
            ..CodeDoc::default()
        };
    };
    build_chunks(path, text, lang, &tree, opts, true)
}

/// A code file parsed once, for a caller that asks it several things (the
/// history walk: a changed file's definitions, then the one holding each
/// hunk they do not cover), each the same as [`chunk_code`] and
/// [`enclosing_definition`] would answer.
pub struct ParsedCode<'t> {
    path: &'t str,
    text: &'t str,
    lang: Language,
    tree: tree_sitter::Tree,
}

impl<'t> ParsedCode<'t> {
    /// The file parsed; `None` when it has no grammar here or no tree, or
    /// when [`chunk_code`] reads it otherwise (a notebook, a config file).
    pub fn parse(path: &'t str, text: &'t str) -> Option<ParsedCode<'t>> {
        if crate::notebook::is_notebook(path) || crate::config::ConfigKind::of_path(path).is_some()
        {
            return None;
        }
        let lang = Language::of_file(path, text)?;
        let tree = lang.parse(text)?;
        Some(ParsedCode {
            path,
            text,
            lang,
            tree,
        })
    }

    /// Its chunks and definitions as [`chunk_code`] cuts them, without the
    /// links (calls, imports, supertypes) that only the graph reads.
    pub fn chunks_without_links(&self, opts: &ChunkOptions) -> CodeDoc {
        build_chunks(self.path, self.text, self.lang, &self.tree, opts, false)
    }

    /// [`enclosing_definition`] of lines `start_line..=end_line`.
    pub fn enclosing_definition(&self, start_line: u32, end_line: u32) -> Option<Definition> {
        enclosing_in(
            self.path, self.text, self.lang, &self.tree, start_line, end_line,
        )
    }
}

/// [`chunk_code`] of a parsed file, its links read when `links`.
fn build_chunks(
    path: &str,
    text: &str,
    lang: Language,
    tree: &tree_sitter::Tree,
    opts: &ChunkOptions,
    links: bool,
) -> CodeDoc {
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
    if links {
        b.references(tree.root_node());
    }
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
    let lang = Language::of_file(path, text)?;
    let tree = lang.parse(text)?;
    enclosing_in(path, text, lang, &tree, start_line, end_line)
}

/// [`enclosing_definition`] in a parsed file.
fn enclosing_in(
    path: &str,
    text: &str,
    lang: Language,
    tree: &tree_sitter::Tree,
    start_line: u32,
    end_line: u32,
) -> Option<Definition> {
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
    // Only nodes that reach the lines asked for can hold them, and only
    // their children can (a node's children end where it does or before).
    let reaches = |n: Node<'_>| end_row(n) >= last;
    visit_where(tree.root_node(), &reaches, &mut |n| {
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
                .any(|(k, f)| *k == p.kind() && wrapped(p, f) == Some(outer))
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

#[cfg(test)]
mod tests {
    use super::builder::clip_at_token;
    use super::rust::tests::RUST_SRC;
    use super::*;
    use cairn_core::Relation;

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
        assert_eq!(Language::of_path("lib/lz4.h"), Some(Language::C));
        assert_eq!(Language::of_path("x.md"), None);
        assert_eq!(Language::of_path("Makefile"), None);
        // Scripts without an extension, by their `#!` line or their name.
        for (path, text, want) in [
            (
                "bin/deploy",
                "#!/usr/bin/env bash\nset -e\n",
                Some(Language::Shell),
            ),
            ("bin/run", "#!/bin/sh\n", Some(Language::Shell)),
            (
                "scripts/gen",
                "#!/usr/bin/python3.11 -u\n",
                Some(Language::Python),
            ),
            (
                "tool",
                "#!/usr/bin/env -S python3 -u\n",
                Some(Language::Python),
            ),
            ("cli", "#!/usr/bin/env node\n", Some(Language::JavaScript)),
            ("Gemfile", "source 'x'\n", Some(Language::Ruby)),
            ("bin/x", "#!/usr/bin/perl -w\n", Some(Language::Perl)),
            ("bin/y", "#!/usr/bin/tclsh\n", None),
            ("LICENSE", "MIT License\n", None),
            ("run.tcl", "#!/bin/sh\n", None),
        ] {
            assert_eq!(Language::of_file(path, text), want, "{path}");
        }
    }

    /// Merging of small chunks off: these tests look at each definition of
    /// files made of small ones; `small_chunks_join_their_neighbours` below
    /// looks at the merge.
    pub(super) fn opts() -> ChunkOptions {
        ChunkOptions {
            max_chars: 1500,
            overlap_lines: 2,
            min_chars: 0,
        }
    }

    #[test]
    fn a_breadcrumb_leaves_the_signatures_comments_out() {
        // Issue 61 (14): `def __init__( # noqa: PLR0912, PLR0915 self, …`.
        let mut src = "class Renderer:\n    def __init__(  # noqa: PLR0912, PLR0915\n        self,\n        colors: bool = True,  # on a tty\n    ) -> None:\n        self.colors = colors\n".to_string();
        for i in 0..30 {
            src.push_str(&format!(
                "\n    def helper_{i}(self, x):\n        return x + {i} * len(str(x))\n"
            ));
        }
        let doc = chunk_code("dev.py", &src, &opts());
        let c = crumbs(&doc);
        let init = c
            .iter()
            .find(|c| c.starts_with("dev.py > Renderer > __init__("))
            .expect("the method's breadcrumb");
        assert_eq!(
            init, "dev.py > Renderer > __init__( self, colors: bool = True, ) -> None",
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
        assert!(
            !has_graph_link(&doc, "log", Relation::Defines),
            "{:?}",
            doc.links
        );
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
            !has_graph_link(&doc, "console", Relation::Defines),
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

    pub(super) fn crumbs(doc: &CodeDoc) -> Vec<String> {
        doc.chunks.iter().map(|c| c.breadcrumb()).collect()
    }

    pub(super) fn has_link(doc: &CodeDoc, to: &str, rel: Relation) -> bool {
        doc.links.iter().any(|l| l.to == to && l.rel == rel)
    }

    /// Whether `doc` has a link to `to` by `rel` that the graph keeps (a
    /// weight above 0: a common name's definition is there for the names
    /// retriever only).
    pub(super) fn has_graph_link(doc: &CodeDoc, to: &str, rel: Relation) -> bool {
        doc.links
            .iter()
            .any(|l| l.to == to && l.rel == rel && l.weight > 0.0)
    }

    /// Whether the chunk named `crumb` links to `to` by `rel`.
    pub(super) fn has_link_from(doc: &CodeDoc, crumb: &str, to: &str, rel: Relation) -> bool {
        let chunk = doc.chunks.iter().position(|c| c.breadcrumb() == crumb);
        assert!(chunk.is_some(), "no chunk {crumb} in {:?}", crumbs(doc));
        doc.links
            .iter()
            .any(|l| l.chunk == chunk && l.to == to && l.rel == rel)
    }

    /// Asserts that each breadcrumb of `want` names a chunk of `doc`.
    pub(super) fn assert_crumbs(doc: &CodeDoc, want: &[&str]) {
        let c = crumbs(doc);
        for w in want {
            assert!(c.iter().any(|x| x == w), "{w} not in {c:?}");
        }
    }

    /// The chunk whose breadcrumb is `crumb`.
    pub(super) fn chunk_named<'d>(doc: &'d CodeDoc, crumb: &str) -> &'d Chunk {
        doc.chunks
            .iter()
            .find(|c| c.breadcrumb() == crumb)
            .unwrap_or_else(|| panic!("no chunk {crumb} in {:?}", crumbs(doc)))
    }

    /// Asserts that `doc` defines each (name, kind) of `want`.
    pub(super) fn assert_symbols(doc: &CodeDoc, want: &[(&str, &str)]) {
        let kinds: Vec<(&str, &str)> = doc
            .symbols
            .iter()
            .map(|(n, k, _)| (n.as_str(), *k))
            .collect();
        for w in want {
            assert!(kinds.contains(w), "{w:?} not in {kinds:?}");
        }
    }

    /// `src` chunked as `path` in chunks of at most `max_chars`: read as
    /// `language`, every chunk's text its lines as written.
    pub(super) fn chunk_small(path: &str, src: &str, max_chars: usize, language: &str) -> CodeDoc {
        let small = ChunkOptions {
            max_chars,
            ..opts()
        };
        let doc = chunk_code(path, src, &small);
        assert_eq!(doc.language, language, "{path}");
        check_lines(src, &doc);
        doc
    }

    pub(super) fn check_lines(text: &str, doc: &CodeDoc) {
        let lines: Vec<&str> = text.lines().collect();
        for c in &doc.chunks {
            let want = lines[c.start_line as usize - 1..c.end_line as usize].join("\n");
            assert_eq!(c.text, want, "{c:?}");
        }
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
    fn unknown_languages_get_overlapping_line_windows() {
        let src: String = (0..100)
            .map(|i| format!("line number {i} of a Tcl script\n"))
            .collect();
        let doc = chunk_code("run.tcl", &src, &opts());
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

    /// Text in a script of three UTF-8 bytes a character is measured as
    /// the same text in English: by characters.
    #[test]
    fn cjk_code_is_not_minified() {
        let zh = "用户登录失败次数过多时锁定账户并通知管理员检查日志";
        let en = "lock the account after too many failed logins, tell an admin";
        for s in [zh, en] {
            let line: String = s.chars().cycle().take(120).collect();
            let py: String = (0..40).map(|i| format!("MSG_{i} = \"{line}\"\n")).collect();
            assert_eq!(generated_reason("app/messages.py", &py), None, "{s}");
            let long: String = s.chars().cycle().take(2000).collect();
            let body: String = (0..30).map(|i| format!("    let v{i} = {i};\n")).collect();
            let rs = format!("// {long}\npub fn f() -> u32 {{\n{body}    1\n}}\n");
            assert_eq!(generated_reason("src/lib.rs", &rs), None, "{s}");
        }
        // Still minified past the limits, in any script.
        let huge: String = zh.chars().cycle().take(6000).collect();
        assert!(generated_reason("src/lib.rs", &format!("// {huge}\n")).is_some());
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
    fn a_file_parsed_once_answers_as_chunk_code_and_enclosing_definition_do() {
        let src = "import os\n\n\nclass Gate:\n    \"\"\"A gate.\"\"\"\n\n    def admit(self, n):\n        return os.path.exists(n) and check(n)\n\n    def close(self):\n        self.limit = 0\n\n\ndef check(n):\n    return Gate().admit(n)\n";
        let opts = ChunkOptions {
            min_chars: 0,
            ..ChunkOptions::default()
        };
        let parsed = ParsedCode::parse("gate.py", src).expect("python parses");
        let quick = parsed.chunks_without_links(&opts);
        let full = chunk_code("gate.py", src, &opts);
        // Only the references (calls, imports) are left out.
        assert!(quick.links.len() < full.links.len(), "{:?}", quick.links);
        assert!(quick.links.iter().all(|l| full.links.contains(l)));
        assert_eq!(quick.chunks, full.chunks);
        assert_eq!(quick.symbols, full.symbols);
        let lines = src.lines().count() as u32;
        for a in 1..=lines {
            for b in a..=lines {
                assert_eq!(
                    parsed.enclosing_definition(a, b),
                    enclosing_definition("gate.py", src, a, b),
                    "{a}-{b}"
                );
            }
        }
        // What chunk_code does not read by a grammar is not parsed here.
        assert!(ParsedCode::parse("Cargo.toml", "[package]\nname = \"x\"\n").is_none());
        assert!(ParsedCode::parse("notes.txt", "plain words\n").is_none());
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
        assert_eq!(enclosing_definition("run.tcl", "echo hi\n", 1, 1), None);

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
