//! CLI tests: run the real `cairn` binary (and the real model) in temp projects.

use std::path::Path;
use std::process::{Command, Output};

use cairn_test_support::{Project, pg_uri};

mod capture;
mod capture_clients;
mod crash;
mod docs;
mod first_run;
mod hostile;
mod inject;
mod memory;
mod recover;
mod secrets;
mod serve;
mod setup;
mod ui;
mod worktrees;

/// Runs the real `cairn` binary in a test project.
trait Cli {
    fn command(&self, args: &[&str]) -> Command;
    fn run(&self, args: &[&str]) -> Output;
    fn ok(&self, args: &[&str]) -> String;
    fn json(&self, args: &[&str]) -> serde_json::Value;
}

impl Cli for Project {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.args(args)
            .current_dir(self.path(""))
            .env_remove("CAIRN_LOG")
            // Hermetic: no vectors from (or into) the user's embedding
            // cache, and the project list and personal memories in a
            // hidden folder of the test project, not the user's.
            .env("CAIRN_EMBED_USER_CACHE_ROWS", "0")
            .env("CAIRN_DATA_DIR", self.path(".user-data"));
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("cairn runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "cairn {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.ok(args)).expect("valid JSON on stdout")
    }
}

/// A PATH on which `cairn` is the binary under test, so installers write
/// the bare name `cairn` (off PATH they write the binary's absolute path).
fn path_with_cairn() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_cairn"))
        .parent()
        .expect("the binary is in a folder")
}

fn docs(p: &Project) {
    p.write(
        "docs/cache/redis.md",
        "# Architecture\n\n## Caching\n\n### Redis Setup\n\nLogged-in users keep their session in Redis. Entries expire after five minutes without activity, so a user who comes back later signs in again.\n",
    );
    p.write(
        "docs/garden.md",
        "# Gardening\n\nTomatoes need full sun, deep watering twice a week and a wooden stake to climb. Basil grows well beside them.\n",
    );
    p.write(
        "docs/deploy.md",
        "# Deployments\n\nReleases are built by CI and rolled out to the cluster with a blue-green switch; rollback flips the switch back.\n",
    );
}

fn top_paths(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("array of hits")
        .iter()
        .map(|h| h["path"].as_str().expect("path").to_string())
        .collect()
}

#[test]
#[ignore = "full tier: needs the model"]
fn index_search_status_round_trip() {
    let p = Project::new();
    docs(&p);
    let out = p.ok(&["index", "docs"]);
    assert!(
        out.contains("indexed 3 files") && out.contains("3 added"),
        "{out}"
    );

    let hits = p.json(&["search", "how long does a session stay in redis", "--json"]);
    assert_eq!(top_paths(&hits)[0], "docs/cache/redis.md");
    let top = &hits[0];
    assert_eq!(top["breadcrumb"], "Architecture > Caching > Redis Setup");
    assert_eq!(top["start_line"], 1);
    assert_eq!(top["chunk_id"].as_str().map(str::len), Some(16));

    let status = p.json(&["status", "--json"]);
    assert_eq!(status["files"], 3);
    assert_eq!(status["chunks"], status["embedded_chunks"]);
    assert!(
        status["model"]
            .as_str()
            .unwrap_or("")
            .starts_with("all-MiniLM-L6-v2")
    );
    assert!(status["index_bytes"].as_u64().unwrap_or(0) > 0);

    let again = p.ok(&["index", "docs"]);
    assert!(
        again.contains("3 unchanged") && again.contains("0 embedded"),
        "{again}"
    );

    let human = p.ok(&["search", "blue-green rollback", "--explain", "-n", "1"]);
    assert!(human.starts_with("1. docs/deploy.md:1-3"), "{human}");
    // The intent ranking read from the query, after the hits, then what
    // the names retriever read from it.
    assert!(
        human.contains("\nintent: unknown (read from the query's words)\nnames: read 0 names, 0 paths and 3 word phrases from the query"),
        "{human}"
    );
    assert!(
        human.contains("bm25") && human.contains("adds +"),
        "{human}"
    );
}

#[test]
#[ignore = "full tier: needs the model"]
fn vectors_find_what_words_do_not() {
    let p = Project::new();
    docs(&p);
    p.ok(&["index"]);
    let q = "vegetable plants in the backyard";
    assert_eq!(p.ok(&["search", q, "--mode", "bm25"]).trim(), "no matches");
    let hits = p.json(&["search", q, "--mode", "vector", "--json"]);
    assert_eq!(top_paths(&hits)[0], "docs/garden.md");
    let hits = p.json(&["search", q, "--json"]);
    assert_eq!(top_paths(&hits)[0], "docs/garden.md");
}

/// Issue 61 (11): `--explain` shows, beside the file's votes, how each
/// retriever ranked the chunk itself, so two sections of one file are told
/// apart by their own rows.
#[test]
fn explain_tells_the_chunks_of_one_file_apart() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let filler = "Unrelated words about gardens, tomatoes and basil fill this part. ".repeat(4);
    p.write(
        "docs/cache.md",
        &format!(
            "# Cache\n\n## Eviction\n\nThe cache evicts the oldest cache entries when the cache is full. {filler}\n\n\
             ## Sizing\n\nSize the cache by memory. {filler}\n"
        ),
    );
    p.ok(&["index", "-q"]);
    let hits = p.json(&["search", "cache evicts entries", "--explain", "--json"]);
    let of_file: Vec<&serde_json::Value> = hits
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["path"] == "docs/cache.md")
        .collect();
    assert!(of_file.len() >= 2, "two sections shown: {hits}");
    assert_eq!(
        of_file[0]["signals"], of_file[1]["signals"],
        "one file's votes"
    );
    let bm25_rank = |h: &serde_json::Value| h["chunk_signals"][0]["rank"].as_u64();
    assert_eq!(bm25_rank(of_file[0]), Some(1), "{hits}");
    assert_eq!(bm25_rank(of_file[1]), Some(2), "{hits}");
    let human = p.ok(&["search", "cache evicts entries", "--explain"]);
    assert!(human.contains("   chunk   bm25 rank 1 raw"), "{human}");
    assert!(human.contains("   chunk   bm25 rank 2 raw"), "{human}");
}

/// Issue 63 (2): configuration and build files are indexed by their
/// sections, each chunk's breadcrumb its key path; JSON that is data is
/// left out.
#[test]
fn config_and_build_files_are_found_by_their_sections() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write(
        "pyproject.toml",
        "[project]\nname = \"demo\"\nrequires-python = \">=3.9\"\n\n\
         [tool.pytest.ini_options]\naddopts = \"--strict-markers -ra\"\nfilterwarnings = [\"error\"]\n\n\
         [tool.ruff.lint]\nselect = [\"E\", \"F\", \"B\"]\n",
    );
    p.write(
        "Makefile",
        ".PHONY: release\nrelease: test\n\tcargo build --release --locked\n\tstrip target/release/demo\n\
         \ttar czf dist.tgz target/release/demo README.md LICENSE\n\tsha256sum dist.tgz > dist.tgz.sha256\n\n\
         test:\n\tcargo test --workspace --all-features\n\tcargo clippy --all-targets -- -D warnings\n\
         \tcargo fmt --all -- --check\n",
    );
    p.write(
        "tests/data/huge.json",
        "{\n  \"rows\": [\n    1, 2, 3\n  ]\n}\n",
    );
    p.write(
        ".github/workflows/ci.yml",
        "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      \
         - uses: actions/checkout@v4\n      - run: cargo nextest run --workspace --profile ci\n      \
         - run: cargo llvm-cov report --lcov --output-path coverage.lcov\n",
    );
    p.write(
        "web/package.json",
        "{\n  \"name\": \"web\",\n  \"scripts\": {\n    \"build\": \"vite build\",\n    \"lint\": \"eslint src\"\n  }\n}\n",
    );
    p.ok(&["index", "-q"]);
    let hits = p.json(&["search", "pytest addopts filterwarnings", "--json"]);
    assert_eq!(hits[0]["path"], "pyproject.toml", "{hits}");
    assert_eq!(
        hits[0]["breadcrumb"], "pyproject.toml > tool.pytest.ini_options",
        "{hits}"
    );
    let hits = p.json(&["search", "how is the release built", "--json"]);
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .any(|h| h["breadcrumb"] == "Makefile > release"),
        "{hits}"
    );
    let hits = p.json(&["search", "nextest llvm-cov coverage in ci", "--json"]);
    assert_eq!(hits[0]["path"], ".github/workflows/ci.yml", "{hits}");
    assert!(
        hits[0]["breadcrumb"]
            .as_str()
            .is_some_and(|b| b.starts_with(".github/workflows/ci.yml > jobs")),
        "{hits}"
    );
    let hits = p.json(&["search", "vite build scripts", "--json"]);
    assert_eq!(
        hits[0]["breadcrumb"], "web/package.json > scripts",
        "{hits}"
    );
    let status = p.json(&["search", "rows", "--json"]);
    assert!(
        !status
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["path"] == "tests/data/huge.json"),
        "data JSON is not indexed: {status}"
    );
}

/// Every other text file is indexed in line windows (issue 63 item 4): a
/// GraphQL schema and a script without an extension are found; a picture,
/// data JSON, a vendored file and test data are left out, and `cairn
/// status` counts the files by kind and what was left out by reason, with
/// an example each; `other_files = false` indexes the listed kinds alone.
#[test]
fn other_files_are_indexed_and_what_is_left_out_is_counted() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write("README.md", "# Demo\n\nA demo service.\n");
    p.write(
        "api/schema.graphql",
        "type Invoice {\n  id: ID!\n  settlementCurrency: String!\n  ledgerAccount: Account\n}\n",
    );
    p.write(
        "bin/rotate-keys",
        "#!/usr/bin/env bash\nset -euo pipefail\n\nrotate_signing_keys() {\n  vault write -f transit/keys/signing/rotate\n}\nrotate_signing_keys\n",
    );
    p.write("docs/logo.png", "\u{0}PNG");
    p.write("data/rates.json", "{\"settlementCurrency\": \"EUR\"}\n");
    p.write(
        "node_modules/left/notes.html",
        "settlementCurrency vendored\n",
    );
    p.write("tests/golden/invoice.out", "settlementCurrency EUR\n");
    p.write(
        ".env.example",
        "# Payments\nSTRIPE_SECRET_KEY=sk_live_51HdemoOnlyValue\nLEDGER_DATABASE_URL=postgres://app:hunter2@db/ledger\n",
    );
    p.write(".env", "STRIPE_SECRET_KEY=sk_live_theRealOne\n");
    p.ok(&["index", "-q"]);

    // The environment template is found by its names, never by its values,
    // and `get` shows it as it was indexed; the real `.env` is not read.
    let hits = p.json(&["search", "STRIPE_SECRET_KEY LEDGER_DATABASE_URL", "--json"]);
    assert_eq!(hits[0]["path"], ".env.example", "{hits}");
    let shown = hits.to_string();
    assert!(shown.contains("STRIPE_SECRET_KEY=[redacted]"), "{hits}");
    assert!(
        !shown.contains("sk_live") && !shown.contains("hunter2"),
        "{hits}"
    );
    let id = hits[0]["chunk_id"]
        .as_str()
        .expect("a chunk id")
        .to_string();
    let got = p.ok(&["expand", &id]);
    assert!(
        got.contains("LEDGER_DATABASE_URL=[redacted]") && !got.contains("hunter2"),
        "{got}"
    );
    let index = std::fs::read(p.path(".cairn/index.sqlite")).unwrap();
    let index = String::from_utf8_lossy(&index);
    assert!(
        !index.contains("sk_live") && !index.contains("hunter2"),
        "a value is on disk"
    );

    let hits = p.json(&["search", "settlementCurrency ledgerAccount", "--json"]);
    assert_eq!(hits[0]["path"], "api/schema.graphql", "{hits}");
    let paths: Vec<&str> = hits
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["path"].as_str())
        .collect();
    for left in [
        "data/rates.json",
        "node_modules/left/notes.html",
        "tests/golden/invoice.out",
    ] {
        assert!(!paths.contains(&left), "{left} is left out: {hits}");
    }
    // The script is read as shell: its function is a definition.
    let hits = p.json(&["search", "rotate_signing_keys", "--json"]);
    assert_eq!(hits[0]["path"], "bin/rotate-keys", "{hits}");
    assert_eq!(
        hits[0]["breadcrumb"], "bin/rotate-keys > rotate_signing_keys",
        "{hits}"
    );

    let status = p.json(&["status", "--json"]);
    let kinds = &status["files_by_kind"];
    assert_eq!(kinds["docs"], 1, "{status}");
    assert_eq!(kinds["other text"], 2, "{status}");
    assert_eq!(kinds["config"], 1, "the environment template: {status}");
    let left = status["left_out"].as_array().expect("left_out lines");
    let line = |kind: &str| {
        left.iter()
            .find(|l| l["kind"] == kind)
            .unwrap_or_else(|| panic!("a {kind} line: {status}"))
    };
    assert_eq!(line("binary")["count"], 1, "{status}");
    assert_eq!(
        line("binary")["example"],
        "docs/logo.png: binary (.png)",
        "{status}"
    );
    assert_eq!(line("excluded")["count"], 1, "{status}");
    assert_eq!(line("vendored")["count"], 1, "{status}");
    assert_eq!(line("test_data")["count"], 1, "{status}");
    let text = p.ok(&["status"]);
    assert!(text.contains("other text 2"), "{text}");
    assert!(
        text.contains("left out   1 file: binary (e.g. docs/logo.png: binary (.png))"),
        "{text}"
    );

    // Only the listed kinds: the other files leave the index.
    p.write(
        "cairn.toml",
        "[embed]\nmodel = \"none\"\n[index]\nother_files = false\n",
    );
    p.ok(&["index", "-q"]);
    let status = p.json(&["status", "--json"]);
    assert_eq!(
        status["files_by_kind"]["other text"],
        serde_json::Value::Null,
        "{status}"
    );
    assert_eq!(status["left_out"], serde_json::json!([]), "{status}");
}

/// A notebook is its cells (issue 63 item 3): a name a code cell defines
/// finds that cell, its number in the breadcrumb; outputs are not indexed;
/// `expand` shows the cell, not the JSON around it.
#[test]
fn a_notebook_is_found_by_its_cells() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let source = |lines: &[&str]| serde_json::json!(lines);
    let nb = serde_json::json!({
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": source(&["# Reconciling the ledger\n", "\n", "Totals per settlement currency.\n"])},
            {"cell_type": "code", "execution_count": 1, "metadata": {},
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["OUTPUTONLYTOKEN\n"]}],
             "source": source(&["def reconcile_ledger(frame):\n", "    return frame.groupby('currency').sum()\n"])}
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5
    });
    p.write(
        "notebooks/ledger.ipynb",
        &serde_json::to_string_pretty(&nb).unwrap(),
    );
    p.ok(&["index", "-q"]);
    let hits = p.json(&["search", "reconcile_ledger", "--json"]);
    assert_eq!(hits[0]["path"], "notebooks/ledger.ipynb", "{hits}");
    assert_eq!(
        hits[0]["breadcrumb"], "notebooks/ledger.ipynb > cell 2",
        "{hits}"
    );
    let id = hits[0]["chunk_id"]
        .as_str()
        .expect("a chunk id")
        .to_string();
    let shown = p.json(&["expand", &id, "--json"]);
    assert!(
        shown["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("def reconcile_ledger(frame):")),
        "{shown}"
    );
    let hits = p.json(&["search", "OUTPUTONLYTOKEN", "--json"]);
    assert!(
        hits.as_array().unwrap().is_empty(),
        "outputs are not indexed: {hits}"
    );
    let status = p.json(&["status", "--json"]);
    assert_eq!(status["files_by_kind"]["notebook"], 1, "{status}");
}

#[test]
fn bad_queries_get_clear_errors() {
    // BM25 only: the test is about query errors, which vectors never raise.
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let out = p.run(&["search", "anything"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `cairn index` first"));

    docs(&p);
    p.ok(&["index"]);
    // Plain queries never hit FTS5 syntax errors.
    p.ok(&["search", "\"unbalanced (paren -minus col:on*"]);
    let out = p.run(&["search", "--fts", "\"unbalanced"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid full-text query"), "{err}");
    assert_eq!(
        top_paths(&p.json(&["search", "--fts", "\"blue-green switch\"", "--json"])),
        vec!["docs/deploy.md"]
    );
}

#[test]
#[ignore = "full tier: needs the model"]
fn model_status_reports_the_cached_model() {
    let p = Project::new();
    p.ok(&["model", "fetch"]);
    let v = p.json(&["model", "status", "--json"]);
    assert_eq!(v["present"], true);
    assert_eq!(v["loads"], true);
}

fn many_docs(root: &Path, n: usize) {
    let words = [
        "cache", "index", "vector", "query", "token", "session", "cluster", "release",
    ];
    for i in 0..n {
        let dir = root.join(format!("docs/d{}", i % 7));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut body = format!("# Document {i}\n\n");
        for j in 0..12 {
            body.push_str(&format!(
                "Paragraph {j} of file {i} talks about {} and {}. ",
                words[(i + j) % 8],
                words[(i * 3 + j) % 8]
            ));
        }
        body.push_str(&format!("Unique marker uniq{i}x.\n"));
        std::fs::write(dir.join(format!("f{i}.md")), body).expect("write");
    }
}

#[test]
#[ignore = "full tier: needs the model"]
fn killed_indexer_leaves_a_usable_index() {
    let p = Project::with_config("[index]\nbatch_files = 8\n");
    many_docs(&p.path(""), 160);
    let mut child = p.command(&["index", "-q"]).spawn().expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let _ = child.kill();
    let _ = child.wait();

    // Whatever the kill interrupted, the index opens and answers.
    let status = p.json(&["status", "--json"]);
    assert!(status["embedded_chunks"].as_u64() <= status["chunks"].as_u64());
    p.ok(&["search", "cache session"]);

    // A re-run completes the work, with every chunk embedded exactly once.
    let report = p.json(&["index", "--json"]);
    assert_eq!(report["files_seen"], 160);
    let status = p.json(&["status", "--json"]);
    assert_eq!(status["files"], 160);
    assert_eq!(status["chunks"], status["embedded_chunks"]);
    let hits = p.json(&["search", "uniq159x", "--json", "--mode", "bm25"]);
    assert_eq!(top_paths(&hits), vec!["docs/d5/f159.md"]);
}

#[test]
#[ignore = "full tier: needs the model"]
fn without_a_model_search_falls_back_to_bm25_with_one_warning() {
    let p = Project::new();
    docs(&p);
    let empty = p.path("no-model-here");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let run = |args: &[&str]| {
        p.command(args)
            .env("CAIRN_MODEL_DIR", &empty)
            .output()
            .expect("cairn runs")
    };

    let out = run(&["index"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("3 added") && stdout.contains("BM25 only"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("BM25 only").count(), 1, "{stderr}");

    let out = run(&["search", "blue-green rollback", "--json"]);
    assert!(out.status.success());
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(top_paths(&hits)[0], "docs/deploy.md");
    // No vectors: BM25 first, the graph (which needs no model) may vote too.
    let signals = hits[0]["signals"].as_array().expect("signals");
    assert_eq!(signals[0]["retriever"], "bm25", "{signals:?}");
    assert!(
        signals.iter().all(|s| s["retriever"] != "vector"),
        "{signals:?}"
    );

    // Once a model is there, the next index run embeds what was left out.
    let report = p.json(&["index", "--json"]);
    assert_eq!(report["chunks_embedded"], 3);
    let status = p.json(&["status", "--json"]);
    assert_eq!(status["chunks"], status["embedded_chunks"]);
}

#[test]
#[ignore = "full tier: needs the model"]
fn two_indexers_at_once_lose_nothing() {
    let p = Project::with_config("[index]\nbatch_files = 4\n");
    many_docs(&p.path(""), 40);
    let a = p.command(&["index", "-q"]).spawn().expect("spawn a");
    let b = p.command(&["index", "-q"]).spawn().expect("spawn b");
    for (name, child) in [("a", a), ("b", b)] {
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "indexer {name} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let status = p.json(&["status", "--json"]);
    assert_eq!(status["files"], 40);
    assert_eq!(status["chunks"], status["embedded_chunks"]);
    // A third run finds nothing left to do.
    let report = p.json(&["index", "--json"]);
    assert_eq!(report["files_unchanged"], 40);
    assert_eq!(report["chunks_embedded"], 0);
}

#[test]
fn config_show_names_the_layer_of_every_value() {
    let p = Project::with_config("[search]\nlimit = 7\ncandidates = 3\n");
    let user = p.path("user-config.toml");
    std::fs::write(
        &user,
        "[search]\nlimit = 6\nbm25_weight = 2.0\n[chunk]\nmin_chars = 50\n",
    )
    .unwrap();
    let out = p
        .command(&["config", "show", "--json", "--set", "search.candidates=9"])
        .env("CAIRN_CONFIG", &user)
        .env("CAIRN_SEARCH_BM25_WEIGHT", "3")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |k: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == k)
            .cloned()
            .unwrap()
    };
    assert_eq!(row("chunk.min_chars")["value"], 50);
    assert!(
        row("chunk.min_chars")["source"]
            .as_str()
            .unwrap()
            .starts_with("user file")
    );
    assert_eq!(row("search.limit")["value"], 7);
    assert!(
        row("search.limit")["source"]
            .as_str()
            .unwrap()
            .starts_with("project file")
    );
    assert_eq!(row("search.bm25_weight")["value"], 3);
    assert_eq!(
        row("search.bm25_weight")["source"],
        "environment CAIRN_SEARCH_BM25_WEIGHT"
    );
    assert_eq!(row("search.candidates")["value"], 9);
    assert_eq!(row("search.candidates")["source"], "--set");
    assert_eq!(row("chunk.max_chars")["source"], "default");
    // --set reaches the engine: one hit instead of the project's 7.
    // (BM25 only: the test is about settings, not vectors.)
    docs(&p);
    p.ok(&["index", "-q", "--set", "embed.model=none"]);
    let hits = p.json(&[
        "search",
        "caching",
        "--json",
        "--set",
        "search.limit=1",
        "--set",
        "embed.model=none",
    ]);
    assert_eq!(hits.as_array().unwrap().len(), 1);
    let bad = p.run(&["status", "--set", "search.limt=2"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("did you mean search.limit"));
}

#[test]
fn doctor_checks_and_vacuums_an_index_after_half_its_files_are_gone() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    many_docs(&p.path(""), 300);
    p.ok(&["index", "-q"]);
    for i in (0..300).step_by(2) {
        std::fs::remove_file(p.path(&format!("docs/d{}/f{i}.md", i % 7))).unwrap();
    }
    p.ok(&["index", "-q"]);
    let v = p.json(&["doctor", "--vacuum", "--json"]);
    assert_eq!(v["ok"], true, "{v}");
    let state = |name: &str| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == name)
            .map(|c| c["state"].as_str().unwrap().to_string())
    };
    assert_eq!(state("index").as_deref(), Some("ok"));
    assert_eq!(state("model").as_deref(), Some("info"));
    let before = v["vacuum_bytes"]["before"].as_u64().unwrap();
    let after = v["vacuum_bytes"]["after"].as_u64().unwrap();
    assert!(after < before, "{before} -> {after}");
    eprintln!("doctor --vacuum: {before} -> {after} bytes");
    // Search still works on the compacted index.
    let hits = p.json(&["search", "uniq1x", "--json"]);
    assert_eq!(hits[0]["path"], "docs/d1/f1.md");
}

#[test]
#[ignore = "full tier: needs PostgreSQL and the model"]
fn store_flag_indexes_and_searches_on_postgres() {
    let p = Project::new();
    p.write("docs/deploy.md", "# Deploys\n\nBlue-green deploys switch traffic after health checks; rollback is one command.\n");
    p.write(
        "docs/cache.md",
        "# Caching\n\nRedis caches sessions for thirty minutes.\n",
    );
    let uri = pg_uri();
    let name = format!("cli-{}", p.path("").file_name().unwrap().to_string_lossy());
    let store = ["--store", uri.as_str(), "--set"];
    let project = format!("store.project={name}");
    let args = |rest: &[&str]| -> Vec<String> {
        store
            .iter()
            .map(|s| s.to_string())
            .chain([project.clone()])
            .chain(rest.iter().map(|s| s.to_string()))
            .collect()
    };
    let run = |rest: &[&str]| {
        let a = args(rest);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        p.run(&a)
    };
    let out = run(&["index", "."]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !p.path(".cairn/index.sqlite").exists(),
        "no SQLite file with --store"
    );
    let out = run(&["search", "blue-green rollback", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(hits[0]["path"], "docs/deploy.md");
    let out = run(&["status"]);
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.contains("postgres://") && status.contains(&name),
        "{status}"
    );
    // A password never shows, and a project file may not name a store.
    let secret = uri.replacen("://cairn@", "://cairn:hunter2@", 1);
    let out = p.run(&["--store", &secret, "config", "show"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("store.uri") && !shown.contains("hunter2"),
        "{shown}"
    );
    std::fs::write(p.path("cairn.toml"), format!("[store]\nuri = \"{uri}\"\n")).unwrap();
    let out = p.run(&["status"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("store.uri may only be set"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_reader_that_goes_away_is_not_a_crash() {
    // `cairn search … | head -1` panicked: "failed printing to stdout: Broken pipe".
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    for i in 0..40 {
        p.write(
            &format!("docs/d{i}.md"),
            &format!("# Deploy {i}\n\nRelease train note {i}.\n"),
        );
    }
    p.ok(&["index"]);
    for args in [
        &["search", "deploy", "-n", "40"][..],
        &["search", "deploy", "-n", "40", "--json"],
    ] {
        let mut child = p
            .command(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cairn starts");
        // The reader is gone before cairn prints a byte.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("cairn ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {err}", out.status);
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Issue 60: `cairn -C <project> index .` run from another folder indexed
/// that other folder into the project's index (its files under their
/// absolute paths). Relative paths given with `-C DIR` are read from DIR,
/// as `git -C` reads them, and a path out of the project is refused.
#[test]
fn index_paths_given_with_dash_c_are_read_from_the_project() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write(
        "docs/deploy.md",
        "# Deploy\n\nWe deploy with a blue-green rollback.\n",
    );
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(elsewhere.path().join("docs")).unwrap();
    std::fs::write(
        elsewhere.path().join("docs/plans.md"),
        "# Plans\n\nThe zanzibar plans are not this project's.\n",
    )
    .unwrap();
    let root = p.path("");
    let root = root.to_str().unwrap();
    let from_elsewhere = |args: &[&str]| {
        p.command(args)
            .current_dir(elsewhere.path())
            .env("CAIRN_NO_DAEMON", "1")
            .output()
            .unwrap()
    };
    for dot in [".", "docs", "./docs/deploy.md"] {
        let out = from_elsewhere(&["-C", root, "index", "-q", dot]);
        assert!(
            out.status.success(),
            "index {dot}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let paths = |query: &str| {
        let out = p
            .command(&["search", query, "--json"])
            .env("CAIRN_NO_DAEMON", "1")
            .output()
            .unwrap();
        let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        top_paths(&hits)
    };
    assert_eq!(paths("blue-green rollback"), ["docs/deploy.md"]);
    assert!(
        paths("zanzibar plans").is_empty(),
        "the other folder was indexed"
    );
    // A path that leads out of the project is refused, whoever names it.
    let outside = elsewhere.path().to_str().unwrap();
    for args in [
        &["-C", root, "index", outside][..],
        &["-C", root, "index", ".."][..],
    ] {
        let out = from_elsewhere(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} passed: {err}");
        assert!(err.contains("is outside the project"), "{args:?}: {err}");
    }
    let out = p.run(&["index", outside]);
    assert!(!out.status.success());
    assert!(
        paths("zanzibar plans").is_empty(),
        "the other folder was indexed"
    );
}
