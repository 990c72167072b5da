//! The `search` and `memory_recall` answers, shaped to fit a token budget
//! (the dual response of the Memory MCP v3 design).
//!
//! Without a budget every match comes with its full text. With `max_tokens`
//! the answer has two parts: `index`, one compact line per match (`id
//! path:lines breadcrumb (score, source): summary`, two dozen tokens or so),
//! listing every match up to the limit that the budget holds, and
//! `details`, the full text of the best matches in what the index left.
//! Both carry `total_count` (matches found, past the limit too), `has_more`
//! (some match is in neither the index nor this page) and `tokens_used`.
//! Tokens are counted over the serialized JSON the model reads, with
//! [`cairn_search::estimate_tokens`]; the answer never counts more than the
//! budget.

use cairn::Freshness;
use cairn_core::Hit;
use cairn_search::estimate_tokens;
use serde::Serialize;
use serde_json::{Value, json};

/// The smallest budget that leaves room for one index line.
pub const MIN_BUDGET: usize = 100;

/// A budget below this for a match's text is not worth a truncated excerpt.
const MIN_EXCERPT: usize = 24;

/// Most characters of an index line's summary.
const SUMMARY_CHARS: usize = 100;

/// The first words of `text` on one line: whitespace collapsed, cut at a
/// word before [`SUMMARY_CHARS`] with `…`; markdown heading marks dropped.
pub fn summary(text: &str) -> String {
    let mut out = String::new();
    for word in text
        .split_whitespace()
        .filter(|w| !w.chars().all(|c| c == '#'))
    {
        if out.chars().count() + word.chars().count() + 1 > SUMMARY_CHARS {
            out.push('…');
            return out;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// One match with its text, as an unbudgeted answer lists it.
#[derive(Serialize)]
struct Full<'a> {
    id: &'a str,
    path: &'a str,
    lines: String,
    breadcrumb: &'a str,
    score: f64,
    source: Freshness,
    text: &'a str,
}

/// A match's full text in a budgeted answer.
#[derive(Serialize)]
struct Detail<'a> {
    id: &'a str,
    text: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
}

fn rounded(score: f64) -> f64 {
    (score * 1e5).round() / 1e5
}

/// What a budgeted answer needs of each item: a compact index line, an id
/// and the full text.
pub trait Item {
    /// The start of its index line: id, where, score, state.
    fn head(&self) -> String;
    /// What its summary is made from.
    fn about(&self) -> &str;
    /// The id the details part refers to.
    fn id(&self) -> &str;
    /// The full text.
    fn text(&self) -> &str;
    /// Its index line: the head, then a summary.
    fn line(&self) -> String {
        let about = summary(self.about());
        if about.is_empty() {
            self.head()
        } else {
            format!("{}: {about}", self.head())
        }
    }
}

impl Item for Hit {
    fn head(&self) -> String {
        index_head(self)
    }
    fn about(&self) -> &str {
        if self.snippet.trim().is_empty() {
            &self.text
        } else {
            &self.snippet
        }
    }
    fn id(&self) -> &str {
        &self.chunk_id
    }
    fn text(&self) -> &str {
        &self.text
    }
}

impl Item for cairn::ProjectHit {
    fn head(&self) -> String {
        format!("[{}] {}", self.project, index_head(&self.hit))
    }
    fn about(&self) -> &str {
        self.hit.about()
    }
    fn id(&self) -> &str {
        &self.hit.chunk_id
    }
    fn text(&self) -> &str {
        &self.hit.text
    }
}

/// The start of a hit's index line.
fn index_head(h: &Hit) -> String {
    let crumb = if h.breadcrumb.is_empty() {
        String::new()
    } else {
        format!(" {}", h.breadcrumb)
    };
    let source = match h.source {
        Freshness::Fresh => "fresh",
        Freshness::Changed => "changed",
        Freshness::Deleted => "deleted",
    };
    format!(
        "{} {}:{}-{}{crumb} ({}, {source})",
        h.chunk_id,
        h.path,
        h.start_line,
        h.end_line,
        rounded(h.score)
    )
}

/// Tokens of a JSON value as sent.
fn cost(v: &Value) -> usize {
    estimate_tokens(&v.to_string())
}

/// Sets `tokens_used` to what the whole answer costs with it in.
pub(crate) fn stamp_tokens(out: &mut Value) {
    out["tokens_used"] = json!(0);
    // The count's own digits are part of the cost: settle in a few rounds.
    for _ in 0..3 {
        let c = cost(out);
        out["tokens_used"] = json!(c);
    }
}

/// Every match with its full text; `total_count` matches were found.
pub fn unbudgeted(head: Value, hits: &[Hit], total_count: usize) -> Value {
    let full: Vec<Full<'_>> = hits
        .iter()
        .map(|h| Full {
            id: &h.chunk_id,
            path: &h.path,
            lines: format!("{}-{}", h.start_line, h.end_line),
            breadcrumb: &h.breadcrumb,
            score: rounded(h.score),
            source: h.source,
            text: &h.text,
        })
        .collect();
    let mut out = head;
    out["total_count"] = json!(total_count.max(hits.len()));
    out["has_more"] = json!(total_count > hits.len());
    out["matches"] = json!(full);
    stamp_tokens(&mut out);
    out
}

/// The two-part answer within `budget` tokens, `total_count` matches found
/// in all; `None` when even the frame of the answer does not fit.
pub fn budgeted<T: Item>(
    head: Value,
    matches: &[T],
    total_count: usize,
    budget: usize,
) -> Option<Value> {
    let total_count = total_count.max(matches.len());
    let mut out = head;
    out["total_count"] = json!(total_count);
    out["has_more"] = json!(false);
    // The largest `tokens_used` can be, so its real value costs no more.
    out["tokens_used"] = json!(budget);
    out["index"] = json!([]);
    out["details"] = json!([]);
    // Room for `has_more` to turn true.
    let mut used = cost(&out) + 1;
    if used > budget {
        return None;
    }

    // The index first: every match a line, as far as the budget goes, less
    // room for an excerpt of the best match's text, so an answer that lists
    // something also shows some of it.
    let reserve = matches
        .first()
        .map_or(0, |m| excerpt_frame(m) + MIN_EXCERPT);
    let mut lines = Vec::new();
    for m in matches {
        // The first line may use the whole budget: an answer lists something.
        let room = if lines.is_empty() {
            budget
        } else {
            budget.saturating_sub(reserve)
        };
        let Some((line, c)) = fitting_line(m, room - used.min(room)) else {
            break;
        };
        used += c;
        lines.push(line);
    }
    let first_listed = lines.len();

    let details = details(&matches[..first_listed], &mut used, budget);

    // Lines held back for the excerpt's room that the texts left over.
    for m in &matches[first_listed..] {
        let Some((line, c)) = fitting_line(m, budget - used.min(budget)) else {
            break;
        };
        used += c;
        lines.push(line);
    }
    let _ = used;
    let finish = |out: &mut Value| {
        let listed = out["index"].as_array().map_or(0, Vec::len);
        out["has_more"] = json!(listed < total_count);
        out["tokens_used"] = json!(cost(out));
    };
    out["index"] = Value::Array(lines);
    out["details"] = Value::Array(details);
    finish(&mut out);
    // The estimate is additive up to the separators counted above; check the
    // whole and drop from the end should rounding ever disagree.
    while cost(&out) > budget {
        let dropped = out["details"].as_array_mut().and_then(Vec::pop).is_some()
            || out["index"].as_array_mut().and_then(Vec::pop).is_some();
        if !dropped {
            return None;
        }
        finish(&mut out);
    }
    // `tokens_used` as the answer is: its own digits settled.
    for _ in 0..2 {
        out["tokens_used"] = json!(cost(&out));
    }
    Some(out)
}

/// The texts of the listed `matches`, best first, each whole while it fits
/// in `budget` beside the `used` tokens (counted on), then the first that
/// does not fit cut to what does (when at least [`MIN_EXCERPT`] of it does).
fn details<T: Item>(matches: &[T], used: &mut usize, budget: usize) -> Vec<Value> {
    let mut details = Vec::new();
    for m in matches {
        let full = json!(Detail {
            id: m.id(),
            text: m.text(),
            truncated: false,
        });
        let c = cost(&full) + 1;
        if *used + c <= budget {
            *used += c;
            details.push(full);
            continue;
        }
        // The next best match does not fit whole: give as much of it as
        // fits, cut at a line (or a character) boundary, then stop.
        let frame = excerpt_frame(m);
        if *used + frame + MIN_EXCERPT <= budget {
            let room = budget - *used - frame;
            let excerpt = fit_prefix(m.text(), room);
            if !excerpt.is_empty() {
                let d = json!(Detail {
                    id: m.id(),
                    text: excerpt,
                    truncated: true,
                });
                *used += cost(&d) + 1;
                details.push(d);
            }
        }
        break;
    }
    details
}

/// What a cut match's detail costs beside its text.
fn excerpt_frame<T: Item>(m: &T) -> usize {
    cost(&json!(Detail {
        id: m.id(),
        text: "",
        truncated: true,
    })) + 1
}

/// An item's index line and its cost within `room` tokens: with its
/// summary, else without (a line that names the match beats none).
fn fitting_line<T: Item>(m: &T, room: usize) -> Option<(Value, usize)> {
    [m.line(), m.head()].into_iter().find_map(|l| {
        let line = Value::String(l);
        let c = cost(&line) + 1;
        (c <= room).then_some((line, c))
    })
}

/// The longest prefix of `text` whose JSON string costs at most `room`
/// tokens, preferring to end at a line break.
fn fit_prefix(text: &str, room: usize) -> &str {
    let fits = |s: &str| cost(&Value::String(s.to_string())) <= room;
    // Binary search over char boundaries.
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let (mut lo, mut hi) = (0usize, bounds.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(&text[..bounds[mid]]) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let cut = &text[..bounds[lo]];
    if cut.len() == text.len() {
        return text;
    }
    match cut.rfind('\n') {
        Some(nl) if nl > cut.len() / 2 => &cut[..nl],
        _ => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(i: usize, text: &str) -> Hit {
        Hit {
            chunk_id: format!("{i:016x}"),
            path: format!("docs/topic-{i}.md"),
            start_line: 1,
            end_line: 40,
            breadcrumb: format!("Topic {i} > Details"),
            snippet: String::new(),
            text: text.to_string(),
            source: Freshness::Fresh,
            via: Vec::new(),
            score: 1.0 / (60.0 + i as f64),
            similarity: None,
            signals: vec![],
            chunk_signals: vec![],
            boosts: vec![],
            rerank: None,
        }
    }

    #[test]
    fn budget_is_never_exceeded_and_best_matches_come_first() {
        let text = "Redis keeps sessions for five minutes; {\"ttl\": 300}.\n".repeat(30);
        let hits: Vec<Hit> = (0..50).map(|i| hit(i, &text)).collect();
        let matches = &hits;
        for budget in [MIN_BUDGET, 100, 300, 1000, 5000] {
            let out = budgeted(json!({"query": "redis"}), matches, 50, budget).unwrap();
            assert!(cost(&out) <= budget, "{budget}: {}", cost(&out));
            let index = out["index"].as_array().unwrap();
            assert!(!index.is_empty());
            if budget >= 300 {
                assert!(!out["details"].as_array().unwrap().is_empty(), "{out}");
            }
            assert!(index[0].as_str().unwrap().starts_with(&hits[0].chunk_id));
            assert_eq!(out["total_count"], 50);
            assert_eq!(out["has_more"], index.len() < 50);
        }
        let out = budgeted(json!({"query": "redis"}), matches, 50, 300).unwrap();
        let details = out["details"].as_array().unwrap();
        assert_eq!(details.len(), 1, "{out}");
        assert_eq!(details[0]["truncated"], true);
        assert!(budgeted(json!({"query": "redis"}), matches, 50, 5).is_none());
    }

    #[test]
    fn the_dual_answer_counts_what_it_found_and_what_it_cost() {
        let text = "Redis keeps sessions for five minutes.\n".repeat(4);
        let hits: Vec<Hit> = (0..20).map(|i| hit(i, &text)).collect();
        // 20 returned of 57 found, a budget that lists all 20.
        let out = budgeted(json!({"query": "redis"}), &hits, 57, 2000).unwrap();
        assert_eq!(out["total_count"], 57);
        assert_eq!(out["index"].as_array().unwrap().len(), 20, "{out}");
        assert_eq!(out["has_more"], true, "37 more were found");
        assert_eq!(out["tokens_used"].as_u64().unwrap() as usize, cost(&out));
        assert!(!out["details"].as_array().unwrap().is_empty());
        // Each index line ends in a summary of its match.
        let line = out["index"][0].as_str().unwrap();
        assert!(
            line.ends_with("(0.01667, fresh): Redis keeps sessions for five minutes. Redis keeps sessions for five minutes. Redis keeps sessions…"),
            "{line}"
        );
        // All found and all listed: nothing more.
        let out = budgeted(json!({"query": "redis"}), &hits[..3], 3, 2000).unwrap();
        assert_eq!(out["has_more"], false, "{out}");
        assert_eq!(out["total_count"], 3);
        // A small budget: the index lists what fits and says more exist.
        let out = budgeted(json!({"query": "redis"}), &hits[..3], 3, 120).unwrap();
        assert!(cost(&out) <= 120);
        assert_eq!(out["has_more"], true, "{out}");
        // Unbudgeted answers count too.
        let out = unbudgeted(json!({"query": "redis"}), &hits[..2], 2);
        assert_eq!(
            (out["total_count"].as_u64(), out["has_more"].as_bool()),
            (Some(2), Some(false))
        );
        assert_eq!(out["tokens_used"].as_u64().unwrap() as usize, cost(&out));
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(
            summary("## Caching\n\nSessions   live\tin Redis."),
            "Caching Sessions live in Redis."
        );
        let long = "word ".repeat(100);
        let s = summary(&long);
        assert!(
            s.chars().count() <= SUMMARY_CHARS + 1 && s.ends_with('…'),
            "{s}"
        );
        assert_eq!(summary(""), "");
    }

    #[test]
    fn prefixes_fit_and_end_at_lines() {
        let text = "one two three\nfour five six\nseven eight nine";
        let p = fit_prefix(text, 9);
        assert!(cost(&Value::String(p.into())) <= 9);
        assert!(text.starts_with(p));
        assert_eq!(fit_prefix(text, 1000), text);
    }
}
