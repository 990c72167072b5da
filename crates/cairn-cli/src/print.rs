//! Human and JSON output on stdout.
//!
//! Every line of human output goes through [`clean`] (by the `say!` and
//! `tell!` macros, `println!` and `eprintln!` for people): a file name or
//! a file's text can hold terminal escape sequences, and a terminal would
//! run them. JSON (`--json`) is printed exactly: its strings escape
//! control characters already (`\u001b`).

use std::borrow::Cow;
use std::fmt::Write as _;

use cairn::{IndexReport, Status};
use cairn_bench::EvalReport;
use cairn_core::{Freshness, Hit, Relation};

/// `println!` for human output: the line goes through [`clean`] and
/// [`out_line`] (a reader gone away ends the process quietly).
macro_rules! say {
    () => {
        $crate::print::out_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::print::out_line(format_args!("{}", $crate::print::clean(&format!($($arg)*))))
    };
}

/// `eprintln!` for human output: the line goes through [`clean`].
macro_rules! tell {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::print::clean(&format!($($arg)*)))
    };
}

/// Whether a terminal could act on `c` rather than show it: C0 controls
/// but newline and tab, DEL, C1 controls, and the bidirectional overrides
/// and isolates that reorder what is shown.
fn is_hazard(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` safe for a terminal: each character [`is_hazard`] names is
/// written as a visible escape (`\x1b` for ESC, `\u{9b}` for a C1 control,
/// `\u{202e}` for a bidi override); everything else, newlines and tabs
/// included, is kept. Borrowed when there is nothing to escape.
pub fn clean(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// [`clean`]; with `keep_esc`, ESC itself is let through (for log lines
/// whose only ESC bytes are tracing's own colours: it escapes every ESC
/// and C1 control in the messages it formats, but not CR or the other C0
/// controls, which this escapes).
fn escape(text: &str, keep_esc: bool) -> Cow<'_, str> {
    let hazard = |c: char| is_hazard(c) && !(keep_esc && c == '\u{1b}');
    if !text.chars().any(hazard) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !hazard(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

/// Where log lines go: stderr, each through [`clean`] (tracing's own
/// colour codes kept when `colours` is on).
pub struct LogWriter {
    /// Whether tracing writes colour codes (stderr is a terminal).
    pub colours: bool,
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = CleanStderr;

    fn make_writer(&'a self) -> CleanStderr {
        CleanStderr {
            colours: self.colours,
        }
    }
}

/// One log line's way to stderr (see [`LogWriter`]).
pub struct CleanStderr {
    colours: bool,
}

impl std::io::Write for CleanStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // tracing hands over each formatted event whole, as UTF-8.
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(escape(&text, self.colours).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Prints JSON exactly as serialized (control characters are escaped by JSON itself).
pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    out_line(format_args!("{}", serde_json::to_string_pretty(value)?));
    Ok(())
}

/// Writes one line to stdout, as `println!` does. When the reader has gone
/// away (`cairn search … | head -1`: the write fails with
/// [`std::io::ErrorKind::BrokenPipe`]) that is the reader's choice, not a
/// failure: the process ends at once and quietly, with success, as `cat`
/// would. Any other failure to write panics, as `println!` does.
pub fn out_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{line}") {
        if is_broken_pipe(&e) {
            std::process::exit(0);
        }
        panic!("failed printing to stdout: {e}");
    }
}

/// Whether `e` says the reader of a pipe has gone away.
pub fn is_broken_pipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

/// How many skipped files `cairn index` lists by name (`--json` lists all).
const SKIPPED_SHOWN: usize = 20;

/// One reason files were left out: `31 files: binary (e.g. docs/a.png: binary (.png))`.
fn left_out(l: &cairn::LeftOutLine) -> String {
    format!(
        "{} {}: {} (e.g. {})",
        l.count,
        if l.count == 1 { "file" } else { "files" },
        l.label,
        l.example
    )
}

pub fn index_report(r: &IndexReport, has_model: bool) {
    say!(
        "indexed {} files in {:.2} s: {} added, {} changed, {} deleted, {} unchanged",
        r.files_seen,
        r.seconds,
        r.files_added,
        r.files_changed,
        r.files_deleted,
        r.files_unchanged
    );
    say!(
        "chunks: {} written, {} embedded, {} from the embedding cache{}{}",
        r.chunks_written,
        r.chunks_embedded,
        r.embed_cache_hits,
        if r.user_cache_hits > 0 {
            format!(
                ", {} vectors from the user cache (other worktrees, clones, projects)",
                r.user_cache_hits
            )
        } else {
            String::new()
        },
        if has_model {
            ""
        } else {
            " (no model: BM25 only)"
        }
    );
    if r.commits_indexed + r.commits_removed > 0 {
        say!(
            "history: {} commits indexed{} in {:.2} s",
            r.commits_indexed,
            if r.commits_removed > 0 {
                format!(", {} removed", r.commits_removed)
            } else {
                String::new()
            },
            r.history_seconds
        );
    }
    if !r.languages.is_empty() {
        let langs: Vec<String> = r
            .languages
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect();
        say!("code chunks by language: {}", langs.join(", "));
    }
    for line in r.replacements.iter().take(SKIPPED_SHOWN) {
        say!("memory: {line}");
    }
    if r.replacements.len() > SKIPPED_SHOWN {
        say!(
            "memory: … and {} more replacements (`cairn doctor`)",
            r.replacements.len() - SKIPPED_SHOWN
        );
    }
    for w in &r.history_warnings {
        say!("history: {w}");
    }
    if !r.notes.is_empty() {
        say!(
            "indexed {} file(s) not read exactly as written:",
            r.notes.len()
        );
        for n in r.notes.iter().take(SKIPPED_SHOWN) {
            say!("  {}: {}", n.path.display(), n.note);
        }
        if r.notes.len() > SKIPPED_SHOWN {
            say!(
                "  … and {} more (`cairn index --json` lists them all)",
                r.notes.len() - SKIPPED_SHOWN
            );
        }
    }
    // Problems (a link, an unreadable file) by name; what is left out on
    // purpose (binary, vendored, test data) by count, a line per reason.
    let (problems, counted): (Vec<&cairn::Skipped>, Vec<&cairn::Skipped>) =
        r.skipped.iter().partition(|s| s.kind.is_problem());
    if !problems.is_empty() {
        say!("skipped {} file(s):", problems.len());
        for s in problems.iter().take(SKIPPED_SHOWN) {
            say!("  {}: {}", s.path.display(), s.reason);
        }
        if problems.len() > SKIPPED_SHOWN {
            say!(
                "  … and {} more (`cairn index --json` lists them all)",
                problems.len() - SKIPPED_SHOWN
            );
        }
    }
    if !counted.is_empty() {
        let counted: Vec<cairn::Skipped> = counted.into_iter().cloned().collect();
        let root = std::env::current_dir().unwrap_or_default();
        for l in cairn::left_out_lines(&counted, &root) {
            say!("left out {}", left_out(&l));
        }
    }
}

pub fn hits(hits: &[Hit], explain: bool) {
    if hits.is_empty() {
        say!("no matches");
        return;
    }
    for (i, h) in hits.iter().enumerate() {
        let crumb = if h.breadcrumb.is_empty() {
            String::new()
        } else {
            format!("  {}", h.breadcrumb)
        };
        say!(
            "{}. {}:{}-{}{crumb}",
            i + 1,
            h.path,
            h.start_line,
            h.end_line
        );
        let source = match h.source {
            Freshness::Fresh => "",
            Freshness::Changed => "  (file changed since indexing: lines may be off)",
            Freshness::Deleted => "  (file deleted since indexing)",
        };
        say!("   score {:.5}  id {}{source}", h.score, h.chunk_id);
        for line in h.snippet.lines() {
            say!("   │ {line}");
        }
        if explain {
            // Files are fused (each retriever's vote for the file), then the
            // file is shown by its chunks, ordered by their own votes.
            for s in &h.signals {
                say!(
                    "   {:<7} rank {:>3}  raw {:>9.4}  adds +{:.5}  (file)",
                    s.retriever,
                    s.rank,
                    s.raw,
                    s.contribution
                );
            }
            if !h.chunk_signals.is_empty() {
                let rows: Vec<String> = h
                    .chunk_signals
                    .iter()
                    .map(|s| format!("{} rank {} raw {:.4}", s.retriever, s.rank, s.raw))
                    .collect();
                say!("   chunk   {}", rows.join(" · "));
            }
            for b in &h.boosts {
                say!("   boost   {} ×{}", b.reason, factor(b.factor));
            }
            if !h.via.is_empty() {
                say!("   via     {}", h.via.join(" "));
            }
            if let Some(r) = &h.rerank {
                say!(
                    "   rerank  rank {:>3}  score {:>9.4}  fused rank {}",
                    r.rank,
                    r.score,
                    r.fused_rank
                );
            }
        }
        say!();
    }
}

/// `search --explain`: what the names retriever read from the query (the
/// names, paths and modules it looks up, and from where), or that it read
/// nothing; at most eight of each listed.
pub fn names_read(read: &cairn::QueryRead) {
    const SHOWN: usize = 8;
    if read.is_empty() {
        say!("names: none read from the query (the names retriever had nothing to look up)");
        return;
    }
    let mut parts = Vec::new();
    if read.frames > 0 {
        parts.push(format!("{} traceback frames", read.frames));
    }
    if read.code_blocks > 0 {
        parts.push(format!("{} code blocks", read.code_blocks));
    }
    say!(
        "names: read {} names, {} paths and {} word phrases from the query{}{}",
        read.names.len(),
        read.paths.len(),
        read.phrases.len(),
        if parts.is_empty() { "" } else { ", " },
        parts.join(", ")
    );
    let name = |n: &cairn::NameRef| match &n.qualifier {
        Some(q) => format!("{q}.{} ({}, {:.2})", n.name, n.from.name(), n.weight),
        None => format!("{} ({}, {:.2})", n.name, n.from.name(), n.weight),
    };
    // The first SHOWN of a list on one line, and how many more there are.
    let line = |label: &str, shown: Vec<String>, total: usize| {
        if total > 0 {
            let more = total.saturating_sub(SHOWN);
            let more = if more > 0 {
                format!(" … and {more} more")
            } else {
                String::new()
            };
            say!("   {label}  {}{more}", shown.join(", "));
        }
    };
    line(
        "names",
        read.names.iter().take(SHOWN).map(name).collect(),
        read.names.len(),
    );
    line(
        "paths",
        read.paths
            .iter()
            .take(SHOWN)
            .map(|p| {
                let kind = if p.module { "module" } else { "path" };
                format!(
                    "{} ({kind}, {}, {:.2})",
                    p.display(),
                    p.from.name(),
                    p.weight
                )
            })
            .collect(),
        read.paths.len(),
    );
}

/// `search --explain --rerank`: what the reranker did, after the hits.
pub fn rerank_report(report: Option<&cairn::RerankReport>) {
    let Some(r) = report else {
        return;
    };
    if let Some(e) = &r.error {
        say!("rerank: not applied ({e}); the fused order is kept");
        if r.scored == 0 {
            return;
        }
    }
    say!(
        "rerank: {} scored {} of the top {} in {:.0} ms (budget {:.0} ms), blend {}",
        r.model,
        r.scored,
        r.asked,
        r.ms,
        r.budget_ms,
        r.blend
    );
    if r.over_budget {
        say!(
            "rerank: the budget ran out: places {}–{} keep their fused order",
            r.scored + 1,
            r.asked
        );
    }
}

/// A boost's factor as people read it: at most 3 decimals, no trailing
/// zeros (`×0.79`, `×1.3`), as the page prints it.
fn factor(f: f64) -> String {
    let s = format!("{f:.3}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn human_bytes(n: u64) -> String {
    let units = ["B", "KB", "MB", "GB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", units[u])
}

/// `cairn expand`: where the section is, what it is, then its text.
pub fn section(s: &cairn::Section) {
    let crumb = if s.breadcrumb.is_empty() {
        String::new()
    } else {
        format!("  {}", s.breadcrumb)
    };
    say!(
        "{}:{}-{}  {}{crumb}",
        s.path,
        s.start_line,
        s.end_line,
        s.scope
    );
    match s.freshness {
        Freshness::Fresh => {}
        Freshness::Changed => say!("(the file changed since it was indexed: lines may be off)"),
        Freshness::Deleted => say!("(the file is gone)"),
    }
    say!("{}", s.text.trim_end());
    if s.truncated {
        say!(
            "(cut to the token budget: the whole {} is lines {}-{})",
            s.scope,
            s.full_start_line.unwrap_or(s.start_line),
            s.full_end_line.unwrap_or(s.end_line)
        );
    }
}

/// The current time in Unix seconds.
fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// How long before `now` the instant `then` was, as a person says it.
fn ago(then: i64, now: i64) -> String {
    let s = now - then;
    match s {
        ..0 => "in the future: check the clock".into(),
        0..60 => "just now".into(),
        60..3600 => format!("{} min ago", s / 60),
        3600..86_400 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// Unix seconds → `YYYY-MM-DD HH:MM:SS UTC` (days-to-civil, H. Hinnant).
fn utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `daemon`: the pid of the project's daemon when it answered.
pub fn status(s: &Status, daemon: Option<u32>) {
    say!("project     {}", s.root.display());
    say!(
        "index       {} ({})",
        s.index_path.display(),
        human_bytes(s.index_bytes)
    );
    say!("files       {}", s.files);
    if !s.files_by_kind.is_empty() {
        let mut kinds: Vec<(&String, &u64)> = s.files_by_kind.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        say!("  by kind   {}", kinds.join(", "));
    }
    for l in &s.left_out {
        say!("left out   {}", left_out(l));
    }
    say!("chunks      {}", s.chunks);
    match &s.model {
        Some(m) => say!(
            "embedded    {} / {} ({m}){}{}",
            s.embedded_chunks,
            s.chunks,
            if s.commits_without_vectors > 0 {
                format!(
                    "; {} commit records without, by history.vectors = false",
                    s.commits_without_vectors
                )
            } else {
                String::new()
            },
            if s.embedding_in_progress {
                "; computing vectors now"
            } else {
                ""
            }
        ),
        None => say!("embedded    model unavailable (BM25 only)"),
    }
    if let Some(q) = &s.embed_queue {
        let fill = q.pending as f64 / q.capacity.max(1) as f64;
        say!(
            "queue       {} chunks wait for a vector ({:.0}% of {}{}){}{}",
            q.pending,
            fill * 100.0,
            q.capacity,
            if fill >= cairn::SLOW_DOWN_AT {
                "; writers are slowed"
            } else {
                ""
            },
            if q.per_second > 0.0 {
                format!("; {:.1} vectors/s lately", q.per_second)
            } else {
                String::new()
            },
            if q.slowed_writes > 0 {
                format!("; {} writes slowed", q.slowed_writes)
            } else {
                String::new()
            }
        );
    }
    match s.last_indexed {
        Some(t) => say!("last index  {} ({})", utc(t), ago(t, now_secs())),
        None => say!("last index  never"),
    }
    if let Some(pid) = daemon {
        say!("daemon      running (pid {pid}); this status is its own");
    }
    for (client, h) in s.hooks.iter().flat_map(|h| h.as_object()).flatten() {
        let ok = h["last_success"].as_str().unwrap_or("never");
        let err = h["last_error"]["message"]
            .as_str()
            .map(|m| format!("; last error: {m}"))
            .unwrap_or_default();
        // A client whose hooks only injected has no capture to report.
        if h.get("last_success").is_some() || h.get("last_error").is_some() {
            say!("hook        {client}: last success {ok}{err}");
        }
        for (event, i) in h["injected"].as_object().into_iter().flatten() {
            say!(
                "hook        {client} {event}: {} runs, {} with memories, {} tokens injected in all",
                i["runs"].as_u64().unwrap_or(0),
                i["with_memories"].as_u64().unwrap_or(0),
                i["tokens"].as_u64().unwrap_or(0)
            );
        }
    }
}

pub fn eval(r: &EvalReport, by_group: bool) {
    say!(
        "{}: {} queries; index: {} files, {} chunks, {:.1} s this run ({} embedded, {} cached), {:.1} chunks/s; model {}",
        r.dataset.display(),
        r.queries,
        r.index.files_seen,
        r.chunks,
        r.index.seconds,
        r.index.chunks_embedded,
        r.index.embed_cache_hits,
        r.chunks_per_sec,
        r.model.as_deref().unwrap_or("none")
    );
    say!(
        "{:<16} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8} {:>7} {:>7} {:>8} {:>8} {:>8}",
        "mode",
        "nDCG@10",
        "R@1",
        "R@5",
        "R@10",
        "R@100",
        "MRR@10",
        "p50 ms",
        "p95 ms",
        "hit@1",
        "hit@5",
        "chunk@1",
        "chunk@5",
        "files@5"
    );
    let graph = r.modes.iter().any(|m| m.graph);
    for m in &r.modes {
        let name = mode_name(m, graph);
        say!(
            "{:<16} {:>8.4} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {:>8.2} {:>8.2} {:>7.4} {:>7.4} {:>8.4} {:>8.4} {:>8.2}",
            name,
            m.ndcg_at_10,
            m.recall_at_1,
            m.recall_at_5,
            m.recall_at_10,
            m.recall_at_100,
            m.mrr_at_10,
            m.p50_ms,
            m.p95_ms,
            m.file_hit_at_1,
            m.file_hit_at_5,
            m.chunk_hit_at_1,
            m.chunk_hit_at_5,
            m.files_at_5
        );
    }
    if by_group {
        eval_groups(r, graph);
    }
    eval_misses(r, graph);
    eval_floors(r);
    eval_confidence(r);
    say!(
        "(p50/p95 above: ranked as `search --limit 10` ranks; Recall@100 from lists of 400) default search, limit 5: p50 {:.2} ms, p95 {:.2} ms",
        r.search_p50_ms,
        r.search_p95_ms
    );
}

/// The `--by-group` table of an eval.
fn eval_groups(r: &EvalReport, graph: bool) {
    if r.modes.iter().any(|m| !m.groups.is_empty()) {
        say!(
            "\nby group, then by half and language where the set has a split.tsv, then by intent where its queries carry one: as labelled, then as labelled and as the ranking reads it (hit@k, MRR@10: files; chunk@k: one of the first k chunks overlaps a labelled range)"
        );
        say!(
            "{:<16} {:<24} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8}",
            "mode",
            "group",
            "queries",
            "nDCG@10",
            "hit@1",
            "hit@5",
            "MRR@10",
            "chunk@1",
            "chunk@5"
        );
        for m in &r.modes {
            let name = mode_name(m, graph);
            for g in m
                .groups
                .iter()
                .chain(&m.halves)
                .chain(&m.languages)
                .chain(&m.intents)
            {
                say!(
                    "{:<16} {:<24} {:>7} {:>8.4} {:>7.4} {:>7.4} {:>7.4} {:>8.4} {:>8.4}",
                    name,
                    g.group,
                    g.queries,
                    g.ndcg_at_10,
                    g.file_hit_at_1,
                    g.file_hit_at_5,
                    g.mrr_at_10,
                    g.chunk_hit_at_1,
                    g.chunk_hit_at_5
                );
            }
        }
    }
}

/// The `--misses` lists of an eval.
fn eval_misses(r: &EvalReport, graph: bool) {
    for m in r.modes.iter().filter(|m| !m.queries.is_empty()) {
        let missed: Vec<_> = m
            .queries
            .iter()
            .filter(|q| q.first_relevant != Some(1))
            .collect();
        say!(
            "\n{} misses ({} of {} queries not first):",
            mode_name(m, graph),
            missed.len(),
            m.queries.len()
        );
        for q in missed {
            let rank = q.first_relevant.map_or("-".to_string(), |r| r.to_string());
            let chunk = if q.chunk_hit {
                "chunk ok"
            } else {
                "chunk miss"
            };
            say!(
                "  {} rank {rank} {chunk}: {}\n      got {}",
                q.id,
                q.text,
                q.top.join(", ")
            );
        }
    }
}

/// The `--floors` table of an eval.
fn eval_floors(r: &EvalReport) {
    if !r.floors.is_empty() {
        say!(
            "\nrelevance floors on the first 10 hits of a search (limit 10, floors off), by setting:"
        );
        say!(
            "{:<11} {:>9} {:>9} {:>10} {:>10} {:>9} {:>8} {:>7}",
            "min_score",
            "relative",
            "relevant",
            "rel. lost",
            "others cut",
            "q losing",
            "emptied",
            "hits"
        );
        for f in &r.floors {
            say!(
                "{:<11} {:>9} {:>9} {:>10.4} {:>10.4} {:>9.4} {:>8.4} {:>7.2}{}",
                f.min_score,
                f.relative_floor,
                f.relevant_in_top,
                f.relevant_dropped,
                f.other_dropped,
                f.queries_losing_relevant,
                f.queries_emptied,
                f.mean_hits,
                if f.configured { "  (configured)" } else { "" }
            );
        }
    }
}

/// The confidence table of an eval.
fn eval_confidence(r: &EvalReport) {
    if !r.confidence.is_empty() {
        say!(
            "\nconfident answers (closest of the first 10 hits at least this similar to the query), by floor:"
        );
        say!(
            "{:<6} {:>10} {:>16} {:>10}",
            "floor",
            "on-topic",
            "relevant first",
            "off-topic"
        );
        for c in &r.confidence {
            say!(
                "{:<6.2} {:>10.4} {:>16.4} {:>10.4}{}",
                c.floor,
                c.on_topic_confident,
                c.relevant_first_confident,
                c.off_topic_confident,
                if c.configured { "  (configured)" } else { "" }
            );
        }
    }
}

/// A mode's name in the eval tables: `hybrid+graph`, `hybrid (no graph)`
/// beside a graph run, `bm25`, `vector`.
fn mode_name(m: &cairn_bench::ModeScores, graph: bool) -> String {
    let mut name = format!("{:?}", m.mode).to_lowercase();
    if m.graph {
        name.push_str("+graph");
    } else if graph && matches!(m.mode, cairn::Mode::Hybrid) {
        name.push_str(" (no graph)");
    }
    if let Some(r) = &m.rerank {
        name = format!("{name} rr {r}");
    }
    name
}

/// Two runs of one set (SQLite, PostgreSQL) mode by mode.
pub fn eval_side_by_side(a: &EvalReport, b: &EvalReport) {
    say!(
        "{:<16} {:>15} {:>15} {:>15} {:>21} {:>21}",
        "mode",
        "nDCG@10 sq|pg",
        "R@5 sq|pg",
        "R@10 sq|pg",
        "p50 ms sq|pg",
        "p95 ms sq|pg"
    );
    for (x, y) in a.modes.iter().zip(&b.modes) {
        let mut name = format!("{:?}", x.mode).to_lowercase();
        if x.graph {
            name.push_str("+graph");
        }
        say!(
            "{:<16} {:>7.4}|{:<7.4} {:>7.4}|{:<7.4} {:>7.4}|{:<7.4} {:>10.2}|{:<10.2} {:>10.2}|{:<10.2}",
            name,
            x.ndcg_at_10,
            y.ndcg_at_10,
            x.recall_at_5,
            y.recall_at_5,
            x.recall_at_10,
            y.recall_at_10,
            x.p50_ms,
            y.p50_ms,
            x.p95_ms,
            y.p95_ms
        );
    }
    say!(
        "default search p50 {:.2}|{:.2} ms, p95 {:.2}|{:.2} ms (SQLite|PostgreSQL)",
        a.search_p50_ms,
        b.search_p50_ms,
        a.search_p95_ms,
        b.search_p95_ms
    );
}

fn node_line(n: &cairn::GraphNode) -> String {
    match (&n.path, n.lines) {
        (Some(p), Some((a, b))) if n.label.starts_with(p.as_str()) => {
            format!("[{}] {}  ({p}:{a}-{b})", n.kind, n.label)
        }
        (Some(p), Some((a, b))) => format!("[{}] {p}:{a}-{b}  {}", n.kind, n.label),
        _ => format!("[{}] {}", n.kind, n.label),
    }
}

pub fn neighborhood(n: &cairn::Neighborhood) {
    say!("{} ({} links)", n.entity.label, n.entity.degree);
    let mut rels: Vec<&Relation> = Vec::new();
    for x in &n.neighbors {
        if !rels.contains(&&x.rel) {
            rels.push(&x.rel);
        }
    }
    for rel in rels {
        let heading = match rel {
            Relation::Defines => "defined in",
            Relation::Calls => "called from",
            Relation::Imports => "imported in",
            Relation::Uses => "used in",
            Relation::Mentions => "mentioned in",
            Relation::MemberOf => "members",
            Relation::Implements => "implements / implemented by",
            Relation::Heading => "heading of",
            Relation::Links => "linked from",
            Relation::In => "chunks in this file",
            Relation::Explicit(other) => other,
        };
        say!("  {heading}:");
        for x in n.neighbors.iter().filter(|x| x.rel == *rel) {
            say!("    {}", node_line(&x.node));
        }
    }
}

pub fn graph_path(path: &[(cairn::GraphNode, String)]) {
    for (n, rel) in path {
        say!("{}", node_line(n));
        if !rel.is_empty() {
            say!("   │ {rel}");
        }
    }
}

pub fn communities(c: &cairn::Communities) {
    let total = c.total.max(c.communities.len());
    let shown = if total > c.communities.len() {
        format!(", the {} largest shown (-n 0: all)", c.communities.len())
    } else {
        String::new()
    };
    say!(
        "{total} communities of 3 or more nodes{shown} (graph: {} nodes, {} edges; modularity {:.3}; Leiden {:.1} ms)",
        c.nodes,
        c.edges,
        c.modularity,
        c.millis
    );
    for x in &c.communities {
        say!("{:>4}. {}  ({} nodes)", x.id, x.label, x.size);
        if !x.files.is_empty() {
            say!("      files: {}", x.files.join(", "));
        }
    }
}

/// What `cairn import` brought in.
pub fn imported(t: &cairn::Transfer) {
    say!(
        "imported {} documents ({} chunks, {} links), {} memory files ({} already there), {} vectors",
        t.documents,
        t.chunks,
        t.links,
        t.memories,
        t.memories_unchanged,
        t.vectors
    );
    for line in &t.replacements {
        say!("memory: {line}");
    }
}

/// The LoCoMo memory benchmark's figures.
pub fn memory_eval(r: &cairn_bench::MemoryEvalReport) {
    say!(
        "{} conversations: {} turns stored as {} memories ({} merged as near-duplicates) in {:.1} s",
        r.conversations,
        r.turns,
        r.memories,
        r.merged,
        r.store_seconds
    );
    say!(
        "{} questions with memory_recall: turn Recall@5 {:.4}, Recall@10 {:.4}; session Recall@5 {:.4}; {:.2} memories returned of 10; recall p50 {:.1} ms, p95 {:.1} ms",
        r.queries,
        r.turn_recall_at_5,
        r.turn_recall_at_10,
        r.session_recall_at_5,
        r.mean_returned,
        r.recall_p50_ms,
        r.recall_p95_ms
    );
    if !r.injection.is_empty() {
        say!(
            "each question as a prompt to the UserPromptSubmit hook ([inject] prompt_min_similarity):"
        );
        say!("  floor  injected  answered  precision  mean tokens  p95 tokens  off-topic injected");
        for i in &r.injection {
            say!(
                "  {:.2}   {:>7.1}%  {:>7.1}%  {:>8.1}%  {:>11.1}  {:>10.0}  {:>17.1}%",
                i.min_similarity,
                i.injected * 100.0,
                i.answered * 100.0,
                i.precision * 100.0,
                i.mean_tokens,
                i.p95_tokens,
                i.off_topic_injected * 100.0
            );
        }
    }
}

/// The turns of a captured session, the centre one marked `>`.
pub fn transcript(t: &cairn::TranscriptView) {
    say!("session {} ({})", t.session_id, t.transcript.display());
    for turn in &t.turns {
        let mark = if turn.id == t.turn_id { ">" } else { " " };
        say!(
            "{mark} [{}] {} {}",
            turn.role,
            turn.id,
            turn.time.as_deref().unwrap_or("")
        );
        for line in turn.text.lines() {
            say!("    {line}");
        }
    }
}

/// `bench graph` figures.
pub fn graph_bench(b: &cairn_bench::GraphBench) {
    say!(
        "graph: {} chunks, {} entities, {} edges (built in {:.1} ms)",
        b.chunks,
        b.entities,
        b.edges,
        b.build_ms
    );
    say!(
        "PPR retriever over {} queries: p50 {:.2} ms, p95 {:.2} ms",
        b.queries,
        b.ppr_p50_ms,
        b.ppr_p95_ms
    );
    say!(
        "Leiden: {:.1} ms, {} communities, modularity {:.3}",
        b.leiden_ms,
        b.communities,
        b.modularity
    );
}

/// Says on stderr when no hit is close in meaning to the query (`what`:
/// "hit", "memory"); the hits stay on stdout. Nothing when no vectors ran.
pub fn confidence_note(
    similarities: impl IntoIterator<Item = Option<f64>>,
    vectors_ran: bool,
    floor: f64,
    what: &str,
    quiet: bool,
) {
    let confidence = cairn::Confidence::of(similarities, vectors_ran, floor);
    if let Some(note) = confidence.and_then(|c| c.note(what))
        && !quiet
    {
        eprintln!("note: {note}; what is listed matches words at best");
    }
}

/// `cairn why`: what was asked, then each commit (newest first) with its
/// message and the lines it touched, then the memories on the same code.
pub fn why(w: &cairn::Why) {
    let what = match (&w.symbol, &w.path, w.lines) {
        (Some(s), Some(p), Some((a, b))) => format!("{s} ({p}:{a}-{b})"),
        (Some(s), Some(p), None) => format!("{s} ({p})"),
        (Some(s), None, _) => s.clone(),
        (None, Some(p), _) => p.clone(),
        (None, None, _) => w.target.clone(),
    };
    if w.commits_indexed == 0 {
        say!("no git history indexed (a git repository, [history] enabled, then `cairn index`)");
        return;
    }
    if w.matched == 0 {
        say!(
            "no commit of the {} indexed changed {what}",
            w.commits_indexed
        );
    } else {
        if w.merges > 0 {
            say!(
                "{what}: {} commit(s) and {} merge(s) that brought them in, newest first",
                w.matched - w.merges,
                w.merges
            );
        } else {
            say!("{what}: {} commit(s), newest first", w.matched);
        }
    }
    for c in &w.commits {
        let short = &c.sha[..c.sha.len().min(12)];
        let tag = match (c.matched.as_str(), c.noise) {
            (_, true) => " [merge/bot]",
            ("file", _) => " [file]",
            _ => "",
        };
        say!();
        say!("{short} {} {}{tag}", c.date, c.author);
        say!("  {}", c.subject);
        for line in c.body.lines() {
            say!("  {line}");
        }
        for f in &c.files {
            let hunks: Vec<String> = f
                .hunks
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                })
                .collect();
            let syms = if f.symbols.is_empty() {
                String::new()
            } else {
                format!(" [{}]", f.symbols.join(", "))
            };
            say!(
                "  {} {} +{} -{} lines {}{syms}",
                f.status,
                f.path,
                f.added,
                f.removed,
                hunks.join(",")
            );
        }
    }
    if !w.memories.is_empty() {
        say!();
        say!("memories on the same code:");
        for m in &w.memories {
            say!(
                "  {} ({}): {}",
                m.id,
                m.kind,
                m.text.lines().next().unwrap_or("")
            );
        }
    }
    if w.truncated {
        say!();
        say!(
            "… {} of {} commits shown, messages cut to fit (--limit, --max-tokens {})",
            w.commits.len(),
            w.matched,
            w.max_tokens
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clean_escapes_what_a_terminal_would_act_on() {
        use super::clean;
        assert!(matches!(
            clean("plain\ttext\nline"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(clean("a\u{1b}[31mb\u{7}"), "a\\x1b[31mb\\x07");
        assert_eq!(clean("over\rwrite\u{7f}"), "over\\x0dwrite\\x7f");
        assert_eq!(clean("c1 \u{9b}31m"), "c1 \\u{9b}31m");
        assert_eq!(clean("bidi \u{202e}txt.exe"), "bidi \\u{202e}txt.exe");
        assert_eq!(clean("naïve café ✓"), "naïve café ✓");
        // Log lines keep tracing's colours, and lose everything else.
        assert_eq!(
            super::escape("\u{1b}[33mWARN\u{1b}[0m a\rb\u{1}", true),
            "\u{1b}[33mWARN\u{1b}[0m a\\x0db\\x01"
        );
    }

    #[test]
    fn ago_says_how_long_before() {
        assert_eq!(super::ago(100, 130), "just now");
        assert_eq!(super::ago(0, 600), "10 min ago");
        assert_eq!(super::ago(0, 3 * 3600 + 5), "3 h ago");
        assert_eq!(super::ago(0, 2 * 86_400), "2 days ago");
        assert_eq!(super::ago(10, 0), "in the future: check the clock");
    }

    #[test]
    fn a_factor_has_at_most_three_decimals() {
        assert_eq!(super::factor(0.789_500_381_001_935_6), "0.79");
        assert_eq!(super::factor(0.654_321), "0.654");
        assert_eq!(super::factor(1.3), "1.3");
        assert_eq!(super::factor(2.0), "2");
    }

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(super::utc(1_795_000_000), "2026-11-18 11:06:40 UTC");
    }
}
