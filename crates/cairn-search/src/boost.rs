//! Boosts applied after fusion.

/// Factor for chunks in the same domain as the file being edited.
pub const DOMAIN_BOOST: f64 = 1.3;
/// Factor for chunks of `*.instructions.md` files (agent instructions).
pub const INSTRUCTIONS_BOOST: f64 = 1.2;

/// The domain of a document: the first folder of its path relative to the
/// knowledge-base root it was indexed from (`docs/cache/redis.md` indexed from
/// `docs` → `cache`); empty for files at the root. Stored with each
/// document; ranking matches [`domain_words`] instead.
pub fn domain_of(path_in_root: &str) -> &str {
    match path_in_root.split_once('/') {
        Some((first, _)) => first,
        None => "",
    }
}

/// Folder names that say how a project is laid out, not what a file is
/// about: sharing one (`src/`, `docs/`) puts two files in no common domain.
const LAYOUT_FOLDERS: [&str; 40] = [
    "src",
    "source",
    "sources",
    "lib",
    "libs",
    "docs",
    "doc",
    "documentation",
    "app",
    "apps",
    "pkg",
    "packages",
    "internal",
    "cmd",
    "crates",
    "include",
    "main",
    "java",
    "kotlin",
    "scala",
    "python",
    "js",
    "ts",
    "com",
    "org",
    "net",
    "examples",
    "example",
    "scripts",
    "bin",
    "public",
    "static",
    "assets",
    "content",
    "pages",
    "guide",
    "guides",
    "reference",
    ".cairn",
    "memory",
];

/// The domain words of a project-relative path: its folder names,
/// lower-cased, less the layout folders (`src`, `docs`, `crates`, …).
/// `src/Caching/RedisCache.cs` → `caching`; `docs/caching/redis.md` →
/// `caching`; `crates/cairn-search/src/boost.rs` → `cairn-search`.
pub fn domain_words(path: &str) -> Vec<String> {
    let mut parts: Vec<&str> = path.split(['/', '\\']).collect();
    parts.pop(); // the file name
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        let w = p.to_lowercase();
        if !w.is_empty()
            && w != "."
            && w != ".."
            && !LAYOUT_FOLDERS.contains(&w.as_str())
            && !out.contains(&w)
        {
            out.push(w);
        }
    }
    out
}

/// Whether a hit at `path` shares a domain with the file being edited,
/// whose [`domain_words`] are `current`: one of the hit's folder names, or
/// its file name without extension, is one of them, case aside
/// (`docs/Caching/overview.md` and `docs/caching.md` are both in the domain
/// of `src/caching/redis.rs`).
pub fn in_domain(current: &[String], path: &str) -> bool {
    if current.is_empty() {
        return false;
    }
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file).to_lowercase();
    current.contains(&stem) || domain_words(path).iter().any(|w| current.contains(w))
}

/// Whether a path is an instructions file.
pub fn is_instructions(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".instructions.md")
}

/// Factor for tests (folders such as `tests/`, files such as `test_x.py`,
/// `x_test.go`, `x.spec.ts`) when the query does not ask about tests: a test
/// repeats the words of the code it tests, and outranked the code that
/// answers for 5 of 20 questions on a real Python library.
pub const TEST_FACTOR: f64 = 0.5;
/// Factor for changelogs and release notes when the query does not ask about
/// changes or versions: they name every feature once and answer nothing.
pub const CHANGELOG_FACTOR: f64 = 0.5;
/// Factor for lock files (`Cargo.lock`, `yarn.lock`, `go.sum`…, indexed only
/// when `[index] extensions` names their extension) when the query does not
/// ask about dependencies or versions: every dependency's name, no answer.
pub const LOCK_FACTOR: f64 = 0.5;
/// Factor for vendored and third-party code (`vendor/`, `third_party/`,
/// `node_modules/`…) when the query does not ask about dependencies: it is
/// someone else's answer to someone else's question.
pub const VENDORED_FACTOR: f64 = 0.5;
/// Factor for generated code the indexer did not recognise as such by its
/// contents (`generated/` folders, `*_generated.*`, `*.gen.*`, `*_gen.go`,
/// JavaScript bundles and TypeScript declarations under `dist/`)
/// when the query does not ask about generated code. Files that say they are
/// generated, and minified ones, are not indexed at all.
pub const GENERATED_FACTOR: f64 = 0.5;

/// Factor for contributor guides and codes of conduct when the query does
/// not ask how to contribute: they tell how the project is run (its style
/// guide, review and release process), in the words of what it does — a
/// Markdown library's "Documentation Style Guide > Headers" ranked first for
/// "how does the parser recognise a heading underlined with ===".
pub const CONTRIBUTING_FACTOR: f64 = 0.5;

/// Factor for an other file — one whose extension is not among `[index]
/// extensions`, indexed in line windows (a `.vcxproj`, an HTML template,
/// `MANIFEST.in`) — when the query names neither its extension nor its
/// name: such a file shares the words of the code it builds or renders and
/// answers for none of it (code-QA, both halves, with other files read:
/// tune 0.8495 → 0.8454, test 0.7726 → 0.7720 without this factor). A file
/// without an extension (`LICENSE`, a script) is not one.
pub const OTHER_FILE_FACTOR: f64 = 0.5;

/// The words of a query that could name a file or an extension (lower
/// case, a leading `.` dropped: `.vcxproj` → `vcxproj`), read once per
/// search rather than once per candidate (an issue's query runs to 40,000
/// characters).
#[derive(Clone, Debug, Default)]
pub struct FileWords(std::collections::HashSet<String>);

impl FileWords {
    /// The words of `query`.
    pub fn of(query: &str) -> FileWords {
        FileWords(
            query
                .to_lowercase()
                .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_' || c == '-'))
                .map(|w| w.trim_start_matches('.').to_string())
                .filter(|w| !w.is_empty())
                .collect(),
        )
    }
}

/// Whether `path` is an other file for [`OTHER_FILE_FACTOR`]: it has an
/// extension, neither it nor the file's name is `listed`, and the query's
/// `words` name neither.
pub fn is_other_file(path: &str, listed: &[String], words: &FileWords) -> bool {
    if listed.is_empty() {
        return false;
    }
    let name = path
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(path)
        .to_ascii_lowercase();
    let Some((_, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if ext.is_empty() || name.starts_with('.') {
        return false;
    }
    let listed_here = listed.iter().any(|l| *l == name || l == ext);
    let named = words.0.contains(ext) || words.0.contains(&name);
    !listed_here && !named
}

/// What kind of file a path is, for ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathClass {
    /// Tests, test helpers, fixtures.
    Test,
    /// Changelogs and release notes.
    Changelog,
    /// Dependency lock files.
    Lock,
    /// Vendored or third-party code.
    Vendored,
    /// Generated code.
    Generated,
    /// Contributor guides and codes of conduct.
    Contributing,
}

/// The class of a project-relative path, if it is one that ranks lower.
pub fn path_class(path: &str) -> Option<PathClass> {
    let lower = path.to_ascii_lowercase();
    let mut parts: Vec<&str> = lower.split('/').collect();
    let file = parts.pop().unwrap_or("");
    let stem = file.split('.').next().unwrap_or(file);
    const CHANGES: [&str; 12] = [
        "changelog",
        "changes",
        "history",
        "news",
        "releases",
        "release-notes",
        "release_notes",
        "change_log",
        // xarray's doc/whats-new.rst, matplotlib's doc/users/next_whats_new/.
        "whats-new",
        "whats_new",
        "whatsnew",
        "next_whats_new",
    ];
    if CHANGES.contains(&stem) || parts.iter().any(|d| CHANGES.contains(d)) {
        return Some(PathClass::Changelog);
    }
    const CONTRIBUTING: [&str; 6] = [
        "contributing",
        "contribute",
        "contributors",
        "code_of_conduct",
        "code-of-conduct",
        "governance",
    ];
    if CONTRIBUTING.contains(&stem) {
        return Some(PathClass::Contributing);
    }
    const VENDORED: [&str; 8] = [
        "vendor",
        "vendored",
        "third_party",
        "third-party",
        "thirdparty",
        "node_modules",
        "bower_components",
        "site-packages",
    ];
    if parts.iter().any(|d| VENDORED.contains(d)) {
        return Some(PathClass::Vendored);
    }
    let lock = file.ends_with(".lock")
        || file.ends_with("-lock.json")
        || file.ends_with("-lock.yaml")
        || file.ends_with(".lockb")
        || matches!(file, "go.sum" | "npm-shrinkwrap.json");
    if lock {
        return Some(PathClass::Lock);
    }
    const GENERATED_DIRS: [&str; 3] = ["generated", "__generated__", "autogen"];
    let generated_file = stem.ends_with("_generated")
        || stem.starts_with("zz_generated")
        || file.contains(".gen.")
        || file.ends_with("_gen.go");
    // A JavaScript bundle built from the sources (`dist/js-yaml.js`,
    // `dist/index.mjs`): the package's sources again, one file for all of
    // them, where an agent should be sent to the source file itself. The
    // TypeScript declarations the compiler writes beside it
    // (`dist/api/tojs.d.ts`) repeat the sources' signatures and doc
    // comments, one file for each source file.
    let built = [".js", ".mjs", ".cjs", ".d.ts", ".d.mts", ".d.cts"];
    let bundle = parts.contains(&"dist") && built.iter().any(|e| file.ends_with(e));
    if generated_file || bundle || parts.iter().any(|d| GENERATED_DIRS.contains(d)) {
        return Some(PathClass::Generated);
    }
    const TEST_DIRS: [&str; 9] = [
        "test",
        "tests",
        "__tests__",
        "spec",
        "specs",
        "testing",
        "testdata",
        "test_helpers",
        "fixtures",
    ];
    let test_file = stem == "test"
        || stem == "tests"
        || stem == "conftest"
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || file.contains(".test.")
        || file.contains(".spec.")
        || (stem.ends_with("test") && file.ends_with(".java"))
        || (stem.ends_with("tests") && file.ends_with(".cs"));
    if test_file || parts.iter().any(|d| TEST_DIRS.contains(d)) {
        return Some(PathClass::Test);
    }
    None
}

/// Whether a code chunk is a test inside a file that is not one: its
/// definition path (the chunk's headings after the file) passes through a
/// module or class named `tests` or `test` (Rust's `#[cfg(test)] mod tests`)
/// or is a `test_…` function. Such a chunk repeats the words of the code it
/// tests as a test file does ([`TEST_FACTOR`]); being in `serve.rs`, it
/// escaped the path's class and stood for its file (axum's
/// `serve.rs > tests > test_serve_local_addr()` first for "how can a handler
/// get the IP address of the connected client").
pub fn is_inline_test(heading_path: &[String]) -> bool {
    heading_path.iter().skip(1).any(|h| {
        let name = h.split(['(', '<', ' ']).next().unwrap_or(h);
        name == "tests" || name == "test" || name.starts_with("test_")
    })
}

/// Whether a code chunk is a Python module's script block (`if __name__ ==
/// "__main__":`, breadcrumb `__main__`): a demo or command line that uses
/// the module with the module's words (argparse's `parser`), ranked as a
/// test is ([`TEST_FACTOR`]) unless the query asks about the command line.
/// Two such blocks (`markdown.py`, `syntax.py`) outranked rich's
/// `markup.py` for "where is the markup parser".
pub fn is_main_block(heading_path: &[String]) -> bool {
    heading_path.iter().skip(1).any(|h| h == "__main__")
}

/// What a query asks about, beyond its topic: tests, changes between
/// versions, dependencies, generated code. Files of that class then keep
/// their rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryAsks {
    /// The query mentions tests.
    pub tests: bool,
    /// The query mentions changes, releases or a version number.
    pub changes: bool,
    /// The query mentions dependencies, vendoring or lock files.
    pub dependencies: bool,
    /// The query mentions generated code.
    pub generated: bool,
    /// The query mentions contributing: pull requests, the style guide,
    /// conduct.
    pub contributing: bool,
    /// The query mentions the command line or a script's entry point.
    pub command_line: bool,
}

/// The part of a query that says what it asks: an issue pasted whole
/// mentions tests, versions and the command line in passing (its steps to
/// reproduce run `pytest`, its version dump names releases), and asks what
/// its title, the first line, says; any other query is read whole. Read
/// whole, 30 of SWE-bench Lite's 128 reachable issues "asked about" tests
/// and 72 about changes (by title: 4 and 8), so no test file or changelog
/// ranked lower for them.
fn asked_part(query: &str) -> &str {
    if crate::intent::is_issue(query) {
        query
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
    } else {
        query
    }
}

impl QueryAsks {
    /// Reads a query (an issue by its title: [`asked_part`]).
    pub fn of(query: &str) -> QueryAsks {
        let lower = asked_part(query).to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric() && c != '.' && c != '_')
            .map(|w| w.trim_matches('.'))
            .filter(|w| !w.is_empty())
            .collect();
        let tests = words.iter().any(|w| {
            matches!(
                *w,
                "test"
                    | "tests"
                    | "tested"
                    | "testing"
                    | "spec"
                    | "specs"
                    | "fixture"
                    | "fixtures"
                    | "unittest"
                    | "pytest"
            )
        });
        let version = |w: &str| {
            let w = w.strip_prefix('v').unwrap_or(w);
            let mut parts = w.split('.');
            parts.clone().count() >= 2
                && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        };
        let changes = words.iter().any(|w| {
            matches!(
                *w,
                "changelog"
                    | "changes"
                    | "changed"
                    | "release"
                    | "released"
                    | "releases"
                    | "version"
                    | "versions"
                    | "deprecated"
                    | "breaking"
                    | "history"
                    | "upgrade"
                    | "upgrading"
                    | "migration"
            ) || version(w)
        });
        let dependencies = words.iter().any(|w| {
            matches!(
                *w,
                "dependency"
                    | "dependencies"
                    | "deps"
                    | "vendor"
                    | "vendored"
                    | "vendoring"
                    | "third-party"
                    | "third_party"
                    | "thirdparty"
                    | "upstream"
                    | "lock"
                    | "lockfile"
                    | "pinned"
            )
        }) || lower.contains("third party");
        // "generate" and "generator" alone ask about something else: how to
        // generate a UUID, a JavaScript generator function. Only with "code"
        // (or "source") beside them do they ask about generated code.
        let generates_code = words.windows(2).any(|w| {
            let [a, b] = [w[0], w[1]];
            let generate = |x: &str| x.starts_with("generat");
            (generate(a) && matches!(b, "code" | "source" | "sources"))
                || (matches!(a, "code" | "source") && generate(b))
        });
        let generated = generates_code
            || words
                .iter()
                .any(|w| matches!(*w, "generated" | "codegen" | "autogenerated" | "autogen"));
        let contributing = words.iter().any(|w| {
            matches!(
                *w,
                "contribute"
                    | "contributing"
                    | "contribution"
                    | "contributions"
                    | "contributor"
                    | "contributors"
                    | "pr"
                    | "prs"
                    | "pull"
                    | "style"
                    | "guideline"
                    | "guidelines"
                    | "conduct"
                    | "governance"
                    | "maintainer"
                    | "maintainers"
            )
        });
        let command_line = words.iter().any(|w| {
            matches!(
                *w,
                "cli"
                    | "command"
                    | "commandline"
                    | "main"
                    | "__main__"
                    | "script"
                    | "argv"
                    | "argparse"
                    | "shell"
            )
        }) || lower.contains("command line")
            || lower.contains("command-line");
        QueryAsks {
            tests,
            changes,
            dependencies,
            generated,
            contributing,
            command_line,
        }
    }
}

/// The boosts that apply to one search.
#[derive(Clone, Debug, Default)]
pub struct Boosts {
    /// The [`domain_words`] of the file being edited (empty: none given).
    pub current_domain: Vec<String>,
    /// What the query asks about (see [`QueryAsks`]).
    pub asks: QueryAsks,
}

impl Boosts {
    /// The factors that apply to a chunk of `path`, with their reasons.
    pub fn factors(&self, path: &str) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        if in_domain(&self.current_domain, path) {
            out.push(("domain", DOMAIN_BOOST));
        }
        if is_instructions(path) {
            out.push(("instructions", INSTRUCTIONS_BOOST));
        }
        match path_class(path) {
            Some(PathClass::Test) if !self.asks.tests => out.push(("test file", TEST_FACTOR)),
            Some(PathClass::Changelog) if !self.asks.changes => {
                out.push(("changelog", CHANGELOG_FACTOR));
            }
            Some(PathClass::Lock) if !self.asks.dependencies && !self.asks.changes => {
                out.push(("lock file", LOCK_FACTOR));
            }
            Some(PathClass::Vendored) if !self.asks.dependencies => {
                out.push(("vendored", VENDORED_FACTOR));
            }
            Some(PathClass::Generated) if !self.asks.generated => {
                out.push(("generated", GENERATED_FACTOR));
            }
            Some(PathClass::Contributing) if !self.asks.contributing => {
                out.push(("contributor guide", CONTRIBUTING_FACTOR));
            }
            _ => {}
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_files_are_those_with_an_unlisted_extension_the_query_does_not_name() {
        let listed: Vec<String> = ["md", "rs", "toml", "makefile"].map(String::from).to_vec();
        let q = &FileWords::of("how are the visual studio projects built");
        assert!(is_other_file("build/VS2022/lz4/lz4.vcxproj", &listed, q));
        assert!(is_other_file("docs/templates/class.html", &listed, q));
        assert!(!is_other_file("src/lib.rs", &listed, q));
        assert!(!is_other_file("Makefile", &listed, q));
        assert!(!is_other_file("LICENSE", &listed, q), "no extension");
        assert!(!is_other_file("bin/deploy", &listed, q));
        // A query that names the extension or the file asks for it.
        assert!(!is_other_file(
            "build/lz4.vcxproj",
            &listed,
            &FileWords::of("which files does the .vcxproj compile")
        ));
        assert!(!is_other_file(
            "MANIFEST.in",
            &listed,
            &FileWords::of("what does manifest.in include")
        ));
        assert!(
            !is_other_file("build/lz4.vcxproj", &[], q),
            "no list, no factor"
        );
    }

    #[test]
    fn inline_tests_are_known_by_their_headings() {
        let h = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(is_inline_test(&h(&[
            "src/serve.rs",
            "tests",
            "local_addr()"
        ])));
        assert!(is_inline_test(&h(&["src/serve.rs", "tests"])));
        assert!(is_inline_test(&h(&[
            "m/core.py",
            "Parser",
            "test_headers(self)"
        ])));
        assert!(!is_inline_test(&h(&[
            "src/serve.rs",
            "Serve",
            "local_addr(&self)"
        ])));
        assert!(!is_inline_test(&h(&["src/serve.rs", "testing_tools()"])));
        // The file itself is the path's business (path_class), not this.
        assert!(!is_inline_test(&h(&["tests"])));
    }

    #[test]
    fn tests_and_changelogs_rank_lower_unless_asked_for() {
        for t in [
            "tests/iter_panic.rs",
            "src/iter/collect/test.rs",
            "tests/test_syntax/blocks/test_headers.py",
            "pkg/auth_test.go",
            "web/auth.spec.ts",
            "src/test_helpers/test_client.rs",
            "markdown/test_tools.py",
        ] {
            assert_eq!(path_class(t), Some(PathClass::Test), "{t}");
        }
        for c in [
            "CHANGELOG.md",
            "rayon/RELEASES.md",
            "docs/changelog.md",
            "docs/change_log/release-3.0.md",
            "HISTORY.rst",
        ] {
            assert_eq!(path_class(c), Some(PathClass::Changelog), "{c}");
        }
        for n in [
            "src/iter/mod.rs",
            "docs/extensions/toc.md",
            "src/contest.rs",
            "src/attestation.rs",
            "README.md",
        ] {
            assert_eq!(path_class(n), None, "{n}");
        }
        let plain = Boosts::default();
        assert_eq!(
            plain.factors("tests/a.rs"),
            vec![("test file", TEST_FACTOR)]
        );
        assert_eq!(
            plain.factors("CHANGELOG.md"),
            vec![("changelog", CHANGELOG_FACTOR)]
        );
        let asks = |q: &str| Boosts {
            asks: QueryAsks::of(q),
            ..Default::default()
        };
        assert!(
            asks("which tests cover the parser")
                .factors("tests/a.rs")
                .is_empty()
        );
        assert!(
            asks("what changed in 0.7.9")
                .factors("CHANGELOG.md")
                .is_empty()
        );
        assert!(
            asks("is this deprecated")
                .factors("CHANGELOG.md")
                .is_empty()
        );
        assert!(
            !asks("how does the parser work")
                .factors("CHANGELOG.md")
                .is_empty()
        );
    }

    #[test]
    fn a_script_block_is_known_and_command_line_questions_keep_it() {
        let h = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(is_main_block(&h(&["rich/markdown.py", "__main__"])));
        assert!(!is_main_block(&h(&["__main__"])));
        assert!(!is_main_block(&h(&["markdown/__main__.py", "run()"])));
        assert!(!QueryAsks::of("where is the markup parser").command_line);
        for q in [
            "how do I run it from the command line",
            "which CLI flags does the markdown script take",
            "what does python -m rich.markdown do when run as __main__",
        ] {
            assert!(QueryAsks::of(q).command_line, "{q}");
        }
    }

    #[test]
    fn an_issue_asks_what_its_title_says() {
        let issue = "Unexpected KeyError when merging datasets with a coordinate\n\n\
            When I merge two datasets the result loses a coordinate.\n\n\
            ```python\nimport xarray as xr\nxr.merge([a, b])\n```\n\n\
            The tests I wrote with pytest fail the same way since the release of 0.16.1.\n\n\
            INSTALLED VERSIONS: python 3.8.5, numpy 1.19.1, pandas 1.1.3\n";
        let a = QueryAsks::of(issue);
        assert!(!a.tests && !a.changes, "{a:?}");
        // A title that asks about tests is read.
        let titled = issue.replacen("Unexpected KeyError", "Test fixture raises KeyError", 1);
        assert!(QueryAsks::of(&titled).tests);
        // A question, however long, on one or two lines is read whole.
        let question = format!(
            "which tests cover the merge of datasets {}",
            "and more ".repeat(40)
        );
        assert!(question.len() > 300 && QueryAsks::of(&question).tests);
        assert!(QueryAsks::of("what changed in 0.16.1").changes);
        assert_eq!(path_class("doc/whats-new.rst"), Some(PathClass::Changelog));
        assert_eq!(
            path_class("doc/users/next_whats_new/widget.rst"),
            Some(PathClass::Changelog)
        );
    }

    #[test]
    fn contributor_guides_rank_lower_unless_asked_for() {
        for c in [
            "CONTRIBUTING.md",
            "docs/contributing.md",
            "CODE_OF_CONDUCT.md",
        ] {
            assert_eq!(path_class(c), Some(PathClass::Contributing), "{c}");
        }
        for n in ["src/contributors_api.rs", "docs/contributing/overview.md"] {
            assert_ne!(path_class(n), Some(PathClass::Contributing), "{n}");
        }
        let asks = |q: &str| Boosts {
            asks: QueryAsks::of(q),
            ..Default::default()
        };
        assert_eq!(
            asks("how does the parser read headings").factors("docs/contributing.md"),
            vec![("contributor guide", CONTRIBUTING_FACTOR)]
        );
        assert!(
            asks("how do I open a pull request")
                .factors("CONTRIBUTING.md")
                .is_empty()
        );
        assert!(
            asks("what is the documentation style guide")
                .factors("docs/contributing.md")
                .is_empty()
        );
    }

    #[test]
    fn lock_vendored_and_generated_files_rank_lower_unless_asked_for() {
        for (path, class) in [
            ("Cargo.lock", PathClass::Lock),
            ("web/yarn.lock", PathClass::Lock),
            ("web/pnpm-lock.yaml", PathClass::Lock),
            ("go.sum", PathClass::Lock),
            (
                "vendor/github.com/pkg/errors/errors.go",
                PathClass::Vendored,
            ),
            ("src/third_party/zlib/inflate.c", PathClass::Vendored),
            ("web/node_modules/react/index.js", PathClass::Vendored),
            ("api/generated/client.ts", PathClass::Generated),
            ("pkg/apis/zz_generated.deepcopy.go", PathClass::Generated),
            ("src/schema_generated.rs", PathClass::Generated),
            ("src/parser.gen.ts", PathClass::Generated),
            ("jsyaml/dist/js-yaml.mjs", PathClass::Generated),
            ("dist/index.js", PathClass::Generated),
            ("mobx/dist/api/tojs.d.ts", PathClass::Generated),
            ("dist/index.d.mts", PathClass::Generated),
        ] {
            assert_eq!(path_class(path), Some(class), "{path}");
        }
        for n in [
            "src/lock.rs",
            "src/sync/lock.rs",
            "src/vendors.rs",
            "src/generate.rs",
            "docs/generators.md",
            "dist/README.md",
            "distribution/index.js",
            "src/dist.js",
            "src/global.d.ts",
            "types/index.d.ts",
        ] {
            assert_eq!(path_class(n), None, "{n}");
        }
        let asks = |q: &str, path: &str| {
            Boosts {
                asks: QueryAsks::of(q),
                ..Default::default()
            }
            .factors(path)
        };
        let plain = "how are requests routed";
        assert_eq!(asks(plain, "Cargo.lock"), vec![("lock file", LOCK_FACTOR)]);
        assert_eq!(
            asks(plain, "vendor/x/y.go"),
            vec![("vendored", VENDORED_FACTOR)]
        );
        assert_eq!(
            asks(plain, "generated/a.ts"),
            vec![("generated", GENERATED_FACTOR)]
        );
        assert!(asks("which version of serde is pinned", "Cargo.lock").is_empty());
        assert!(asks("do we vendor the zlib dependency", "vendor/zlib/a.c").is_empty());
        assert!(asks("is the third party client patched", "third_party/a.c").is_empty());
        assert!(asks("how is the generated client built", "generated/a.ts").is_empty());
        assert!(asks("where is the code generator", "generated/a.ts").is_empty());
        assert!(asks("how do I generate code from the schema", "generated/a.ts").is_empty());
        // A generator function or generating a value is no question about
        // generated code: the bundle built from the sources still ranks lower.
        for q in [
            "how do I cancel an async action written as a generator",
            "how do I generate a version 4 UUID",
            "which generator makes random node ids",
        ] {
            assert_eq!(
                asks(q, "dist/mobx.esm.js"),
                vec![("generated", GENERATED_FACTOR)],
                "{q}"
            );
        }
    }

    #[test]
    fn domains_and_instructions() {
        assert_eq!(domain_of("cache/redis.md"), "cache");
        assert_eq!(domain_of("README.md"), "");
        let b = Boosts {
            current_domain: domain_words("src/cache/redis.rs"),
            ..Default::default()
        };
        assert_eq!(b.factors("docs/cache/redis.md"), vec![("domain", 1.3)]);
        assert_eq!(
            b.factors("docs/api.instructions.md"),
            vec![("instructions", 1.2)]
        );
        assert!(Boosts::default().factors("docs/x.md").is_empty());
    }

    #[test]
    fn domains_match_shared_folder_names_case_aside() {
        // The ch4p design's own example: `src/Caching/…` and the docs' `caching/`.
        let editing = domain_words("src/Caching/RedisCache.cs");
        assert_eq!(editing, ["caching"]);
        for hit in [
            "docs/caching/redis.md",
            "docs/Caching/Overview.md",
            "docs/architecture/CACHING/eviction.md",
            "docs/caching.md",
            "src/caching/memory.rs",
        ] {
            assert!(in_domain(&editing, hit), "{hit}");
        }
        // Sharing only the layout (`src/`, `docs/`) is no domain.
        for hit in [
            "src/queue/jobs.rs",
            "docs/queue.md",
            "README.md",
            "docs/cache-keys.md",
        ] {
            assert!(!in_domain(&editing, hit), "{hit}");
        }
        // A crate is a domain: `crates/x/src/…` shares `x`, not `crates` or `src`.
        let crate_file = domain_words("crates/cairn-search/src/boost.rs");
        assert_eq!(crate_file, ["cairn-search"]);
        assert!(in_domain(&crate_file, "crates/cairn-search/src/fusion.rs"));
        assert!(!in_domain(&crate_file, "crates/cairn-store/src/writer.rs"));
        // Windows separators and a file at the root.
        assert_eq!(domain_words("src\\Billing\\Invoice.cs"), ["billing"]);
        assert!(domain_words("main.rs").is_empty());
        assert!(!in_domain(&[], "docs/caching/redis.md"));
    }
}
