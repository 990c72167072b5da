//! The README, ARCHITECTURE.md and docs/ state defaults; these tests hold
//! each stated value to the code, so a changed default fails here until the
//! docs say it too. Fast tier: they read files and constants, no model.

use std::path::Path;

fn doc(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The README's first paragraph (after the title).
fn intro(readme: &str) -> String {
    readme
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with('#'))
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the docs call each fusion method (`[search] fusion`).
fn fusion_name(method: &str) -> &'static str {
    match method {
        "score" => "score fusion",
        "rrf" => "Reciprocal Rank Fusion",
        "weighted" => "weighted fusion",
        other => panic!("fusion method {other:?} has no name in the docs: add it here"),
    }
}

/// The first number after `label` in `text`.
fn number_after(text: &str, label: &str) -> Option<f64> {
    let rest = &text[text.find(label)? + label.len()..];
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    let num: String = rest[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    num.trim_end_matches('.').parse().ok()
}

/// Checks the README's first paragraph: the fusion it names, the model, the
/// SciFact figure. A function of the text, so the test below can show it
/// fails on the old paragraph.
fn check_intro(intro: &str, benchmarks: &str) -> Result<(), String> {
    let config = cairn::Config::default();
    let fusion = serde_json::to_value(config.search.fusion).map_err(|e| e.to_string())?;
    let fusion = fusion.as_str().unwrap_or_default();
    let named = fusion_name(fusion);
    if !intro.contains(named) {
        return Err(format!(
            "the README's first paragraph does not name the default fusion ({named})"
        ));
    }
    for other in ["score", "rrf", "weighted"]
        .into_iter()
        .filter(|m| *m != fusion)
    {
        for claim in [
            format!("fused with {}", fusion_name(other)),
            format!("fused by {}", fusion_name(other)),
        ] {
            if intro.contains(&claim) || (other == "rrf" && intro.contains("fused with RRF")) {
                return Err(format!(
                    "the README's first paragraph says {claim:?}; the default is {named}"
                ));
            }
        }
    }
    if !intro.contains(&config.embed.model) {
        return Err(format!(
            "the README's first paragraph does not name the default model {}",
            config.embed.model
        ));
    }
    // The default's SciFact figure: the first of the first "default / …"
    // row, the one of "Retrieval quality at a glance" (a later table, such
    // as PostgreSQL's side by side, may hold an older commit's figure).
    let measured = benchmarks
        .lines()
        .find(|l| l.starts_with("| SciFact (nDCG@10) | default /"))
        .and_then(|l| l.split('|').nth(3))
        .and_then(|cell| number_after(cell, ""))
        .ok_or("BENCHMARKS.md has no `| SciFact (nDCG@10) | default / …` row")?;
    let stated = number_after(intro, "SciFact nDCG@10")
        .ok_or("the README's first paragraph quotes no SciFact nDCG@10")?;
    if stated != measured {
        return Err(format!(
            "the README quotes SciFact nDCG@10 {stated}; BENCHMARKS.md measures the default at {measured}"
        ));
    }
    Ok(())
}

#[test]
fn the_readme_intro_states_the_default_fusion_model_and_figure() {
    let readme = doc("README.md");
    let benchmarks = doc("BENCHMARKS.md");
    if let Err(e) = check_intro(&intro(&readme), &benchmarks) {
        panic!("{e}");
    }
    // The check can fail: the paragraph as it stood before it was fixed.
    let old = "people over a CLI — BM25 (SQLite FTS5), local embeddings (all-MiniLM-L6-v2, run \
               in pure Rust) and a knowledge graph (code symbols, doc links, memory relations; \
               Personalized PageRank), fused with Reciprocal Rank Fusion. One SQLite file, no \
               server, no API key; nothing leaves the machine. On a 2-vCPU AVX-512 machine it \
               embeds ~15.5 chunks/s of 256 tokens and a short query in ~3–4 ms, with SciFact \
               nDCG@10 0.712 (hybrid) — see BENCHMARKS.md.";
    assert!(check_intro(old, &benchmarks).is_err());
    let rrf_fixed = old.replace("Reciprocal Rank Fusion", "score fusion");
    let err = check_intro(&rrf_fixed, &benchmarks).expect_err("0.712 is not the default's");
    assert!(err.contains("0.712"), "{err}");
}

#[test]
fn the_config_example_is_the_default_config() {
    let configuration = doc("docs/configuration.md");
    let block = configuration
        .split("## `cairn.toml`")
        .nth(1)
        .and_then(|s| s.split("```toml").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("docs/configuration.md has a `cairn.toml` example");
    let example: toml::Table = toml::from_str(block).expect("the example is TOML");
    let defaults = toml::Value::Table(
        toml::Table::try_from(cairn::Config::default()).expect("defaults as TOML"),
    );
    // Values the example sets on purpose, to show the key.
    let examples = ["index.roots"];
    let mut checked = 0;
    for (section, keys) in &example {
        let toml::Value::Table(keys) = keys else {
            panic!("[{section}] is not a table");
        };
        let mut stack: Vec<(String, &toml::Table)> = vec![(section.clone(), keys)];
        while let Some((at, table)) = stack.pop() {
            for (key, value) in table {
                let path = format!("{at}.{key}");
                if let toml::Value::Table(t) = value {
                    stack.push((path, t));
                    continue;
                }
                if examples.contains(&path.as_str()) {
                    continue;
                }
                let default = path
                    .split('.')
                    .try_fold(&defaults, |v, k| v.get(k))
                    .unwrap_or_else(|| {
                        panic!("docs/configuration.md sets {path}, which is no config key")
                    });
                assert_eq!(
                    value, default,
                    "docs/configuration.md's cairn.toml example says {path} = {value}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "only {checked} values checked");
}

#[test]
fn the_default_extensions_listed_are_the_code_s() {
    // The table listed C# last after C and C++ had joined the defaults.
    let configuration = doc("docs/configuration.md");
    let row = configuration
        .lines()
        .find(|l| l.starts_with("| `index.extensions` |"))
        .expect("docs/configuration.md has a row for index.extensions");
    let listed: Vec<String> = row
        .split('|')
        .nth(2)
        .expect("a default column")
        .split(',')
        .map(|e| e.trim().trim_matches('`').to_string())
        .collect();
    assert_eq!(
        listed,
        cairn::Config::default().index.extensions,
        "docs/configuration.md's default index.extensions"
    );
}

#[test]
fn stated_timings_and_floors_are_the_code_s() {
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let readme = flat(&doc("README.md"));
    let arch = flat(&doc("ARCHITECTURE.md"));
    let mcp = flat(&doc("docs/mcp.md"));
    let ranking = flat(&doc("docs/ranking.md"));
    let debounce_ms = cairn_mcp::watch::DEFAULT_DEBOUNCE_MS;
    let secs = format!("{}", debounce_ms as f64 / 1000.0);
    assert!(
        mcp.contains(&format!("`--watch` re-indexes {secs} s")),
        "docs/mcp.md: the watch debounce is {secs} s"
    );
    assert!(
        readme.contains(&format!("cairn watch [--debounce-ms {debounce_ms}]")),
        "README: `cairn watch` debounces {debounce_ms} ms"
    );
    assert!(
        arch.contains(&format!("a debouncer ({secs} s)")),
        "ARCHITECTURE.md: the watch debounce is {secs} s"
    );
    #[cfg(unix)]
    {
        let idle = cairn_mcp::daemon::DEFAULT_IDLE.as_secs();
        assert!(
            mcp.contains(&format!("`--idle-timeout` seconds (default {idle})")),
            "docs/mcp.md: the daemon's idle timeout is {idle} s"
        );
    }
    assert_eq!(
        number_after(&ranking, "confident_similarity` ("),
        Some(cairn::CONFIDENT_SIMILARITY),
        "docs/ranking.md: the confident similarity floor"
    );
    assert_eq!(
        cairn::Config::default().search.confident_similarity,
        cairn::CONFIDENT_SIMILARITY
    );
    let search = cairn::Config::default().search;
    let configuration = flat(&doc("docs/configuration.md"));
    let bge = cairn_embed::ModelSpec::BGE_SMALL_EN_V15_INT8DQ;
    let bge_weight = bge
        .vector_weight
        .expect("bge-small brings its own vector weight");
    assert!(
        configuration.contains(&format!(
            "| `search.vector_weight` | `{:.1}` (`{:.1}` with `{}`)",
            search.vector_weight, bge_weight, bge.name
        )),
        "docs/configuration.md: the vector weight's defaults"
    );
    assert!(
        ranking.contains(&format!(
            "`[search] vector_weight` {} — {:.1} with bge-small",
            search.vector_weight, bge_weight
        )),
        "docs/ranking.md: the vector weight's defaults"
    );
    assert!(
        ranking.contains("## Reranking Off by default.") && !search.rerank,
        "docs/ranking.md: reranking is off by default"
    );
    assert_eq!(
        number_after(&ranking, "`[search] rerank_k` ("),
        Some(search.rerank_k as f64),
        "docs/ranking.md: the reranker's k"
    );
    assert_eq!(
        number_after(&ranking, "`[search] rerank_budget_ms` ("),
        Some(search.rerank_budget_ms as f64),
        "docs/ranking.md: the reranker's budget"
    );
    assert!(
        ranking.contains("fp32 the default precision")
            && search.rerank_precision == cairn::EmbedPrecision::Fp32,
        "docs/ranking.md: the reranker's default precision"
    );
}

#[test]
fn architecture_states_no_line_counts() {
    // A count of a file's lines is out of date with the next commit.
    let arch = doc("ARCHITECTURE.md");
    for (i, line) in arch.lines().enumerate() {
        for (at, _) in line.match_indices(" lines)") {
            let before = &line[..at];
            let digits = before.trim_end_matches(|c: char| c.is_ascii_digit() || c == ',');
            assert!(
                !(digits.ends_with('(') && digits.len() < before.len()),
                "ARCHITECTURE.md:{}: {line}",
                i + 1
            );
        }
    }
}
