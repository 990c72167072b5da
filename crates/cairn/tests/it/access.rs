//! `expand` and `get` keep to a token budget; `expand` on code gives the
//! enclosing definition, never a whole file.

use cairn::{Engine, Mode, NoProgress, SearchOptions};
use cairn_search::estimate_tokens;

use crate::{Project, roots};

/// A Rust file of about 8,000 lines: one `impl` of 1,100 small methods with
/// `settle_invoice` in the middle, and one huge function. Returns the text and
/// the line ranges (1-based, inclusive, doc comment included) of
/// `settle_invoice` and of the huge function.
fn big_rust_file() -> (String, (u32, u32), (u32, u32)) {
    let mut lines: Vec<String> = vec![
        "//! Billing.".into(),
        "use std::collections::HashMap;".into(),
        String::new(),
        "pub struct Ledger {".into(),
        "    entries: Vec<i64>,".into(),
        "}".into(),
        String::new(),
        "impl Ledger {".into(),
    ];
    let mut settle = (0, 0);
    for i in 0..1100 {
        if i == 550 {
            let start = lines.len() as u32 + 1;
            lines.extend(
                [
                    "    /// Settles an invoice against the ledger.",
                    "    pub fn settle_invoice(&mut self, amount: i64) -> i64 {",
                    "        let reconciled_total = amount - self.entries.len() as i64;",
                    "        self.entries.push(reconciled_total);",
                    "        reconciled_total",
                    "    }",
                ]
                .map(String::from),
            );
            settle = (start, lines.len() as u32);
            lines.push(String::new());
        }
        lines.extend([
            format!("    /// Helper number {i}."),
            format!("    pub fn helper_{i}(&self, x: i64) -> i64 {{"),
            format!("        let a = x + {i};"),
            "        let b = a * 2;".into(),
            "        a + b".into(),
            "    }".into(),
            String::new(),
        ]);
    }
    lines.push("}".into());
    lines.push(String::new());
    let start = lines.len() as u32 + 1;
    lines.push("pub fn giant_report(ledger: &Ledger) -> i64 {".into());
    lines.push("    let mut total = 0;".into());
    for i in 0..400 {
        lines.push(format!("    total += ledger.helper_{i}({i});"));
        if i == 350 {
            lines.push("    let quarterly_variance_marker = total / 4;".into());
            lines.push("    total += quarterly_variance_marker;".into());
        }
    }
    lines.push("    total".into());
    lines.push("}".into());
    let giant = (start, lines.len() as u32);
    (lines.join("\n") + "\n", settle, giant)
}

fn chunk_of(e: &Engine, query: &str, path: &str) -> cairn_core::Hit {
    let opts = SearchOptions {
        mode: Mode::Bm25,
        no_graph: true,
        ..SearchOptions::default()
    };
    e.search(query, &opts)
        .unwrap()
        .into_iter()
        .find(|h| h.path == path)
        .unwrap_or_else(|| panic!("{query}: no hit in {path}"))
}

#[test]
fn expand_on_code_gives_the_enclosing_function_not_the_file() {
    let p = Project::new();
    let (src, settle, giant) = big_rust_file();
    assert!(src.lines().count() > 8_000);
    p.write("src/ledger.rs", &src);
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();

    let hit = chunk_of(&e, "settle_invoice reconciled_total", "src/ledger.rs");
    let s = e.expand(&hit.chunk_id, 0, 0).unwrap();
    assert_eq!(s.scope, "function settle_invoice");
    assert_eq!((s.start_line, s.end_line), settle, "{}", s.text);
    assert!(
        s.text.starts_with("    /// Settles an invoice"),
        "{}",
        s.text
    );
    assert!(!s.text.contains("helper_"), "{}", s.text);
    assert!(!s.truncated && s.hint.is_none());
    let json = serde_json::to_value(&s).unwrap();
    assert!(json.get("truncated").is_none(), "{json}");
    // context_lines widens the definition.
    let s = e.expand(&hit.chunk_id, 2, 0).unwrap();
    assert_eq!((s.start_line, s.end_line), (settle.0 - 2, settle.1 + 2));

    // A match deep in a function too big for the budget: the text is cut,
    // says so, and still shows the match.
    let hit = chunk_of(&e, "quarterly_variance_marker", "src/ledger.rs");
    let s = e.expand(&hit.chunk_id, 0, 0).unwrap();
    assert_eq!(s.scope, "function giant_report");
    assert!(s.truncated, "{s:?}");
    assert!(estimate_tokens(&s.text) <= cairn::DEFAULT_READ_TOKENS);
    assert!(s.text.contains("quarterly_variance_marker"), "{}", s.text);
    assert_eq!(
        (s.full_start_line, s.full_end_line),
        (Some(giant.0), Some(giant.1))
    );
    assert!(
        s.start_line > giant.0,
        "the function's head is left out: {s:?}"
    );
    let hint = s.hint.as_deref().unwrap();
    assert!(
        hint.contains("max_tokens") && hint.contains("get"),
        "{hint}"
    );
    // A larger budget gives the whole function.
    let s = e.expand(&hit.chunk_id, 0, 100_000).unwrap();
    assert!(!s.truncated);
    assert_eq!((s.start_line, s.end_line), giant);
}

#[test]
fn expand_cuts_a_huge_section_and_says_so() {
    let p = Project::new();
    let mut doc = String::from(
        "# Runbook\n\nShort intro about the on-call rotation and pager duty.\n\n## Incidents\n\n",
    );
    for i in 0..3_000 {
        doc.push_str(&format!(
            "Step {i}: check the dashboard, page the owner, write the timeline.\n"
        ));
    }
    doc.push_str("\n## Afterwards\n\nWrite the postmortem within two days of the incident.\n");
    p.write("docs/runbook.md", &doc);
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let hit = chunk_of(&e, "dashboard timeline owner", "docs/runbook.md");
    let s = e.expand(&hit.chunk_id, 0, 500).unwrap();
    assert_eq!(s.scope, "section");
    assert!(s.truncated, "{s:?}");
    assert!(estimate_tokens(&s.text) <= 500);
    assert!(s.text.lines().count() > 10);
    assert_eq!(s.text.lines().count() as u32, s.end_line - s.start_line + 1);
    assert_eq!(s.full_end_line, Some(3_006));
    assert!(!s.text.contains("## Afterwards"));
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["truncated"], true);
    assert!(
        json["hint"].as_str().unwrap().contains("start_line"),
        "{json}"
    );
    // Asked for enough, the whole section comes back.
    let s = e.expand(&hit.chunk_id, 0, 1_000_000).unwrap();
    assert!(!s.truncated);
    assert_eq!((s.start_line, s.end_line), (5, 3_006));
}

#[test]
fn get_keeps_to_its_budget_and_says_where_to_go_on() {
    let p = Project::new();
    let (src, _, _) = big_rust_file();
    p.write("src/ledger.rs", &src);
    p.write("docs/small.md", "# Small\n\nA short file.\n");
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let total = src.lines().count() as u32;

    let f = e.read_file("src/ledger.rs", None, None, 500).unwrap();
    assert!(f.truncated);
    assert!(estimate_tokens(&f.text) <= 500);
    assert_eq!(f.start_line, 1);
    assert_eq!(f.text.lines().count() as u32, f.end_line);
    assert_eq!((f.total_lines, f.full_end_line), (total, Some(total)));
    let next = f.end_line + 1;
    assert!(
        f.hint
            .as_deref()
            .unwrap()
            .contains(&format!("start_line {next}")),
        "{:?}",
        f.hint
    );
    let g = e.read_file("src/ledger.rs", Some(next), None, 500).unwrap();
    assert_eq!(g.start_line, next);
    assert_eq!(g.text.lines().next(), src.lines().nth(next as usize - 1));

    // No budget named: the default, never the whole 8,000-line file.
    let f = e.read_file("src/ledger.rs", None, None, 0).unwrap();
    assert!(f.truncated && f.end_line < total);
    assert!(estimate_tokens(&f.text) <= cairn::DEFAULT_READ_TOKENS);
    // A range that fits comes back whole, with no cut fields.
    let f = e.read_file("src/ledger.rs", Some(4), Some(6), 0).unwrap();
    assert!(!f.truncated && f.hint.is_none());
    assert_eq!(f.text, "pub struct Ledger {\n    entries: Vec<i64>,\n}");
    let f = e.read_file("docs/small.md", None, None, 0).unwrap();
    let json = serde_json::to_value(&f).unwrap();
    assert!(
        json.get("truncated").is_none() && json.get("hint").is_none(),
        "{json}"
    );
}
