//! C++ (`.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`, and a `.h` whose text
//! is C++, [`looks_like_cpp`]): classes, structs, unions and enums with a
//! body, their methods (defined inline, declared, or defined outside as
//! `Status DBImpl::Get(…)`, which is a member of `DBImpl`), free functions
//! and their prototypes, typedefs and `using` aliases, function-like
//! macros. Namespaces, `extern "C"` blocks and preprocessor conditionals
//! group definitions without naming them, as in C; a `template <…>` is part
//! of the definition it introduces. `#include "x.h"` is an import of `x.h`.

use tree_sitter::Node;

use super::c::{declarator_name, prototype_name};
use super::{DefName, Spec, field_body, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_definition", "function"),
        ("declaration", "function"),
        ("field_declaration", "method"),
        ("class_specifier", "class"),
        ("struct_specifier", "struct"),
        ("union_specifier", "union"),
        ("enum_specifier", "enum"),
        ("type_definition", "type"),
        ("alias_declaration", "type"),
        ("preproc_function_def", "macro"),
    ],
    containers: &["class_specifier", "struct_specifier", "union_specifier"],
    // `template <typename K> class SkipList { … }`: the template is the
    // definition's first line, not file-level text above it.
    // A class's nested `class handle { … };` is a member declaration of
    // that type alone.
    wrappers: &[
        ("template_declaration", super::LAST_NAMED_CHILD),
        ("field_declaration", super::TYPE_ALONE),
    ],
    transparent: &[
        "namespace_definition",
        "linkage_specification",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
    ],
    calls: &[("call_expression", "function"), ("new_expression", "type")],
    imports: &["preproc_include"],
    heritage: &[("base_class_clause", None)],
    type_refs: &["type_identifier"],
    builtins: BUILTINS,
    capital_calls: false,
    name: def_name,
    body: def_body,
    owner: def_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// C++'s own beyond C's: the standard library's names every file uses.
const BUILTINS: &[&str] = &[
    "std",
    "string",
    "string_view",
    "vector",
    "map",
    "set",
    "unordered_map",
    "unordered_set",
    "pair",
    "tuple",
    "array",
    "deque",
    "list",
    "unique_ptr",
    "shared_ptr",
    "weak_ptr",
    "make_unique",
    "make_shared",
    "move",
    "forward",
    "swap",
    "min",
    "max",
    "size",
    "empty",
    "begin",
    "end",
    "data",
    "push_back",
    "emplace_back",
    "reserve",
    "resize",
    "clear",
    "erase",
    "find",
    "count",
    "front",
    "back",
    "c_str",
    "append",
    "assign",
    "substr",
    "atomic",
    "mutex",
    "lock_guard",
    "unique_lock",
    "condition_variable",
    "thread",
    "function",
    "optional",
    "nullptr",
    "size_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "memcpy",
    "memset",
    "memcmp",
    "strlen",
    "malloc",
    "free",
    "assert",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
    "sizeof",
    "fprintf",
    "snprintf",
    "printf",
    "abort",
];

/// Whether a `.h` file is C++ rather than C: a line that opens a namespace,
/// a template, a class, or an access section, or that includes a standard
/// header with no extension (`<string>`). A C header has none of these (C
/// has no such keywords, and its standard headers end in `.h`); read as C,
/// a C++ header's classes are error nodes.
pub(super) fn looks_like_cpp(text: &str) -> bool {
    text.lines().take(4000).any(|line| {
        let l = line.trim_start();
        let word = |w: &str| {
            l.strip_prefix(w)
                .is_some_and(|rest| rest.starts_with([' ', '\t', '<', '{']))
        };
        word("namespace")
            || word("template")
            || (word("class")
                && !l.ends_with(';')
                && l[5..].trim_start().starts_with(|c: char| c.is_alphabetic()))
            || ["public:", "private:", "protected:"]
                .iter()
                .any(|a| l.starts_with(a))
            || l.strip_prefix("#include <")
                .or_else(|| l.strip_prefix("# include <"))
                .and_then(|rest| rest.split_once('>'))
                .is_some_and(|(header, _)| {
                    !header.contains('.')
                        && header.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                })
    })
}

/// A definition's name: a function's or method's through its declarator
/// (`DBImpl::Get` → `Get`, `~DBImpl`, `operator==`), a prototype's likewise
/// (`None` for a variable or a field), a class's, struct's, union's or
/// enum's own name when it has a body, a typedef's or alias's, a macro's.
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = match node.kind() {
        "function_definition" => declarator_name(node.child_by_field_name("declarator")?, src)?,
        "declaration" | "field_declaration" => prototype_name(node, src)?,
        "class_specifier" | "struct_specifier" | "union_specifier" | "enum_specifier" => {
            node.child_by_field_name("body")?;
            let name = node.child_by_field_name("name")?;
            last_segment(name, src)
        }
        "type_definition" => declarator_name(node.child_by_field_name("declarator")?, src)?,
        _ => text_of(node.child_by_field_name("name")?, src).to_string(),
    };
    (!name.is_empty()).then_some((name, None))
}

/// `Foo` of `ns::Foo` or `Foo<T>`, the name as written otherwise.
fn last_segment(node: Node<'_>, src: &str) -> String {
    match node.kind() {
        "qualified_identifier" => node
            .child_by_field_name("name")
            .map_or_else(|| text_of(node, src).to_string(), |n| last_segment(n, src)),
        "template_type" => node.child_by_field_name("name").map_or_else(
            || text_of(node, src).to_string(),
            |n| text_of(n, src).to_string(),
        ),
        _ => text_of(node, src).to_string(),
    }
}

/// The class a function defined outside it belongs to: `DBImpl` of
/// `Status DBImpl::Get(…) { … }` (the innermost scope: `Mutex` of
/// `port::Mutex::Lock`); `None` for a free function.
fn def_owner(node: Node<'_>, src: &str) -> Option<String> {
    if node.kind() != "function_definition" {
        return None;
    }
    let mut d = node.child_by_field_name("declarator")?;
    for _ in 0..32 {
        match d.kind() {
            "qualified_identifier" => break,
            "function_declarator" | "pointer_declarator" | "reference_declarator" => {
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_child(0))?;
            }
            _ => return None,
        }
    }
    if d.kind() != "qualified_identifier" {
        return None;
    }
    // Down nested qualifications to the last scope before the name.
    let mut scope = d.child_by_field_name("scope");
    let mut name = d.child_by_field_name("name");
    while let Some(n) = name
        && n.kind() == "qualified_identifier"
    {
        scope = n.child_by_field_name("scope");
        name = n.child_by_field_name("name");
    }
    let scope = scope?;
    let owner = last_segment(scope, src);
    // A namespace qualifier (`leveldb::NewLRUCache`) names no class: a
    // class's name starts upper-case in nearly every C++ style; a namespace
    // rarely does.
    owner
        .starts_with(|c: char| c.is_ascii_uppercase())
        .then_some(owner)
}

/// What a large definition is cut in: a function's statements, a class's
/// members, a typedef's struct fields, a macro's text in windows.
fn def_body(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "type_definition" => node
            .child_by_field_name("type")?
            .child_by_field_name("body"),
        "preproc_function_def" => node.child_by_field_name("value"),
        _ => field_body(node),
    }
}

/// The text the C++ grammar reads: `text` with the export macro of a class
/// head blanked (`class LEVELDB_EXPORT DB {` → `class                DB {`),
/// `None` when there is none. Read as written, the grammar takes the macro
/// for the class's name and the class for a function (its methods unnamed).
/// The macro is an all-capitals word between `class`/`struct` and another
/// name. A line that is one such word alone (`FMT_BEGIN_NAMESPACE`,
/// `Q_OBJECT`, `__BEGIN_DECLS`) is blanked too: read as written, the grammar
/// takes it for a type and the declaration after it for a variable of it
/// (fmt's `struct ansi_color_escape` lost its name so). So are the macros
/// among a declaration's leading specifiers ([`specifier_macros`]:
/// `FMT_CONSTEXPR auto write(…)`). Blanking writes spaces, so offsets and
/// lines stay the original's.
pub(super) fn without_class_macros(text: &str) -> Option<String> {
    let mut out: Option<String> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let found = class_macro(line).or_else(|| lone_macro(line));
        for (at, len) in found.into_iter().chain(specifier_macros(line)) {
            let o = out.get_or_insert_with(|| text.to_string());
            let start = offset + at;
            o.replace_range(start..start + len, &" ".repeat(len));
        }
        offset += line.len();
    }
    out
}

/// Words that may stand among a declaration's leading specifiers.
const SPECIFIERS: &[&str] = &[
    "inline",
    "static",
    "constexpr",
    "consteval",
    "explicit",
    "virtual",
    "friend",
    "extern",
];

/// Where in `line` the all-capitals macros among a declaration's leading
/// specifiers are (byte offset, length each): `FMT_CONSTEXPR auto write(…)`,
/// `FMT_NOINLINE FMT_CONSTEXPR auto f(…)`, `template <typename T>
/// FMT_INLINE void g(…)`, `static FMT_CONSTEXPR20 int h(…)`. Read as
/// written, the grammar takes such a macro for a type and what follows for
/// an error: fmt's format.h had 720 lines (`big_decimal_fp`,
/// `digit_grouping` and 60 more definitions) under error nodes. A macro here
/// is an [`is_macro_word`] followed on its line by another name.
fn specifier_macros(line: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut at = line.len() - line.trim_start().len();
    // A template head on the same line: `template <typename T> FMT_… `.
    if line[at..].starts_with("template") {
        let Some(open) = line[at..].find('<') else {
            return found;
        };
        let mut depth = 0usize;
        let mut close = None;
        for (i, c) in line[at + open..].char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(at + open + i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            return found;
        };
        at = close + (line[close..].len() - line[close..].trim_start().len());
    }
    loop {
        let rest = &line[at..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..len];
        let after = &rest[len..];
        let next = after.trim_start();
        if len == 0 || after.len() == next.len() {
            break;
        }
        if is_macro_word(word)
            && next.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '~')
        {
            found.push((at, len));
        } else if !SPECIFIERS.contains(&word) {
            break;
        }
        at += len + (after.len() - next.len());
    }
    found
}

/// Where `line` is an all-capitals macro alone (byte offset, length): a
/// word of capitals, digits and underscores with an underscore in it, or
/// one that starts with one (`__BEGIN_DECLS`), and nothing else on the line.
fn lone_macro(line: &str) -> Option<(usize, usize)> {
    let word = line.trim();
    is_macro_word(word).then(|| (line.len() - line.trim_start().len(), word.len()))
}

/// A word of capitals, digits and underscores, with an underscore and a
/// capital in it, three characters or more, that starts with a capital or
/// an underscore (`FMT_CONSTEXPR`, `__BEGIN_DECLS`): a macro, as the
/// blanking above reads one.
fn is_macro_word(word: &str) -> bool {
    word.len() >= 3
        && word.contains('_')
        && word.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
        && word.contains(|c: char| c.is_ascii_uppercase())
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Where in `line` a class head's export macro is (byte offset, length).
fn class_macro(line: &str) -> Option<(usize, usize)> {
    let body = line.trim_start();
    let lead = line.len() - body.len();
    let keyword = ["class", "struct"]
        .into_iter()
        .find(|k| body.starts_with(k) && body[k.len()..].starts_with([' ', '\t']))?;
    let rest = &body[keyword.len()..];
    let word_at = keyword.len() + (rest.len() - rest.trim_start().len());
    let rest = rest.trim_start();
    let word_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let word = &rest[..word_len];
    let is_macro = word.len() >= 2
        && word.starts_with(|c: char| c.is_ascii_uppercase())
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && word.contains(|c: char| c.is_ascii_uppercase());
    let next = rest[word_len..].trim_start();
    (is_macro && next.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .then_some((lead + word_at, word_len))
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{
        assert_crumbs, assert_symbols, check_lines, chunk_named, has_link, has_link_from, opts,
    };
    use crate::code::{Language, chunk_code, enclosing_definition, highlight};

    const HEADER: &str = r#"// Copyright (c) The LevelDB Authors.
#ifndef STORAGE_LEVELDB_INCLUDE_DB_H_
#define STORAGE_LEVELDB_INCLUDE_DB_H_

#include <string>
#include "leveldb/options.h"

namespace leveldb {

// A range of keys.
struct LEVELDB_EXPORT Range {
  Range() = default;
  Range(const Slice& s, const Slice& l) : start(s), limit(l) {}

  Slice start;  // Included in the range
  Slice limit;  // Not included in the range
};

// A DB is a persistent ordered map from keys to values.
class LEVELDB_EXPORT DB {
 public:
  // Open the database with the specified "name".
  static Status Open(const Options& options, const std::string& name,
                     DB** dbptr);

  virtual ~DB();

  // Set the database entry for "key" to "value".
  virtual Status Put(const WriteOptions& options, const Slice& key,
                     const Slice& value) = 0;
};

}  // namespace leveldb

#endif  // STORAGE_LEVELDB_INCLUDE_DB_H_
"#;

    const SOURCE: &str = r#"#include "db/db_impl.h"

#include <algorithm>

namespace leveldb {

// Information kept for every waiting writer.
struct DBImpl::Writer {
  explicit Writer(port::Mutex* mu) : batch(nullptr), sync(false), cv(mu) {}

  Status status;
  WriteBatch* batch;
};

template <typename T, typename V>
static void ClipToRange(T* ptr, V minvalue, V maxvalue) {
  if (static_cast<V>(*ptr) > maxvalue) *ptr = maxvalue;
  if (static_cast<V>(*ptr) < minvalue) *ptr = minvalue;
}

DBImpl::DBImpl(const Options& raw_options, const std::string& dbname)
    : env_(raw_options.env), dbname_(dbname) {}

// Compacts the memtable into a table file.
void DBImpl::CompactMemTable() {
  mutex_.AssertHeld();
  VersionEdit edit;
  Status s = WriteLevel0Table(imm_, &edit, versions_->current());
  if (s.ok()) {
    RemoveObsoleteFiles();
  }
}

Status DB::Open(const Options& options, const std::string& dbname,
                DB** dbptr) {
  DBImpl* impl = new DBImpl(options, dbname);
  impl->CompactMemTable();
  ClipToRange(&impl->size_, 1, 10);
  return Status::OK();
}

class MemTableInserter : public WriteBatch::Handler {
 public:
  void Put(const Slice& key, const Slice& value) override {
    mem_->Add(sequence_, kTypeValue, key, value);
    sequence_++;
  }
};

}  // namespace leveldb
"#;

    #[test]
    fn cpp_files_and_cpp_headers_are_read_as_cpp() {
        for path in ["db/db_impl.cc", "a.cpp", "a.cxx", "a.hpp", "a.hh", "a.hxx"] {
            assert_eq!(Language::of_path(path), Some(Language::Cpp), "{path}");
        }
        assert_eq!(
            Language::of_file("include/leveldb/db.h", HEADER),
            Some(Language::Cpp)
        );
        // A C header stays C: no namespace, class, template, access label
        // or extension-less standard header.
        let c = "#include <stdio.h>\n#include \"lz4.h\"\nstruct s { int class_count; };\nint LZ4_versionNumber(void);\n";
        assert_eq!(Language::of_file("lib/lz4.h", c), Some(Language::C));
        assert_eq!(Language::of_file("lib/lz4.c", HEADER), Some(Language::C));
        assert_eq!(Language::Cpp.name(), "cpp");
    }

    #[test]
    fn classes_methods_and_out_of_class_definitions_get_breadcrumbs() {
        let doc = chunk_code("include/leveldb/db.h", HEADER, &opts());
        assert_eq!(doc.language, "cpp");
        check_lines(HEADER, &doc);
        let kinds: Vec<(&str, &str)> = doc
            .symbols
            .iter()
            .map(|(n, k, _)| (n.as_str(), *k))
            .collect();
        // The export macro does not take the class's name.
        for want in [
            ("DB", "class"),
            ("Range", "struct"),
            ("Put", "method"),
            ("Open", "method"),
        ] {
            assert!(kinds.contains(&want), "{want:?} not in {kinds:?}");
        }
        assert!(
            !kinds.iter().any(|(n, _)| *n == "LEVELDB_EXPORT"),
            "{kinds:?}"
        );
        assert!(
            has_link(&doc, "options.h", Relation::Imports),
            "{:?}",
            doc.links
        );
        assert!(
            !doc.links.iter().any(|l| l.to == "string"),
            "{:?}",
            doc.links
        );

        let doc = chunk_code("db/db_impl.cc", SOURCE, &opts());
        check_lines(SOURCE, &doc);
        assert_crumbs(
            &doc,
            &[
                "db/db_impl.cc > Writer",
                "db/db_impl.cc > ClipToRange",
                "db/db_impl.cc > DBImpl > DBImpl",
                "db/db_impl.cc > DBImpl > CompactMemTable",
                "db/db_impl.cc > DB > Open",
                "db/db_impl.cc > MemTableInserter",
            ],
        );
        // The comment above travels with its definition; a template's line
        // opens its definition's chunk.
        let compact = chunk_named(&doc, "db/db_impl.cc > DBImpl > CompactMemTable");
        assert!(
            compact.text.starts_with("// Compacts the memtable"),
            "{}",
            compact.text
        );
        let clip = chunk_named(&doc, "db/db_impl.cc > ClipToRange");
        assert!(
            clip.text.starts_with("template <typename T"),
            "{}",
            clip.text
        );
        // Calls, `new` and the base class are linked; a method defined
        // outside its class is a member of it.
        let from_open =
            |to: &str, rel: Relation| has_link_from(&doc, "db/db_impl.cc > DB > Open", to, rel);
        assert!(
            from_open("CompactMemTable", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(from_open("ClipToRange", Relation::Calls), "{:?}", doc.links);
        assert!(from_open("DBImpl", Relation::Calls), "{:?}", doc.links);
        assert!(
            has_link(&doc, "DBImpl", Relation::MemberOf),
            "{:?}",
            doc.links
        );
        assert!(
            doc.links
                .iter()
                .any(|l| l.rel == Relation::Implements && l.to.ends_with("Handler")),
            "{:?}",
            doc.links
        );
        let def =
            enclosing_definition("db/db_impl.cc", SOURCE, 31, 31).expect("in CompactMemTable");
        assert_eq!(
            (def.kind, def.name.as_str()),
            ("function", "CompactMemTable")
        );
        let lines = highlight("db/db_impl.cc", SOURCE).expect("highlighted");
        assert_eq!(lines.len(), SOURCE.lines().count());
    }

    #[test]
    fn class_head_macros_are_blanked_in_place() {
        let text = "class LEVELDB_EXPORT DB {\n  struct  API_2 Rep;\n};\nclass Foo : public Bar {};\nclass FOO;\nstruct S {};\n";
        let out = super::without_class_macros(text).expect("a macro");
        assert_eq!(out.len(), text.len());
        assert_eq!(
            out,
            "class                DB {\n  struct        Rep;\n};\nclass Foo : public Bar {};\nclass FOO;\nstruct S {};\n"
        );
        assert!(super::without_class_macros("class Foo {};\nstruct BAR {};\n").is_none());
    }

    #[test]
    fn specifier_macros_are_blanked_in_place() {
        let text = "FMT_CONSTEXPR auto write(int x) -> int {\n  return x;\n}\ntemplate <typename T> FMT_INLINE void g(T) {}\nstatic FMT_CONSTEXPR20 FMT_NOINLINE int h() { return 1; }\n  FMT_API void vprint(int);\nFMT_ASSERT(x, \"y\");\nint FMT_VAL = 1;\nFOO_BAR\n";
        let out = super::without_class_macros(text).expect("macros");
        assert_eq!(out.len(), text.len());
        assert_eq!(
            out,
            "              auto write(int x) -> int {\n  return x;\n}\ntemplate <typename T>            void g(T) {}\nstatic                              int h() { return 1; }\n          void vprint(int);\nFMT_ASSERT(x, \"y\");\nint FMT_VAL = 1;\n       \n"
        );
        // Not a macro: a word without an underscore, or one followed by `(`.
        assert!(super::without_class_macros("INLINE int f();\nFOO_BAR(x) int y;\n").is_none());
    }

    #[test]
    fn definitions_after_specifier_macros_are_found() {
        // fmt's format.h: read as written, the constructor's
        // `FMT_CONSTEXPR` and the function's `FMT_CONSTEXPR FMT_INLINE` left
        // the grammar in an error node that swallowed all four definitions.
        let text = r#"template <typename Char> struct write_int_data {
  size_t size;
  size_t padding;

  FMT_CONSTEXPR write_int_data(int num_digits, unsigned prefix,
                               const basic_format_specs<Char>& specs)
      : size((prefix >> 24) + to_unsigned(num_digits)), padding(0) {
    if (specs.align == align::numeric) {
      auto width = to_unsigned(specs.width);
      if (width > size) {
        padding = width - size;
        size = width;
      }
    } else if (specs.precision > num_digits) {
      size = (prefix >> 24) + to_unsigned(specs.precision);
      padding = to_unsigned(specs.precision - num_digits);
    }
  }
};

// Writes an integer in the format
//   <left-padding><prefix><numeric-padding><digits><right-padding>
// where <digits> are written by write_digits(it).
// prefix contains chars in three lower bytes and the size in the fourth byte.
template <typename OutputIt, typename Char, typename W>
FMT_CONSTEXPR FMT_INLINE auto write_int(OutputIt out, int num_digits,
                                        unsigned prefix,
                                        const basic_format_specs<Char>& specs,
                                        W write_digits) -> OutputIt {
  // Slightly faster check for specs.width == 0 && specs.precision == -1.
  if ((specs.width | (specs.precision + 1)) == 0) {
    auto it = reserve(out, to_unsigned(num_digits) + (prefix >> 24));
    if (prefix != 0) {
      for (unsigned p = prefix & 0xffffff; p != 0; p >>= 8)
        *it++ = static_cast<Char>(p & 0xff);
    }
    return base_iterator(out, write_digits(it));
  }
  auto data = write_int_data<Char>(num_digits, prefix, specs);
  return write_padded<align::right>(
      out, specs, data.size, [=](reserve_iterator<OutputIt> it) {
        for (unsigned p = prefix & 0xffffff; p != 0; p >>= 8)
          *it++ = static_cast<Char>(p & 0xff);
        it = detail::fill_n(it, data.padding, static_cast<Char>('0'));
        return write_digits(it);
      });
}

// A decimal floating-point number significand * pow(10, exp).
struct big_decimal_fp {
  const char* significand;
  int significand_size;
  int exponent;
};

constexpr auto get_significand_size(const big_decimal_fp& f) -> int {
  return f.significand_size;
}
"#;
        let doc = chunk_code("fmt/format.h", text, &opts());
        check_lines(text, &doc);
        assert_symbols(
            &doc,
            &[
                ("write_int_data", "struct"),
                ("write_int", "function"),
                ("big_decimal_fp", "struct"),
                ("get_significand_size", "function"),
            ],
        );
    }

    #[test]
    fn a_class_head_split_by_a_conditional_does_not_swallow_the_file() {
        // fmt's core.h: an `#if` between the class's name and its base left
        // the class's body a block at the top of the file, no error node
        // saying so, and every definition to the file's end in it.
        let text = "template <typename Context, typename... Args>\nclass format_arg_store\n#if FMT_GCC_VERSION && FMT_GCC_VERSION < 409\n    // Workaround a GCC template argument substitution bug.\n    : public basic_format_args<Context>\n#endif\n{\n private:\n  static const size_t num_args = sizeof...(Args);\n  static const size_t num_named_args = detail::count_named_args<Args...>();\n  static const bool is_packed = num_args <= detail::max_packed_args;\n\n public:\n  template <typename... T>\n  FMT_CONSTEXPR FMT_INLINE format_arg_store(T&&... args)\n      :\n#if FMT_GCC_VERSION && FMT_GCC_VERSION < 409\n        basic_format_args<Context>(*this),\n#endif\n        data_{detail::make_arg<is_packed, Context>(args)...} {\n  }\n};\n\ntemplate <typename Context> class basic_format_args {\n public:\n  using size_type = int;\n  constexpr basic_format_args() : desc_(0), args_(nullptr) {}\n  FMT_CONSTEXPR auto get(int id) const -> format_arg {\n    format_arg arg;\n    return arg;\n  }\n};\n\nstruct fill_t {\n  int size_;\n  int data_[4];\n  int more_;\n  int than_;\n  int ten_;\n  int lines_;\n};\n\nstruct arg_ref {\n  int index;\n};\n";
        let doc = chunk_code("fmt/core.h", text, &opts());
        check_lines(text, &doc);
        assert_symbols(
            &doc,
            &[
                ("format_arg_store", "class"),
                ("basic_format_args", "class"),
                ("fill_t", "struct"),
                ("arg_ref", "struct"),
            ],
        );
    }

    #[test]
    fn nested_types_are_definitions_of_their_class() {
        // fmt's `class handle` inside `basic_format_arg`: a member
        // declaration of the type alone, no declarator.
        let text = "template <typename Context> class basic_format_arg {\n public:\n  class handle {\n   public:\n    explicit handle(int c) : c_(c) {}\n    void format(int x) const { f(x); }\n   private:\n    int c_;\n  };\n  enum class spec { a, b };\n  struct parse_range { int begin; };\n  int value_;\n};\n";
        let doc = chunk_code("fmt/core.h", text, &opts());
        check_lines(text, &doc);
        assert_symbols(
            &doc,
            &[
                ("handle", "class"),
                ("spec", "enum"),
                ("parse_range", "struct"),
                ("format", "function"),
            ],
        );
    }

    #[test]
    fn a_macro_alone_on_its_line_does_not_hide_the_struct_after_it() {
        // fmt's color.h: `FMT_BEGIN_DETAIL_NAMESPACE` (`namespace detail {`).
        let text = "FMT_BEGIN_DETAIL_NAMESPACE\n\ntemplate <typename Char> struct ansi_color_escape {\n  FMT_CONSTEXPR ansi_color_escape(int em) noexcept {\n    size_t index = 0;\n  }\n  FMT_CONSTEXPR const Char* begin() const noexcept { return buffer; }\n  Char buffer[7u + 3u * 4 + 1];\n};\n\nFMT_END_DETAIL_NAMESPACE\n";
        let doc = chunk_code("fmt/color.h", text, &opts());
        assert_crumbs(&doc, &["fmt/color.h > ansi_color_escape"]);
        let c = chunk_named(&doc, "fmt/color.h > ansi_color_escape");
        assert!(c.text.contains("struct ansi_color_escape"), "{}", c.text);
        // Not a macro alone: an enum's last value, a call, a lower-case word.
        assert!(super::lone_macro("  RED_VALUE,\n").is_none());
        assert!(super::lone_macro("FOO_BAR();\n").is_none());
        assert!(super::lone_macro("foo_bar\n").is_none());
        assert_eq!(super::lone_macro("  Q_OBJECT\n"), Some((2, 8)));
    }
}
