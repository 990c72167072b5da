//! Time in recall: a question that names a time ("last week", "in May
//! 2023", "before June") favours the memories of that time, and one that
//! asks for the latest (or the first) orders them by time
//! ([`cairn_search::read_query`] reads the query).
//!
//! A memory's time is the date its text states ("on 8 May, 2023",
//! "2024-03-02"), else when it was stored (`created`, which an import
//! sets to when it happened).

use std::borrow::Cow;

use cairn_core::Memory;
use cairn_search::{Term, TimeOrder, TimeQuery, date_in};

use crate::memory::Recalled;
use crate::vault::parse_time;

/// The default of `[memory] time_factor`: the score factor of a memory
/// whose time falls inside the span a question names. Measured on LoCoMo
/// stored as memories, temporal questions apart from the rest:
/// BENCHMARKS.md, "Memory that knows time".
pub const IN_TIME_FACTOR: f64 = 1.5;

/// The time of what a memory tells, Unix seconds.
pub fn event_time(m: &Memory, text: &str) -> Option<i64> {
    date_in(text).or_else(|| parse_time(&m.created))
}

/// Applies what `when` says to recalled memories: those inside its span
/// score × `factor` (`[memory] time_factor`; a `time` term says so), then,
/// when it asks for the latest or the first, the memories scoring at least
/// [`ORDERED_SHARE`] of the best are ordered by time. A factor of 1 or less
/// turns both off.
pub fn apply(out: &mut [Recalled], when: &TimeQuery, factor: f64) {
    if when.is_empty() || factor <= 1.0 {
        return;
    }
    if let Some(range) = when.range {
        for r in out.iter_mut() {
            let t = event_time(&r.memory.memory, &r.memory.text);
            if t.is_some_and(|t| range.contains(t)) {
                // What the factor added, so `--explain` shows its weight
                // (it printed +0.000 for a ×1.5).
                let added = r.score * (factor - 1.0);
                r.score *= factor;
                r.terms.push(Term {
                    name: Cow::Owned(format!("time ({})", when.phrase)),
                    value: factor,
                    contribution: added,
                });
            }
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
    }
    if let Some(order) = when.order {
        // Only the memories close to the best match are put in time order:
        // "the latest decision on caching" is not the latest memory.
        let best = out.first().map_or(0.0, |r| r.score);
        let close = out
            .iter()
            .take_while(|r| r.score >= best * ORDERED_SHARE)
            .count();
        let time = |r: &Recalled| event_time(&r.memory.memory, &r.memory.text).unwrap_or(0);
        let head = &mut out[..close];
        match order {
            TimeOrder::Newest => head.sort_by_key(|r| std::cmp::Reverse(time(r))),
            TimeOrder::Oldest => head.sort_by_key(time),
        }
    }
}

/// The share of the best score a memory needs to be put in time order
/// when a question asks for the latest or the first.
pub const ORDERED_SHARE: f64 = 0.6;

/// Memory types a question can name ("the latest decision", "gotchas from
/// yesterday"), singular or plural.
const TYPE_WORDS: [(&str, &str); 7] = [
    ("decision", "decisions"),
    ("gotcha", "gotchas"),
    ("convention", "conventions"),
    ("preference", "preferences"),
    ("fact", "facts"),
    ("note", "notes"),
    ("event", "events"),
];

/// Words that ask for memories by time or type and say nothing of what
/// they hold ("what did we learn yesterday", "the most recent decision").
const ASKING_WORDS: [&str; 22] = [
    "most",
    "recent",
    "recently",
    "latest",
    "newest",
    "last",
    "first",
    "earliest",
    "originally",
    "initially",
    "learn",
    "learned",
    "learnt",
    "happen",
    "happened",
    "decide",
    "decided",
    "memory",
    "memories",
    "remember",
    "stored",
    "made",
];

/// What a recall question asks of time and type alone.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Asked {
    /// The memory type it names, if any (`decision` for "decisions").
    pub kind: Option<&'static str>,
    /// Whether it names nothing but time and type: then it is answered by
    /// listing those memories in time order, not by matching their words.
    pub only_time_and_type: bool,
}

/// Reads the type a recall question names and whether anything else is
/// asked (`when` read from the same query).
pub(crate) fn asked(query: &str, when: &TimeQuery) -> Asked {
    let phrase: Vec<String> = when
        .phrase
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut kind = None;
    let mut other = 0;
    for w in query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
    {
        if let Some((one, _)) = TYPE_WORDS.iter().find(|(a, b)| w == *a || w == *b) {
            kind = Some(*one);
        } else if !phrase.contains(&w)
            && !ASKING_WORDS.contains(&w.as_str())
            && !cairn_search::is_stop_word(&w)
        {
            other += 1;
        }
    }
    Asked {
        kind,
        only_time_and_type: other == 0 && (kind.is_some() || !when.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_of_time_and_type_alone_is_a_listing() {
        let now = 1_764_633_600; // 2025-12-02
        let read = |q: &str| asked(q, &cairn_search::read_query(q, now));
        assert_eq!(
            read("most recent decision"),
            Asked {
                kind: Some("decision"),
                only_time_and_type: true
            }
        );
        assert!(read("what did we learn yesterday").only_time_and_type);
        assert_eq!(read("what did we learn yesterday").kind, None);
        let about = read("the latest decision about caching");
        assert_eq!(about.kind, Some("decision"));
        assert!(!about.only_time_and_type);
        assert_eq!(read("redis session caching"), Asked::default());
    }
}
