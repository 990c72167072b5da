//! The names retriever: what a query says about code by name — the
//! definitions it names (`configure`, `ProcessorFormatter.format`,
//! `pkg::Type::method`), the files and modules it names
//! (`astropy/modeling/separable.py`, `separable.py`,
//! `astropy.modeling.separable`, "the separable module") and the frames of
//! a traceback — read from the query ([`read_names`]), then looked up
//! exactly in the index's `defines` links and paths ([`names_list`]), not
//! stemmed: `configure` is not `configuration`, and the private twin
//! `_make_filtering_bound_logger` is not `make_filtering_bound_logger`.
//!
//! An issue is not a sentence: it holds prose, code blocks, tracebacks and
//! reprs. Each part weighs what it is worth as evidence (a frame or a
//! backticked name more than a name in a repr), and `--explain` prints what
//! was read ([`QueryRead`]).

use std::collections::HashMap;

use cairn_core::{ChunkId, IndexSnapshot, Scored, StoreError, entity_key};

/// Most word phrases one query looks up (the first read first).
pub const MAX_PHRASES: usize = 48;
/// Most names one query looks up (the strongest first).
pub const MAX_NAMES: usize = 48;
/// Most paths and modules one query looks up.
pub const MAX_PATHS: usize = 24;
/// Most definitions one name brings (`__init__` is defined everywhere).
const DEFS_PER_NAME: usize = 64;
/// Most files one path fragment brings before they are matched.
const FILES_PER_PATH: usize = 256;
/// Characters of a query read for names: an issue runs to ~25,000.
const MAX_READ: usize = 40_000;

/// Where a name or path in the query came from; what it weighs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RefSource {
    /// The whole query is the name or path.
    Query,
    /// A traceback frame (`File "x.py", line 3, in f`, `at f (x.js:1:2)`).
    Frame,
    /// Between backticks in prose.
    Backtick,
    /// Written in the prose as code is (`snake_case`, `CamelCase`, `a.b`).
    Prose,
    /// In a code block (a call, an import, an attribute chain).
    Code,
    /// Two or three plain words of the prose that spell a name together
    /// ("call-site parameters" → `CallsiteParameter`).
    Words,
}

impl RefSource {
    /// The word `--explain` prints.
    pub fn name(self) -> &'static str {
        match self {
            RefSource::Query => "query",
            RefSource::Frame => "frame",
            RefSource::Backtick => "backtick",
            RefSource::Prose => "prose",
            RefSource::Code => "code",
            RefSource::Words => "words",
        }
    }

    /// The weight of a name or path of this source. A traceback frame
    /// names where the error went through; a backticked name is what the
    /// writer meant; a name in a code block may be the user's own variable.
    fn weight(self) -> f64 {
        match self {
            RefSource::Query => 2.0,
            RefSource::Frame => 1.0,
            RefSource::Backtick => 1.0,
            RefSource::Prose => 0.7,
            RefSource::Code => 0.5,
            RefSource::Words => 0.35,
        }
    }
}

/// A definition's name the query holds.
#[derive(Clone, Debug, PartialEq)]
pub struct NameRef {
    /// The name as written (`format`).
    pub name: String,
    /// What it was qualified by (`ProcessorFormatter` of
    /// `ProcessorFormatter.format`, `Type` of `pkg::Type::method`).
    pub qualifier: Option<String>,
    /// Where it was read.
    pub from: RefSource,
    /// Its weight (by source; the innermost frames weigh more).
    pub weight: f64,
}

/// A file or module the query names.
#[derive(Clone, Debug, PartialEq)]
pub struct PathRef {
    /// Its components as written (`["astropy", "modeling", "separable.py"]`;
    /// a module's have no extension).
    pub parts: Vec<String>,
    /// A module (`astropy.modeling.separable`, "the separable module"):
    /// it matches `separable.py`, `separable.rs`, `separable/__init__.py`…
    pub module: bool,
    /// Where it was read.
    pub from: RefSource,
    /// Its weight.
    pub weight: f64,
}

impl PathRef {
    /// The path as `--explain` prints it.
    pub fn display(&self) -> String {
        if self.module {
            self.parts.join(".")
        } else {
            self.parts.join("/")
        }
    }
}

/// What [`read_names`] read from a query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryRead {
    /// Names, strongest first (at most [`MAX_NAMES`]).
    pub names: Vec<NameRef>,
    /// Paths and modules, strongest first (at most [`MAX_PATHS`]).
    pub paths: Vec<PathRef>,
    /// Entity keys of two or three consecutive plain words of the prose
    /// (`callsiteparameters`, and `callsiteparameter`), which any spelling
    /// of a definition's name matches; at most [`MAX_PHRASES`].
    pub phrases: Vec<String>,
    /// Traceback frames read.
    pub frames: usize,
    /// Fenced or indented code blocks read.
    pub code_blocks: usize,
    /// The query is one name or path and nothing else.
    pub whole: bool,
}

impl QueryRead {
    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.paths.is_empty() && self.phrases.is_empty()
    }
}

/// Extensions of source files a path in a query may end with (and of the
/// docs and configs beside them).
const FILE_EXTENSIONS: &[&str] = &[
    "py", "pyx", "pyi", "rs", "go", "js", "jsx", "mjs", "cjs", "ts", "tsx", "java", "kt", "kts",
    "scala", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "rb", "php", "swift", "m", "mm",
    "lua", "sh", "bash", "zsh", "pl", "pm", "r", "jl", "ex", "exs", "erl", "hs", "ml", "mli",
    "dart", "zig", "sql", "md", "rst", "txt", "toml", "yaml", "yml", "json", "cfg", "ini", "vue",
    "svelte", "tf", "hcl", "proto", "graphql",
];

/// Words that read as code but name nothing a repository defines: the
/// receivers and the usual aliases of attribute chains.
const NOT_NAMES: &[&str] = &[
    "self", "cls", "this", "super", "np", "pd", "plt", "os", "sys", "re", "json", "math", "None",
    "True", "False", "null", "true", "false", "e.g", "i.e", "etc", "vs", "http", "https", "www",
    "com", "org", "github", "README", "TODO", "FIXME", "NOTE", "API", "URL", "OK",
];

/// What a query says about code: its names, paths, modules and frames.
/// Linear in the query (its first [`MAX_READ`] characters), bounded in
/// what it keeps.
pub fn read_names(query: &str) -> QueryRead {
    let query = clip(query, MAX_READ);
    let mut acc = Acc::default();
    let trimmed = query.trim();
    if is_single_word(trimmed) {
        acc.whole_word(trimmed.trim_matches('`'));
    }
    let mut in_fence = false;
    for line in query.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            if in_fence {
                acc.read.code_blocks += 1;
            }
            continue;
        }
        if frame(line, &mut acc) {
            continue;
        }
        let code =
            in_fence || t.starts_with(">>> ") || t.starts_with("... ") || t.starts_with("$ ");
        acc.line(line, code);
        if !code {
            acc.phrases(line);
        }
    }
    acc.finish()
}

/// The first `max` bytes of `s`, cut at a character boundary.
fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Whether `s` is one word that may be a name or a path (no spaces).
fn is_single_word(s: &str) -> bool {
    !s.is_empty() && s.len() <= 200 && !s.chars().any(char::is_whitespace)
}

#[derive(Default)]
struct Acc {
    read: QueryRead,
    /// Where each (name, qualifier) sits in `read.names`.
    seen: HashMap<(String, Option<String>), usize>,
    /// Frame names and paths in reading order, weighed once all are read
    /// (the innermost — last — frames of a Python traceback weigh most).
    frames: Vec<Frame>,
}

impl Acc {
    fn name(&mut self, name: &str, qualifier: Option<&str>, from: RefSource, weight: f64) {
        let quoted = name.starts_with('\'');
        let name = name.trim_matches(|c: char| !is_ident_char(c) && !matches!(c, '?' | '!' | '\''));
        // Ruby's (and Elixir's, Crystal's) `valid?` and `save!`: the mark is
        // part of the name, as the chunker records it; anywhere else a
        // trailing `?` or `!` is punctuation. Haskell's and OCaml's primes
        // (`decode'`, `foldr'`) are part of the name too, unless the word
        // was quoted (`'decode'`).
        let core = name.trim_end_matches(['?', '!', '\'']);
        let suffix = &name[core.len()..];
        let name = match suffix {
            "?" | "!" => name,
            primes if !quoted && !primes.is_empty() && primes.chars().all(|c| c == '\'') => name,
            _ => core,
        };
        if !is_identifier(core) || NOT_NAMES.contains(&core) || entity_key(core).len() < 3 {
            return;
        }
        let qualifier = qualifier
            .filter(|q| is_identifier(q) && !NOT_NAMES.contains(q))
            .map(str::to_string);
        self.record(name, qualifier, from, weight);
    }

    /// A dotted name as one name (`Date.Range`): each part an identifier.
    fn dotted_name(&mut self, w: &str, from: RefSource, weight: f64) {
        if w.split('.').all(is_identifier) {
            self.record(w, None, from, weight);
        }
    }

    /// Records a name read, once: read again, it keeps the higher weight.
    fn record(&mut self, name: &str, qualifier: Option<String>, from: RefSource, weight: f64) {
        let at = (name.to_string(), qualifier.clone());
        if let Some(&i) = self.seen.get(&at) {
            let n = &mut self.read.names[i];
            if weight > n.weight {
                n.weight = weight;
                n.from = from;
            }
            return;
        }
        self.seen.insert(at, self.read.names.len());
        self.read.names.push(NameRef {
            name: name.to_string(),
            qualifier,
            from,
            weight,
        });
    }

    fn path(&mut self, parts: Vec<String>, module: bool, from: RefSource, weight: f64) {
        if parts.is_empty()
            || parts.iter().any(|p| p.is_empty())
            || self.read.paths.len() >= 4 * MAX_PATHS
        {
            return;
        }
        if let Some(p) = self
            .read
            .paths
            .iter_mut()
            .find(|p| p.parts == parts && p.module == module)
        {
            p.weight = p.weight.max(weight);
            return;
        }
        self.read.paths.push(PathRef {
            parts,
            module,
            from,
            weight,
        });
    }

    /// The whole query is one word: a name, a path or a module.
    fn whole_word(&mut self, w: &str) {
        self.read.whole = true;
        let before = (self.read.names.len(), self.read.paths.len());
        self.word(w, false, RefSource::Query, true);
        if (self.read.names.len(), self.read.paths.len()) == before {
            self.read.whole = false;
        }
    }

    /// The keys of two and three consecutive content words of a prose
    /// line (a stop word, a number or a code word breaks the run), and of
    /// the same with the last word's plural `s` dropped.
    fn phrases(&mut self, line: &str) {
        let mut run: Vec<String> = Vec::new();
        let flush = |run: &mut Vec<String>, acc: &mut Acc| {
            for n in [2, 3] {
                for w in run.windows(n) {
                    let key: String = w.concat();
                    acc.phrase(&key);
                    if let Some(one) = key.strip_suffix('s')
                        && !key.ends_with("ss")
                    {
                        acc.phrase(one);
                    }
                }
            }
            run.clear();
        };
        for word in line.split(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ';' | ':' | '(' | ')' | '"' | '!' | '?')
        }) {
            let plain = word.trim_end_matches(['.', '\'']).trim_start_matches('\'');
            let parts: Vec<&str> = plain.split('-').collect();
            let is_plain = !plain.is_empty()
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphabetic()));
            if !is_plain || is_camel(plain) {
                flush(&mut run, self);
                continue;
            }
            for p in parts {
                let p = p.to_lowercase();
                if crate::query::STOP_WORDS.contains(&p.as_str()) {
                    flush(&mut run, self);
                } else {
                    run.push(p);
                }
            }
            if word.ends_with(['.', ',', ';', ':', '?', '!']) {
                flush(&mut run, self);
            }
        }
        flush(&mut run, self);
    }

    fn phrase(&mut self, key: &str) {
        if key.len() >= 6
            && self.read.phrases.len() < MAX_PHRASES
            && !self.read.phrases.iter().any(|k| k == key)
        {
            self.read.phrases.push(key.to_string());
        }
    }

    /// One line of prose or code: its backticked spans, then its words.
    fn line(&mut self, line: &str, code: bool) {
        let from = if code {
            RefSource::Code
        } else {
            RefSource::Prose
        };
        if !code {
            // `…` spans: what the writer marked as code.
            let mut parts = line.split('`');
            parts.next();
            while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
                let inside = inside.trim();
                if is_single_word(inside) {
                    self.word(inside, false, RefSource::Backtick, true);
                } else {
                    // `foo(bar)`, `from a import b`: read as code.
                    self.words(inside, RefSource::Backtick);
                }
            }
        }
        self.words(line, from);
        // "the separable module": a module by its plain name.
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            let next = pair[1].trim_matches(|c: char| !c.is_alphanumeric());
            if matches!(next, "module" | "package" | "submodule") {
                let w = pair[0].trim_matches(|c: char| !is_ident_char(c) && c != '.');
                if w.len() >= 3 && w.split('.').all(is_identifier) {
                    let parts = w.split('.').map(str::to_string).collect();
                    self.path(parts, true, from, from.weight() * 0.8);
                }
            }
        }
    }

    /// Every word of `text` that reads as code.
    fn words(&mut self, text: &str, from: RefSource) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = text[i..].chars().next().unwrap_or(' ');
            if !is_word_char(c) {
                i += c.len_utf8();
                continue;
            }
            let start = i;
            while i < bytes.len() {
                let c = text[i..].chars().next().unwrap_or(' ');
                if !is_word_char(c) {
                    break;
                }
                i += c.len_utf8();
            }
            let call = text[i..].starts_with('(');
            // `import a.b` / `from a.b import c`: a.b is a module.
            let before = text[..start].trim_end();
            let imported = before.ends_with("import") || before.ends_with("from");
            let w = &text[start..i];
            if imported {
                let parts: Vec<String> = w.split('.').map(str::to_string).collect();
                if parts.iter().all(|p| is_identifier(p)) {
                    self.path(parts, true, from, from.weight());
                }
            }
            self.word(w, call, from, false);
        }
    }

    /// One word: a path, a qualified name, an attribute chain or a name.
    /// `marked`: backticked or the whole query, so a plain word is a name.
    fn word(&mut self, w: &str, call: bool, from: RefSource, marked: bool) {
        let w = w.trim_matches(|c: char| matches!(c, '.' | ':' | ',' | ';' | '-' | '"'));
        // A prime ends a Haskell or OCaml name (`decode'`); a quote around
        // the word is no part of it.
        let w = if w.starts_with('\'') {
            w.trim_matches('\'')
        } else {
            w.trim_start_matches('\'')
        };
        if w.is_empty() || w.len() > 200 {
            return;
        }
        let weight = from.weight();
        // A marked `valid?`, `Response.ok?`, `Model#save!`: a Ruby-style name
        // whose last part ends in its mark (a path or URL never does here).
        if marked
            && let Some(core) = w.strip_suffix(['?', '!'])
            && core.ends_with(is_ident_char)
        {
            let mark = &w[core.len()..];
            let parts: Vec<&str> = core.split(['.', '#']).flat_map(|p| p.split("::")).collect();
            if parts.iter().all(|p| is_identifier(p))
                && let Some((last, rest)) = parts.split_last()
            {
                self.name(&format!("{last}{mark}"), rest.last().copied(), from, weight);
            }
            return;
        }
        if let Some(rest) = url_path(w) {
            if let Some(parts) = file_path(rest) {
                self.path(parts, false, from, weight);
            }
            return;
        }
        if w.contains("://") || w.contains('@') {
            return;
        }
        if let Some(parts) = file_path(w) {
            let weight = if parts.len() > 1 {
                weight
            } else {
                weight * 0.8
            };
            self.path(parts, false, from, weight);
            return;
        }
        if w.contains('/') || w.contains('\\') {
            return;
        }
        if w.contains("::") {
            let parts: Vec<&str> = w.split("::").filter(|p| !p.is_empty()).collect();
            if let Some((last, rest)) = parts.split_last() {
                self.name(last, rest.last().copied(), from, weight);
                if rest.last().is_some_and(|q| is_camel(q)) {
                    self.name(rest[rest.len() - 1], None, from, weight * 0.5);
                }
            }
            return;
        }
        if w.contains('.') {
            let parts: Vec<&str> = w.split('.').collect();
            if parts.len() < 2 || !parts.iter().all(|p| is_identifier(p)) {
                return;
            }
            let (last, rest) = parts.split_last().expect("two parts or more");
            let qualifier = rest.last().copied();
            self.name(last, qualifier, from, weight);
            // A name asked for alone may be dotted whole: Elixir's modules
            // (`Date.Range`), R's S3 methods (`rescale_mid.numeric`).
            if marked {
                self.dotted_name(w, from, weight);
            }
            // `Class.method`: the class is named too.
            if let Some(q) = qualifier
                && (is_camel(q) || is_snake(q))
            {
                self.name(q, rest.iter().rev().nth(1).copied(), from, weight * 0.5);
            }
            // `a.b.c`: a module (or `a.b`'s `c`).
            if !NOT_NAMES.contains(&parts[0]) && parts.iter().all(|p| p.len() >= 2) {
                let all: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
                self.path(all, true, from, weight * 0.6);
                if rest.len() >= 2 {
                    let head: Vec<String> = rest.iter().map(|p| p.to_string()).collect();
                    self.path(head, true, from, weight * 0.6);
                }
            }
            return;
        }
        if !is_identifier(w.trim_end_matches('\'')) {
            return;
        }
        if marked || is_snake(w) || is_camel(w) || (call && w.len() >= 4) {
            self.name(w, None, from, weight);
        }
    }

    fn finish(mut self) -> QueryRead {
        // Frames: the last is the innermost, where the error was raised.
        let n = self.frames.len();
        let frames = std::mem::take(&mut self.frames);
        for (i, f) in frames.into_iter().enumerate() {
            let depth = (i + 1) as f64 / n as f64;
            let weight = RefSource::Frame.weight() * (0.6 + 0.6 * depth);
            if let Some(path) = f.path {
                self.path(path, false, RefSource::Frame, weight);
            }
            if let Some(name) = f.name {
                self.name(&name, f.qualifier.as_deref(), RefSource::Frame, weight);
            }
        }
        let mut read = self.read;
        // Strongest first; among equals, first read first (a stable sort).
        read.names.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        read.names.truncate(MAX_NAMES);
        read.paths.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        read.paths.truncate(MAX_PATHS);
        read
    }
}

/// One frame of a traceback: the function (and its class) and the file.
struct Frame {
    name: Option<String>,
    qualifier: Option<String>,
    path: Option<Vec<String>>,
}

impl Frame {
    /// A frame of `path` in `function` (`_plot`, `Plot._plot(self, p)`,
    /// `pkg.Class.method`).
    fn new(path: Option<Vec<String>>, function: &str) -> Frame {
        let function = function.split('(').next().unwrap_or("").trim();
        let mut parts = function.rsplit('.');
        let name = parts
            .next()
            .filter(|n| is_identifier(n))
            .map(str::to_string);
        let qualifier = parts
            .next()
            .filter(|q| is_identifier(q))
            .map(str::to_string);
        Frame {
            name,
            qualifier,
            path,
        }
    }
}

/// A traceback frame on `line`, read into `acc`: Python's
/// `File "path", line N, in name`, IPython's `File path:N, in Class.name(…)`
/// and `path in name(…)`, and the `at name (path:line:col)` /
/// `at pkg.Class.method(File.java:12)` of JavaScript and the JVM.
fn frame(line: &str, acc: &mut Acc) -> bool {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("File \"") {
        let Some((path, after)) = rest.split_once('"') else {
            return false;
        };
        let function = after.rsplit_once(", in ").map_or("", |(_, n)| n);
        acc.frames.push(Frame::new(file_path(path), function));
        acc.read.frames += 1;
        return true;
    }
    // IPython 8: `File ~/code/pkg/plot.py:841, in Plot._plot(self, pyplot)`.
    if let Some(rest) = t.strip_prefix("File ")
        && let Some((path, function)) = rest.split_once(", in ")
        && let Some(parts) = file_path(path)
    {
        acc.frames.push(Frame::new(Some(parts), function));
        acc.read.frames += 1;
        return true;
    }
    // Older IPython: `~/lib/site-packages/pkg/core.py in concat(objs, dim)`.
    if let Some((path, function)) = t.split_once(" in ")
        && !path.contains(' ')
        && function.contains('(')
        && let Some(parts) = file_path(path)
    {
        acc.frames.push(Frame::new(Some(parts), function));
        acc.read.frames += 1;
        return true;
    }
    if let Some(rest) = t.strip_prefix("at ") {
        let (name, loc) = match rest.split_once('(') {
            Some((n, l)) => (n.trim(), l.trim_end_matches(')')),
            None => ("", rest),
        };
        let loc = loc.trim_start_matches("file://");
        let path = file_path(loc);
        if path.is_none() {
            return false;
        }
        let function = name.rsplit(' ').next().unwrap_or("");
        acc.frames.push(Frame::new(path, function));
        acc.read.frames += 1;
        return true;
    }
    false
}

/// `https://github.com/o/r/blob/main/a/b.py#L3` → `a/b.py#L3`: the path
/// inside a link to a repository's file.
fn url_path(w: &str) -> Option<&str> {
    if !w.contains("://") {
        return None;
    }
    ["/blob/", "/tree/", "/src/"].iter().find_map(|m| {
        let (_, after) = w.split_once(m)?;
        // After the marker: the branch or commit, then the path.
        after.split_once('/').map(|(_, path)| path)
    })
}

/// The components of a file path with a known extension (`a/b.py`,
/// `./b.rs:12:5`, `C:\x\y.cs`, `b.py#L10`), else `None`.
fn file_path(w: &str) -> Option<Vec<String>> {
    let w = w.split(['#', '?']).next()?;
    // `path:line:col` and `path:line`.
    let mut w = w.trim_end_matches([':', ')', ',']);
    while let Some((head, tail)) = w.rsplit_once(':') {
        if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) {
            w = head;
        } else {
            break;
        }
    }
    let parts: Vec<String> = w
        .split(['/', '\\'])
        // `~/x`, `./x`, `../x`, `C:\x`: where the writer's copy was.
        .filter(|p| !p.is_empty() && !matches!(*p, "." | ".." | "~") && !p.ends_with(':'))
        .map(str::to_string)
        .collect();
    let file = parts.last()?;
    let (stem, ext) = file.rsplit_once('.')?;
    let ok = !stem.is_empty()
        && FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        && file
            .chars()
            .all(|c| is_ident_char(c) || matches!(c, '.' | '-'))
        && !(parts.len() == 1 && stem.contains('.'));
    ok.then_some(parts)
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Characters a code word is made of (`a.b`, `a::b`, `a/b.py:3`, `-`).
fn is_word_char(c: char) -> bool {
    is_ident_char(c) || matches!(c, '.' | ':' | '/' | '\\' | '-' | '#')
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(is_ident_char)
        && s.chars().any(char::is_alphabetic)
}

/// `snake_case`, `_private`, `SOME_CONST`: an underscore inside.
fn is_snake(s: &str) -> bool {
    is_identifier(s) && (s.trim_matches('_').contains('_') || (s.starts_with('_') && s.len() > 3))
}

/// `CamelCase`, `camelCase`, `HTTPServer`: an upper-case letter after a
/// lower-case one, or two capitals and a lower-case letter.
fn is_camel(s: &str) -> bool {
    if !is_identifier(s) {
        return false;
    }
    let chars: Vec<char> = s.chars().collect();
    let lower_upper = chars
        .windows(2)
        .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
    let upper_run = chars
        .windows(3)
        .any(|w| w[0].is_uppercase() && w[1].is_uppercase() && w[2].is_lowercase());
    lower_upper || upper_run
}

/// What the names retriever found, for `--explain`.
#[derive(Clone, Debug, Default)]
pub struct NamesFound {
    /// What was read from the query.
    pub read: QueryRead,
    /// Definitions found for the names.
    pub definitions: usize,
    /// Files found for the paths.
    pub files: usize,
}

/// How a definition's name compares with the name asked for: the name
/// itself counts fully; the same key spelled otherwise (`_configure`,
/// `Configure`) a quarter: it is a twin, not the thing.
const TWIN_SHARE: f64 = 0.25;
/// A definition hidden in its type (Ruby's `private` methods) beside a
/// public one of the same name: the public one is the interface asked for.
const HIDDEN_FACTOR: f64 = 0.6;
/// A definition whose qualifier (class, module) the query also wrote.
const QUALIFIED_FACTOR: f64 = 2.0;
/// A definition whose qualifier differs from the one the query wrote.
const OTHER_QUALIFIER_FACTOR: f64 = 0.5;
/// Defining chunks read per query to see how they declare their names.
const MAX_READ_CHUNKS: usize = 768;
/// How plainly a defining chunk past [`MAX_READ_CHUNKS`] declares its name.
const UNREAD_DECLARATION: f64 = 0.7;

/// Words after which a name is declared (`struct Chain`, `def configure`,
/// `class CountryInfo`, `type Op`).
const DECLARATION_WORDS: &[&str] = &[
    "struct",
    "enum",
    "trait",
    "union",
    "type",
    "class",
    "interface",
    "module",
    "def",
    "fn",
    "func",
    "function",
    "function*",
    "protocol",
    "record",
    "object",
    "val",
    "var",
    "let",
    "const",
    "static",
    "macro_rules!",
    "typedef",
    "namespace",
    "package",
    "alias",
    // Elixir's defining macros, Haskell's type declarations, Dart's mixins,
    // Julia's macros.
    "defmodule",
    "defprotocol",
    "defp",
    "defmacro",
    "defmacrop",
    "defguard",
    "defguardp",
    "defdelegate",
    "data",
    "newtype",
    "mixin",
    "macro",
];

/// How plainly a chunk declares `name`: 1 for a declaration (a
/// declaration word before the name, or a function with its body); 0.5 for
/// an `impl` block of it, a Swift `extension` of it, a C++ specialization
/// of it (`struct formatter<…>`), or a member named like the type it is in
/// (a constructor); 0.4 for a prototype (`int f(void);` in a header); 0.7
/// when no line says (in C and C++ a name after `const` or `static` is a
/// type, and says nothing); for Objective-C, 0.5 for an `@interface` (its
/// `@implementation` is 1) and 0.4 for a method's declaration (`- (T)name;`,
/// its definition with a body is 1); for Lua, 1 for a table's function
/// (`function M.join(…)`), 0.5 for a `local function`; for an OCaml
/// interface (`.mli`), at most 0.4. Rust's `impl Chain` and C's header prototypes also
/// define their names, but the question "Chain" is asking for the struct.
fn declares(text: &str, heading: &[String], name: &str) -> f64 {
    // An OCaml interface (`.mli`) declares what its `.ml` defines, as a C
    // header's prototypes do: at most a prototype's 0.4.
    let interface = heading
        .first()
        .is_some_and(|p| p.to_ascii_lowercase().ends_with(".mli"));
    if interface {
        return declares_unbounded(text, heading, name).min(0.4);
    }
    declares_unbounded(text, heading, name)
}

/// [`declares`] without the interface bound.
fn declares_unbounded(text: &str, heading: &[String], name: &str) -> f64 {
    let member_of_itself = heading
        .iter()
        .rev()
        .skip(1)
        .any(|part| names_word(part, name));
    // A chunk of the type itself (its breadcrumb ends in the bare name, not
    // a member's signature) in C or C++: a `name(…) {` in it with no return
    // type before it is a constructor among the type's fields (fmt's
    // `constexpr basic_fp() : f(0), e(0) {}`), not the type's declaration.
    let c_family = heading.first().is_some_and(|p| {
        p.rsplit_once('.').is_some_and(|(_, ext)| {
            matches!(ext, "h" | "hh" | "hpp" | "hxx" | "cc" | "cpp" | "cxx" | "c")
        })
    });
    let own_part = heading.len() > 1 && heading.last().is_some_and(|p| p == name);
    let ext = heading
        .first()
        .and_then(|p| p.rsplit_once('.'))
        .map_or(String::new(), |(_, ext)| ext.to_ascii_lowercase());
    let mut best: Option<f64> = None;
    let mut offset = 0;
    // Inside Rust's `impl Trait for Type`: its `type Item = …;` and
    // `const N: usize = …;` give the trait's associated items a value, they
    // do not declare them (rayon's 40 `type Reducer = …` against one
    // `trait Reducer`).
    let mut in_trait_impl = false;
    for line in text.lines().take(60) {
        let at = offset;
        offset += line.len() + 1;
        let trimmed = line.trim_start();
        if (trimmed.starts_with("impl ") || trimmed.starts_with("impl<"))
            && trimmed.contains(" for ")
        {
            in_trait_impl = true;
        }
        // An Objective-C method's name follows its return type, which may
        // hold the same word (`+ (NSURL *)NSURL:(id)json`).
        let from = if trimmed.starts_with(['-', '+']) {
            line.find(')').map_or(0, |p| p + 1)
        } else {
            0
        };
        let Some(i) = word_at(&line[from..], name).map(|i| i + from) else {
            continue;
        };
        let before = line[..i].trim_end();
        let last = before
            .rsplit(|c: char| c.is_whitespace() || matches!(c, '*' | '&' | '('))
            .next()
            .unwrap_or("");
        let after = line[i + name.len()..].trim_start();
        // `class SPDLOG_API spdlog_ex`, `struct FMT_API format_error`: an
        // export macro between the declaration word and the name.
        let declared_by = before
            .split_whitespace()
            .rev()
            .find(|w| !is_macro(w))
            .unwrap_or("");
        // `spdlog_ex::spdlog_ex(…)`, `Foo::~Foo()`: a constructor or
        // destructor defined outside its class, not the class.
        let out_of_line_ctor = after.strip_prefix("::").is_some_and(|r| {
            let r = r.trim_start();
            r.starts_with('~')
                || r.strip_prefix(name)
                    .is_some_and(|t| t.trim_start().starts_with('('))
        });
        // `let Chain { a, b } = self;` and `let Some(x) = …` are patterns.
        let pattern = last == "let" && (after.starts_with('{') || after.starts_with('('));
        // Objective-C: `@implementation Name` defines a class its header's
        // `@interface Name` declares (as a C function's body and its
        // header prototype); a method `- (T)name:(U)x` is defined where a
        // body follows, declared where a `;` does.
        let objc_method =
            before.ends_with(')') && (trimmed.starts_with('-') || trimmed.starts_with('+'));
        let found = if pattern {
            continue;
        } else if out_of_line_ctor {
            0.5
        } else if last == "@implementation" || last == "@protocol" {
            1.0
        } else if last == "function" && trimmed.starts_with("local function ") {
            // Lua: a `local function` is its file's helper; the module's
            // own is `function M.name(…)` (penlight's `lapp.lua` helper
            // `lstrip` before `stringx.lstrip`).
            0.5
        } else if (last.ends_with('.') || last.ends_with(':'))
            && trimmed.starts_with("function ")
            && after.starts_with('(')
        {
            // Lua: `function M.join(…)`, `function M:render(…)`.
            1.0
        } else if last == "@interface" {
            0.5
        } else if objc_method {
            let rest = &text[(at + i).min(text.len())..];
            match (rest.find('{'), rest.find(';')) {
                (Some(b), Some(s)) if s < b => 0.4,
                (None, Some(_)) => 0.4,
                (Some(_), _) => 1.0,
                _ => continue,
            }
        } else if in_trait_impl && matches!(last, "type" | "const") {
            0.5
        } else if c_family && matches!(declared_by, "struct" | "class") && after.starts_with('<') {
            // `struct is_output_iterator<It, T, …>`: a specialization of the
            // template that `struct is_output_iterator : std::false_type {}`
            // declares (fmt's `formatter<…>` specializations against
            // `struct formatter`).
            0.5
        } else if matches!(last, "instance" | "defimpl") {
            // Haskell's `instance FromJSON Bool` and Elixir's `defimpl Size,
            // for: Map` implement what `class FromJSON` and `defprotocol
            // Size` declare, as Rust's `impl Trait for Type` does.
            0.5
        } else if before.is_empty() && declared_at_start(&ext, after) {
            1.0
        } else if last == "extension" {
            // Swift's `extension Enumerable { … }` adds to a type or protocol
            // that `protocol Enumerable` declares, as Rust's `impl` does
            // (expo's `extension BaseModule: EventEmitter` before `open class
            // BaseModule`).
            0.5
        } else if c_family && matches!(last, "const" | "static") {
            // In C and C++ a name after `const` or `static` is a type
            // (`void operator=(const basic_format_context&)`, `static Foo*
            // make()`): what they declare comes after it.
            continue;
        } else if DECLARATION_WORDS.contains(&last)
            || (is_macro(last) && DECLARATION_WORDS.contains(&declared_by))
        {
            1.0
        } else if trimmed.starts_with("impl") {
            0.5
        } else if line[i + name.len()..].trim_start().starts_with('(') {
            // A function: its body (`{`) or a prototype (`;`), whichever
            // comes first after the name.
            let rest = &text[(at + i).min(text.len())..];
            let body = rest.find('{');
            let semi = rest.find(';');
            match (body, semi) {
                (Some(b), Some(s)) if s < b => 0.4,
                (None, Some(_)) => 0.4,
                (Some(_), _) if member_of_itself => 0.5,
                (Some(_), _) if c_family && own_part && is_specifier(last) => 0.5,
                (Some(_), _) => 1.0,
                _ => continue,
            }
        } else {
            continue;
        };
        if found >= 1.0 {
            return 1.0;
        }
        best = Some(best.map_or(found, |b: f64| b.max(found)));
    }
    best.unwrap_or(UNREAD_DECLARATION)
}

/// Whether a line that starts with a name declares it, by what follows
/// the name in its language: R's `name <- function(…)` (and a class made by
/// `ggproto(…)`, `R6Class(…)`, `setRefClass(…)`), Haskell's signature
/// `name :: T` and equation `name x y = …`, Julia's `name(x) = …`.
fn declared_at_start(ext: &str, after: &str) -> bool {
    match ext {
        "r" => ["<-", "<<-", "="].iter().any(|op| {
            after.strip_prefix(op).is_some_and(|rest| {
                let rest = rest.trim_start();
                [
                    "function",
                    "ggproto(",
                    "R6Class(",
                    "R6::R6Class(",
                    "setRefClass(",
                ]
                .iter()
                .any(|v| rest.starts_with(v))
            })
        }),
        "hs" => {
            after.starts_with(":: ")
                || after
                    .find(" = ")
                    .or_else(|| after.strip_prefix("= ").map(|_| 0))
                    .is_some_and(|eq| {
                        // The patterns before `=`: no operator of an
                        // expression (`x == y`, `a <- b`).
                        !after[..eq].contains(['<', '>', '|', '$'])
                    })
        }
        "jl" => {
            after.starts_with('(')
                && after.find(')').is_some_and(|close| {
                    let rest = after[close + 1..].trim_start();
                    let rest = rest.strip_prefix("where").map_or(rest, |r| {
                        r.trim_start()
                            .strip_prefix('{')
                            .and_then(|r| r.split_once('}'))
                            .map_or(r, |(_, r)| r)
                            .trim_start()
                    });
                    rest.starts_with("= ") || rest.starts_with("=\n") || rest == "="
                })
        }
        _ => false,
    }
}

/// What may stand before a C++ constructor's name: nothing, a specifier, or
/// an all-capitals macro (`FMT_CONSTEXPR`); a function has a return type.
fn is_specifier(word: &str) -> bool {
    matches!(
        word,
        "" | "constexpr" | "explicit" | "inline" | "{" | "}" | ";"
    ) || (word.len() > 1
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
}

/// An all-capitals word of two characters or more (`SPDLOG_API`,
/// `FMT_CONSTEXPR`): a macro, in C and C++ an attribute or export mark.
fn is_macro(word: &str) -> bool {
    word.len() > 1
        && word.chars().any(|c| c.is_ascii_uppercase())
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Where `word` stands in `line` as a whole word, if it does.
fn word_at(line: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(j) = line[from..].find(word) {
        let i = from + j;
        let end = i + word.len();
        let before_ok = line[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident_char(c));
        let after_ok = line[end..].chars().next().is_none_or(|c| !is_ident_char(c));
        if before_ok && after_ok {
            return Some(i);
        }
        from = end;
    }
    None
}

/// A definition in a module named after it (`concat` in `concat.py`).
const MODULE_NAMED_FACTOR: f64 = 1.5;
/// The share of the rest of its file's evidence a hit gets: a file that
/// holds three of a traceback's frames beats one that holds one.
const FILE_SHARE: f64 = 0.5;

/// What [`names_list`] returns: the list, what it found, the chunks it read.
pub type NamesListed = (Vec<Scored<ChunkId>>, NamesFound, Vec<cairn_core::ChunkRow>);

/// The names retriever's list: chunks that define what the query names,
/// and the first chunk of each file it names, scored by the evidence (its
/// weight, how exactly it matched, how many other definitions share the
/// name), best first, at most `depth`; with the defining chunks it read
/// (the ranking fetches no candidate twice).
pub fn names_list(
    snap: &dyn IndexSnapshot,
    read: &QueryRead,
    depth: usize,
    path_prefix: Option<&str>,
) -> Result<NamesListed, StoreError> {
    let mut found = NamesFound {
        read: read.clone(),
        ..NamesFound::default()
    };
    let mut score: HashMap<i64, f64> = HashMap::new();
    let mut file_of: HashMap<i64, String> = HashMap::new();
    // Per file, per piece of evidence (a name, a phrase, a path of the
    // query), the best any of its chunks got: two definitions of one name
    // in one file are one piece of evidence, not two.
    let mut evidence: HashMap<(String, usize), f64> = HashMap::new();
    let note = |evidence: &mut HashMap<(String, usize), f64>, path: &str, piece: usize, s: f64| {
        let e = evidence.entry((path.to_string(), piece)).or_default();
        *e = e.max(s);
    };
    let in_prefix = |p: &str| path_prefix.is_none_or(|pre| p.starts_with(pre));
    // Definitions, with the chunks that name their qualifiers.
    let mut wanted: Vec<(&NameRef, Vec<cairn_core::DefinitionRow>)> = Vec::new();
    let mut keys: HashMap<String, Vec<cairn_core::DefinitionRow>> = HashMap::new();
    for r in &read.names {
        let key = entity_key(&r.name);
        let rows = match keys.get(&key) {
            Some(rows) => rows.clone(),
            None => {
                let rows = snap.definitions(&key, DEFS_PER_NAME)?;
                keys.insert(key, rows.clone());
                rows
            }
        };
        let rows: Vec<_> = rows.into_iter().filter(|d| in_prefix(&d.path)).collect();
        if !rows.is_empty() {
            wanted.push((r, rows));
        }
    }
    // The defining chunks themselves (at most MAX_READ_CHUNKS): how plainly
    // each declares its name, and the breadcrumb a qualifier is looked for in.
    let mut ids: Vec<i64> = wanted
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|d| d.chunk))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids.truncate(MAX_READ_CHUNKS);
    let read_rows = snap.chunks(&ids)?;
    let chunks: HashMap<i64, &cairn_core::Chunk> =
        read_rows.iter().map(|c| (c.rowid, &c.chunk)).collect();
    let mut per_chunk: HashMap<(i64, usize), f64> = HashMap::new();
    for (piece, (r, rows)) in wanted.iter().enumerate() {
        let exact = rows.iter().filter(|d| d.name == r.name).count();
        for d in rows {
            let (share, among) = if d.name == r.name {
                (1.0, exact)
            } else {
                (TWIN_SHARE, rows.len())
            };
            let mut s = r.weight * share / (among.max(1) as f64).sqrt();
            if d.hidden {
                s *= HIDDEN_FACTOR;
            }
            let chunk = chunks.get(&d.chunk);
            s *= chunk.map_or(UNREAD_DECLARATION, |c| {
                declares(&c.text, &c.heading_path, &d.name)
            });
            if let Some(q) = &r.qualifier {
                let stem = file_stem(&d.path);
                let in_heading =
                    chunk.is_some_and(|c| c.heading_path.iter().any(|part| names_word(part, q)));
                s *= if in_heading || stem == q.as_str() {
                    QUALIFIED_FACTOR
                } else {
                    OTHER_QUALIFIER_FACTOR
                };
            }
            // A module named after what it defines (`concat.py` for
            // `concat`): the definition, not a method of the same name.
            if entity_key(file_stem(&d.path)) == entity_key(&r.name) {
                s *= MODULE_NAMED_FACTOR;
            }
            // Two definitions of the name in one chunk (`impl Iterator for
            // SliceDrain` and `impl FusedIterator for SliceDrain`) are one
            // piece of evidence: the best counts, not their sum.
            let e = per_chunk.entry((d.chunk, piece)).or_default();
            *e = e.max(s);
            note(&mut evidence, &d.path, piece, s);
            file_of.insert(d.chunk, d.path.clone());
            found.definitions += 1;
        }
    }
    for ((chunk, _), s) in per_chunk {
        *score.entry(chunk).or_default() += s;
    }
    // Word phrases: any spelling of the name, weighed as plain words are.
    for (i, key) in read.phrases.iter().enumerate() {
        let piece = wanted.len() + i;
        let rows = match keys.get(key) {
            Some(rows) => rows.clone(),
            None => snap.definitions(key, DEFS_PER_NAME)?,
        };
        let rows: Vec<_> = rows.into_iter().filter(|d| in_prefix(&d.path)).collect();
        let n = rows.len();
        for d in rows {
            let s = RefSource::Words.weight() / (n as f64).sqrt();
            *score.entry(d.chunk).or_default() += s;
            note(&mut evidence, &d.path, piece, s);
            file_of.insert(d.chunk, d.path.clone());
            found.definitions += 1;
        }
    }
    // Files.
    for (i, p) in read.paths.iter().enumerate() {
        let piece = wanted.len() + read.phrases.len() + i;
        let Some(last) = p.parts.last() else {
            continue;
        };
        let files = snap.files_named(last, FILES_PER_PATH)?;
        let matched: Vec<(f64, &cairn_core::FileRow)> = files
            .iter()
            .filter(|f| in_prefix(&f.path))
            .filter_map(|f| path_match(p, &f.path).map(|m| (m, f)))
            .collect();
        let n = matched.len();
        for (m, f) in matched {
            let s = p.weight * m / (n as f64).sqrt();
            *score.entry(f.first_chunk).or_default() += s;
            note(&mut evidence, &f.path, piece, s);
            file_of.insert(f.first_chunk, f.path.clone());
            found.files += 1;
        }
    }
    // Each hit shares in the rest of its file's evidence.
    let mut per_file: HashMap<&str, f64> = HashMap::new();
    for ((path, _), s) in &evidence {
        *per_file.entry(path.as_str()).or_default() += s;
    }
    let mut list: Vec<Scored<ChunkId>> = score
        .iter()
        .map(|(chunk, s)| {
            let file = file_of
                .get(chunk)
                .and_then(|f| per_file.get(f.as_str()))
                .copied()
                .unwrap_or(0.0);
            Scored::new(ChunkId(*chunk), s + FILE_SHARE * (file - s).max(0.0))
        })
        .collect();
    list.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    list.truncate(depth);
    Ok((list, found, read_rows))
}

/// The file name of `path` without its extension.
fn file_stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split_once('.').map_or(file, |(stem, _)| stem)
}

/// Whether a breadcrumb part (`class ProcessorFormatter(logging.Formatter)`,
/// `impl Engine`) holds `word` as a whole word.
fn names_word(part: &str, word: &str) -> bool {
    part.split(|c: char| !is_ident_char(c)).any(|w| w == word)
}

/// How well an indexed `path` matches a path or module the query named:
/// the share of the query's components its tail matches (1 = all of
/// them), `None` when the file name does not match or too little does
/// (one component of an absolute traceback path is not evidence enough
/// when the indexed file sits in a folder).
fn path_match(p: &PathRef, path: &str) -> Option<f64> {
    let mut have: Vec<&str> = path.split('/').collect();
    if p.module {
        // `a/b/c.py`, `a/b/c/__init__.py`, `a/b/c/mod.rs` are module `a.b.c`.
        let last = have.pop()?;
        let stem = last.split_once('.').map_or(last, |(s, _)| s);
        if !matches!(stem, "__init__" | "mod" | "index" | "lib") || have.is_empty() {
            have.push(stem);
        }
    }
    let want: Vec<&str> = p.parts.iter().map(String::as_str).collect();
    let common = want
        .iter()
        .rev()
        .zip(have.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return None;
    }
    let need = want.len().min(have.len()).min(2);
    if common < need {
        return None;
    }
    Some(common as f64 / want.len().min(have.len()) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(r: &QueryRead) -> Vec<(String, Option<String>, RefSource)> {
        r.names
            .iter()
            .map(|n| (n.name.clone(), n.qualifier.clone(), n.from))
            .collect()
    }

    fn paths(r: &QueryRead) -> Vec<String> {
        r.paths.iter().map(PathRef::display).collect()
    }

    #[test]
    fn a_query_that_is_a_name_is_read_whole() {
        let r = read_names("configure");
        assert!(r.whole);
        assert_eq!(names(&r), [("configure".into(), None, RefSource::Query)]);
        let r = read_names("`ProcessorFormatter.wrap_for_formatter`");
        assert!(r.whole);
        assert_eq!(r.names[0].name, "wrap_for_formatter");
        assert_eq!(r.names[0].qualifier.as_deref(), Some("ProcessorFormatter"));
        assert!(!read_names("how does caching work").whole);
        let r = read_names("how does caching work");
        assert!(r.names.is_empty() && r.paths.is_empty());
        assert_eq!(r.phrases, ["cachingwork"]);
    }

    #[test]
    fn primes_and_dotted_names_are_read_whole() {
        // Haskell's `decode'` is its own name; `'decode'` is `decode` quoted.
        let r = read_names("decode'");
        assert_eq!(names(&r), [("decode'".into(), None, RefSource::Query)]);
        let r = read_names("'decode'");
        assert_eq!(names(&r), [("decode".into(), None, RefSource::Query)]);
        // Elixir's `Date.Range` and R's `rescale_mid.numeric` are defined
        // under their dotted names: the whole is a name too.
        for q in ["Date.Range", "rescale_mid.numeric"] {
            let r = read_names(q);
            assert!(r.names.iter().any(|n| n.name == q), "{q}: {:?}", names(&r));
        }
        // In prose a dotted word is a qualified name, not a dotted one.
        let r = read_names("why does Date.Range not step by months here");
        assert!(
            r.names.iter().all(|n| n.name != "Date.Range"),
            "{:?}",
            names(&r)
        );
    }

    #[test]
    fn ruby_names_keep_their_mark() {
        let r = read_names("created?");
        assert!(r.whole);
        assert_eq!(names(&r), [("created?".into(), None, RefSource::Query)]);
        let r = read_names("`Response.set_cookie_header!`");
        assert_eq!(r.names[0].name, "set_cookie_header!");
        assert_eq!(r.names[0].qualifier.as_deref(), Some("Response"));
        // In prose, `?` ends a question: `valid` unmarked is not a name, and
        // `configure?` read from prose keeps no mark.
        let r = read_names("why is make_filtering_bound_logger? slow");
        assert_eq!(r.names[0].name, "make_filtering_bound_logger");
        let r = read_names("is `valid?` ever false?");
        assert_eq!(r.names[0].name, "valid?");
    }

    #[test]
    fn prose_names_are_the_ones_written_as_code() {
        let r = read_names(
            "Calling separability_matrix on a CompoundModel gives wrong output; see the docs.",
        );
        let n: Vec<String> = r.names.iter().map(|n| n.name.clone()).collect();
        assert_eq!(n, ["separability_matrix", "CompoundModel"]);
    }

    #[test]
    fn a_python_traceback_gives_frames_innermost_first() {
        let q = "It fails:\n\nTraceback (most recent call last):\n  File \"/home/u/x.py\", line 3, in <module>\n    main()\n  File \"/usr/lib/python3/site-packages/astropy/modeling/separable.py\", line 99, in separability_matrix\n    x = _separable(transform)\n  File \"astropy/modeling/core.py\", line 12, in _cstack\n    raise ValueError\nValueError: bad\n";
        let r = read_names(q);
        assert_eq!(r.frames, 3);
        assert_eq!(r.names[0].name, "_cstack");
        assert_eq!(r.names[0].from, RefSource::Frame);
        let p = paths(&r);
        assert_eq!(p[0], "astropy/modeling/core.py");
        assert!(p.contains(&"usr/lib/python3/site-packages/astropy/modeling/separable.py".into()));
    }

    #[test]
    fn ipython_tracebacks_give_frames_with_their_classes() {
        let q = "```python-traceback\nTypeError   Traceback (most recent call last)\n...\nFile ~/code/seaborn/seaborn/_core/plot.py:841, in Plot._plot(self, pyplot)\n    838 plotter._compute_stats(self, layers)\nFile ~/code/seaborn/seaborn/_core/scales.py:351, in ContinuousBase._setup(self, data, prop, axis)\n--> 351 b = forward(vmax)\n```\n\n~/miniconda3/lib/python3.7/site-packages/xarray/core/concat.py in concat(objs, dim)\n";
        let r = read_names(q);
        assert_eq!(r.frames, 3);
        let setup = r.names.iter().find(|n| n.name == "_setup").unwrap();
        assert_eq!(setup.qualifier.as_deref(), Some("ContinuousBase"));
        assert_eq!(setup.from, RefSource::Frame);
        let p = paths(&r);
        assert!(
            p.contains(&"code/seaborn/seaborn/_core/scales.py".to_string()),
            "{p:?}"
        );
        assert!(
            p.iter().any(|x| x.ends_with("xarray/core/concat.py")),
            "{p:?}"
        );
    }

    #[test]
    fn paths_modules_and_imports_are_read() {
        let r = read_names(
            "In astropy/modeling/separable.py and in `utils.py`, from astropy.io import fits; the separable module",
        );
        let p = paths(&r);
        for want in [
            "astropy/modeling/separable.py",
            "utils.py",
            "astropy.io",
            "separable",
        ] {
            assert!(p.contains(&want.to_string()), "{want} in {p:?}");
        }
        let r = read_names("see https://github.com/o/r/blob/main/src/lib/core.rs#L10 for it");
        assert_eq!(paths(&r), ["src/lib/core.rs"]);
    }

    #[test]
    fn rust_and_js_qualified_names() {
        let r = read_names("`cairn_search::rank::RankSettings::default` and obj.fooBar()");
        assert!(names(&r).contains(&(
            "default".into(),
            Some("RankSettings".into()),
            RefSource::Backtick
        )));
        assert!(r.names.iter().any(|n| n.name == "fooBar"));
        let r = read_names("    at parseArgs (src/cli/args.js:10:5)\n");
        assert_eq!(r.frames, 1);
        assert_eq!(r.names[0].name, "parseArgs");
        assert_eq!(paths(&r), ["src/cli/args.js"]);
    }

    #[test]
    fn versions_urls_and_receivers_are_not_names() {
        let r = read_names("numpy 1.24.3 on https://example.com/x, self.x, np.array, e.g. foo");
        assert!(
            r.names.iter().all(|n| n.name != "24" && n.name != "self"),
            "{r:?}"
        );
        assert!(
            r.paths
                .iter()
                .all(|p| p.parts[0] != "np" && p.parts[0] != "self"),
            "{r:?}"
        );
    }

    #[test]
    fn plain_words_that_spell_a_name_are_read_as_phrases() {
        let r = read_names("where are the log processors' call-site parameters added?");
        for want in ["callsiteparameters", "callsiteparameter", "logprocessors"] {
            assert!(
                r.phrases.contains(&want.to_string()),
                "{want} in {:?}",
                r.phrases
            );
        }
        // A stop word, punctuation or a code word breaks a run.
        let r = read_names("the cache of the server. Session `foo_bar` store");
        assert!(
            !r.phrases
                .iter()
                .any(|p| p.contains("cacheserver") || p.contains("serversession"))
        );
    }

    #[test]
    fn a_huge_query_is_read_in_bounded_time_and_space() {
        let mut q = String::new();
        for i in 0..20_000 {
            q.push_str(&format!("name_{i} Cls{i}Name a{i}/b.py "));
        }
        let r = read_names(&q);
        assert!(r.names.len() <= MAX_NAMES && r.paths.len() <= MAX_PATHS);
        assert!(r.phrases.len() <= MAX_PHRASES);
    }

    #[test]
    fn a_declaration_outranks_an_impl_a_constructor_and_a_prototype() {
        let h = |parts: &[&str]| parts.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let crumb = h(&["src/chain.rs", "Chain"]);
        assert_eq!(
            declares(
                "/// Doc.\npub struct Chain<A, B> {\n    a: A,\n}",
                &crumb,
                "Chain"
            ),
            1.0
        );
        assert_eq!(
            declares(
                "impl<A, B> Chain<A, B> {\n    fn new() {}\n}",
                &crumb,
                "Chain"
            ),
            0.5
        );
        let c = h(&["zlib.h"]);
        assert_eq!(
            declares(
                "ZEXTERN int ZEXPORT compress2(Bytef *dest,\n    uLong n);",
                &c,
                "compress2"
            ),
            0.4
        );
        assert_eq!(
            declares(
                "int ZEXPORT compress2(Bytef *dest, uLong n)\n{\n    return 0;\n}",
                &c,
                "compress2"
            ),
            1.0
        );
        let ctor = h(&[
            "color.h",
            "ansi_color_escape",
            "ansi_color_escape(emphasis em)",
        ]);
        assert_eq!(
            declares(
                "  FMT_CONSTEXPR ansi_color_escape(emphasis em) noexcept {\n  }",
                &ctor,
                "ansi_color_escape"
            ),
            0.5
        );
        assert_eq!(
            declares(
                "    def configure(x):\n        pass",
                &h(&["a.py"]),
                "configure"
            ),
            1.0
        );
        assert_eq!(
            declares(
                "func (w *Watcher) Add(name string) error {\n}",
                &h(&["w.go"]),
                "Add"
            ),
            1.0
        );
        assert_eq!(
            declares("x = 1", &h(&["a.py"]), "configure"),
            UNREAD_DECLARATION
        );
        // Objective-C: the header's interface and method declarations
        // give way to the implementation and its method bodies.
        let header = "@interface RCTConvert : NSObject\n+ (NSURL *)NSURL:(id)json;\n@end";
        let body =
            "@implementation RCTConvert\n+ (NSURL *)NSURL:(id)json\n{\n  return nil;\n}\n@end";
        let crumb_h = h(&["RCTConvert.h", "RCTConvert"]);
        let crumb_m = h(&["RCTConvert.mm", "RCTConvert"]);
        assert_eq!(declares(header, &crumb_h, "RCTConvert"), 0.5);
        assert_eq!(declares(body, &crumb_m, "RCTConvert"), 1.0);
        assert_eq!(declares(header, &crumb_h, "NSURL"), 0.4);
        assert_eq!(declares(body, &crumb_m, "NSURL"), 1.0);
        // OCaml: an interface's `val` gives way to the implementation's `let`.
        assert_eq!(
            declares(
                "val exec : re -> string -> Group.t",
                &h(&["re/core.mli"]),
                "exec"
            ),
            0.4
        );
        assert_eq!(
            declares(
                "let exec re s = exec_internal re s",
                &h(&["re/core.ml"]),
                "exec"
            ),
            1.0
        );
        // Lua: a table's function is the module's, a local one its helper.
        let lua = h(&["pl/stringx.lua"]);
        assert_eq!(
            declares(
                "function stringx.lstrip(s, chrs)\n  return s\nend",
                &lua,
                "lstrip"
            ),
            1.0
        );
        assert_eq!(
            declares("function List:append(x)\nend", &lua, "append"),
            1.0
        );
        assert_eq!(
            declares("local function lstrip(str) return str end", &lua, "lstrip"),
            0.5
        );
        // C++: a template's specialization against the template.
        let hpp = h(&["fmt/core.h"]);
        assert_eq!(
            declares(
                "template <typename It, typename T, typename Enable = void>\nstruct is_output_iterator : std::false_type {};",
                &hpp,
                "is_output_iterator"
            ),
            1.0
        );
        assert_eq!(
            declares(
                "template <typename It, typename T>\nstruct is_output_iterator<\n    It, T, void_t<int>> : std::true_type {};",
                &hpp,
                "is_output_iterator"
            ),
            0.5
        );
        // C++: a parameter's type after `const` declares nothing.
        assert_eq!(
            declares(
                " private:\n  OutputIt out_;\n\n public:\n  basic_format_context(basic_format_context&&) = default;\n  void operator=(const basic_format_context&) = delete;",
                &h(&["fmt/core.h", "basic_format_context"]),
                "basic_format_context"
            ),
            0.4
        );
        // Swift: an extension adds to the protocol or class that declares it.
        let swift = h(&["Core/Arguments/Enumerable.swift"]);
        assert_eq!(
            declares(
                "public protocol Enumerable: AnyArgument {\n  var anyRawValue: Any { get }\n}",
                &swift,
                "Enumerable"
            ),
            1.0
        );
        assert_eq!(
            declares(
                "public extension Enumerable {\n  static func f() {}\n}",
                &swift,
                "Enumerable"
            ),
            0.5
        );
        let header = "@interface RCTBridge : NSObject\n- (void)reload __deprecated_msg(\"Use RCTReloadCommand\");\n@end";
        let body = "@implementation RCTBridge\n- (void)reload\n{\n  [self invalidate];\n}\n@end";
        assert_eq!(
            declares(header, &h(&["RCTBridge.h", "RCTBridge"]), "reload"),
            0.4
        );
        assert_eq!(
            declares(body, &h(&["RCTBridge.mm", "RCTBridge"]), "reload"),
            1.0
        );
        assert_eq!(
            declares(
                "@protocol RCTBridgeDelegate <NSObject>\n@end",
                &crumb_h,
                "RCTBridgeDelegate"
            ),
            1.0
        );
        // rayon: a destructuring `let` is no declaration, and an impl of a
        // trait gives its associated type a value, it does not declare it.
        assert_eq!(
            declares(
                "impl<'c, T> Consumer<T> for CollectConsumer<'c, T> {\n    fn split_at(self) {\n        let CollectConsumer { start, len, .. } = self;\n    }\n}",
                &crumb,
                "CollectConsumer"
            ),
            0.5
        );
        assert_eq!(
            declares(
                "impl<T> Consumer<T> for ReduceConsumer<T> {\n    type Reducer = Self;\n}",
                &h(&["reduce.rs", "ReduceConsumer"]),
                "Reducer"
            ),
            0.5
        );
        // fmt's fields chunk of `struct basic_fp`: its constructor is not
        // the struct; a function of the same breadcrumb keeps its 1.
        assert_eq!(
            declares(
                "  F f;\n  int e;\n  constexpr basic_fp() : f(0), e(0) {}",
                &h(&["fmt/format.h", "basic_fp"]),
                "basic_fp"
            ),
            0.5
        );
        assert_eq!(
            declares(
                "inline auto count_code_points(string_view s) -> size_t {\n  return 0;\n}",
                &h(&["fmt/format.h", "count_code_points"]),
                "count_code_points"
            ),
            1.0
        );
        // spdlog: an export macro after `class`; the class's constructors
        // defined outside it (`-inl.h`) are not the class.
        assert_eq!(
            declares(
                "class SPDLOG_API spdlog_ex : public std::exception\n{\npublic:\n    explicit spdlog_ex(std::string msg);",
                &h(&["common.h", "spdlog_ex"]),
                "spdlog_ex"
            ),
            1.0
        );
        assert_eq!(
            declares(
                "SPDLOG_INLINE spdlog_ex::spdlog_ex(std::string msg)\n    : msg_(std::move(msg))\n{}",
                &h(&["common-inl.h", "spdlog_ex"]),
                "spdlog_ex"
            ),
            0.5
        );
        assert_eq!(
            declares(
                "SPDLOG_INLINE void logger::flush()\n{\n    flush_();\n}",
                &h(&["logger-inl.h", "logger", "flush"]),
                "flush"
            ),
            1.0
        );
        assert_eq!(
            declares(
                "pub trait Reducer<Result> {\n    fn reduce(self, left: Result) -> Result;\n}",
                &h(&["plumbing/mod.rs", "Reducer"]),
                "Reducer"
            ),
            1.0
        );
    }

    #[test]
    fn the_new_languages_declarations_are_read() {
        let h = |parts: &[&str]| parts.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // R: a function or a class assigned to its name.
        let r = h(&["R/plot.r", "ggplot"]);
        assert_eq!(
            declares("ggplot <- function(data = NULL) {\n}", &r, "ggplot"),
            1.0
        );
        assert_eq!(declares("Geom <- ggproto(\"Geom\",\n)", &r, "Geom"), 1.0);
        assert_eq!(
            declares("p <- ggplot(df)\nggplot", &r, "ggplot"),
            UNREAD_DECLARATION
        );
        // Haskell: a signature or an equation; an instance implements.
        let hs = h(&["src/Data/Aeson.hs", "decode"]);
        assert_eq!(declares("decode :: Text -> Maybe a", &hs, "decode"), 1.0);
        assert_eq!(declares("decode t = parse t", &hs, "decode"), 1.0);
        assert_eq!(
            declares("instance FromJSON Bool where", &hs, "FromJSON"),
            0.5
        );
        assert_eq!(declares("class FromJSON a where", &hs, "FromJSON"), 1.0);
        assert_eq!(declares("data Value = Object", &hs, "Value"), 1.0);
        // Julia: the short form of a function.
        let jl = h(&["src/PythonCall.jl", "pyconvert"]);
        assert_eq!(
            declares(
                "pyconvert(::Type{T}, x) where {T} = convert(T, x)",
                &jl,
                "pyconvert"
            ),
            1.0
        );
        assert_eq!(
            declares("pyconvert(Int, x) == 1", &jl, "pyconvert"),
            UNREAD_DECLARATION
        );
        // Elixir's defining macros.
        let ex = h(&["lib/enum.ex", "Enum"]);
        assert_eq!(
            declares("defp reduce_all(list), do: list", &ex, "reduce_all"),
            1.0
        );
        assert_eq!(declares("defimpl Size, for: Map do", &ex, "Size"), 0.5);
    }

    #[test]
    fn path_matching_wants_the_file_and_its_folder() {
        let p = |s: &str, module| PathRef {
            parts: s.split(['/', '.']).map(str::to_string).collect(),
            module,
            from: RefSource::Prose,
            weight: 1.0,
        };
        let file = |s: &str| PathRef {
            parts: s.split('/').map(str::to_string).collect(),
            module: false,
            from: RefSource::Prose,
            weight: 1.0,
        };
        let abs = file("usr/lib/site-packages/astropy/modeling/separable.py");
        assert_eq!(path_match(&abs, "astropy/modeling/separable.py"), Some(1.0));
        assert_eq!(path_match(&abs, "docs/separable.py"), None);
        assert_eq!(
            path_match(&file("separable.py"), "a/b/separable.py"),
            Some(1.0)
        );
        let m = p("astropy.modeling.separable", true);
        assert_eq!(path_match(&m, "astropy/modeling/separable.py"), Some(1.0));
        assert_eq!(
            path_match(&m, "astropy/modeling/separable/__init__.py"),
            Some(1.0)
        );
        assert!(path_match(&m, "astropy/other/separable.py").is_none());
        assert_eq!(
            path_match(&p("separable", true), "x/separable.py"),
            Some(1.0)
        );
    }
}
