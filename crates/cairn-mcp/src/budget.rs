//! The `search` answer, shaped to fit a token budget.
//!
//! Without a budget every match comes with its full chunk text. With
//! `max_tokens` the answer has two parts: `index`, one compact line per match
//! (`id path:lines breadcrumb (score, source)`, a dozen tokens or so), and
//! `details`, the full text of the best matches that still fit. Tokens are
//! counted over the serialized JSON the model reads, with
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
    /// One short line: id, where, score, state.
    fn line(&self) -> String;
    /// The id the details part refers to.
    fn id(&self) -> &str;
    /// The full text.
    fn text(&self) -> &str;
}

impl Item for Hit {
    fn line(&self) -> String {
        index_line(self)
    }
    fn id(&self) -> &str {
        &self.chunk_id
    }
    fn text(&self) -> &str {
        &self.text
    }
}

/// The compact index line of a hit.
fn index_line(h: &Hit) -> String {
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

/// Every match with its full text.
pub fn unbudgeted(head: Value, hits: &[Hit]) -> Value {
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
    out["matches"] = json!(full);
    out
}

/// The two-part answer within `budget` tokens; `None` when even the frame of
/// the answer does not fit.
pub fn budgeted<T: Item>(head: Value, matches: &[T], budget: usize) -> Option<Value> {
    let mut out = head;
    out["budget"] = json!(budget);
    out["omitted"] = json!(0);
    out["index"] = json!([]);
    out["details"] = json!([]);
    // Room for the `omitted` count to grow by a few digits.
    let mut used = cost(&out) + 2;
    if used > budget {
        return None;
    }

    // The index may take half of what is left at first, so the best
    // matches' text gets the other half; lines that did not fit then get
    // whatever the texts left over.
    let index_room = used + (budget - used) / 2;
    let mut lines = Vec::new();
    for m in matches {
        let line = Value::String(m.line());
        let c = cost(&line) + 1;
        // The first line may use the whole budget: an answer lists something.
        let room = if lines.is_empty() { budget } else { index_room };
        if used + c > room {
            break;
        }
        used += c;
        lines.push(line);
    }
    let first_listed = lines.len();

    let mut details = Vec::new();
    for m in &matches[..first_listed] {
        let full = json!(Detail {
            id: m.id(),
            text: m.text(),
            truncated: false,
        });
        let c = cost(&full) + 1;
        if used + c <= budget {
            used += c;
            details.push(full);
            continue;
        }
        // The next best match does not fit whole: give as much of it as
        // fits, cut at a line (or a character) boundary, then stop.
        let frame = cost(&json!(Detail {
            id: m.id(),
            text: "",
            truncated: true,
        })) + 1;
        if used + frame + MIN_EXCERPT <= budget {
            let room = budget - used - frame;
            let excerpt = fit_prefix(m.text(), room);
            if !excerpt.is_empty() {
                let d = json!(Detail {
                    id: m.id(),
                    text: excerpt,
                    truncated: true,
                });
                used += cost(&d) + 1;
                details.push(d);
            }
        }
        break;
    }

    for m in &matches[first_listed..] {
        let line = Value::String(m.line());
        let c = cost(&line) + 1;
        if used + c > budget {
            break;
        }
        used += c;
        lines.push(line);
    }
    let listed = lines.len();
    out["omitted"] = json!(matches.len() - listed);
    out["index"] = Value::Array(lines);
    out["details"] = Value::Array(details);
    // The estimate is additive up to the separators counted above; check the
    // whole and drop from the end should rounding ever disagree.
    while cost(&out) > budget {
        let dropped = out["details"].as_array_mut().and_then(Vec::pop).is_some()
            || out["index"].as_array_mut().and_then(Vec::pop).is_some();
        if !dropped {
            return None;
        }
    }
    let _ = used;
    Some(out)
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
            signals: vec![],
            boosts: vec![],
        }
    }

    #[test]
    fn budget_is_never_exceeded_and_best_matches_come_first() {
        let text = "Redis keeps sessions for five minutes; {\"ttl\": 300}.\n".repeat(30);
        let hits: Vec<Hit> = (0..50).map(|i| hit(i, &text)).collect();
        let matches = &hits;
        for budget in [MIN_BUDGET, 100, 300, 1000, 5000] {
            let out = budgeted(json!({"query": "redis"}), matches, budget).unwrap();
            assert!(cost(&out) <= budget, "{budget}: {}", cost(&out));
            let index = out["index"].as_array().unwrap();
            assert!(!index.is_empty());
            if budget >= 300 {
                assert!(!out["details"].as_array().unwrap().is_empty(), "{out}");
            }
            assert!(index[0].as_str().unwrap().starts_with(&hits[0].chunk_id));
            assert_eq!(out["omitted"].as_u64().unwrap() as usize + index.len(), 50);
        }
        let out = budgeted(json!({"query": "redis"}), matches, 300).unwrap();
        let details = out["details"].as_array().unwrap();
        assert_eq!(details.len(), 1, "{out}");
        assert_eq!(details[0]["truncated"], true);
        assert!(budgeted(json!({"query": "redis"}), matches, 5).is_none());
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
