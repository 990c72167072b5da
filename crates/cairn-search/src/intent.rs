//! What a question about a project wants, read from its words alone (no
//! model): how the code *behaves* ("how does the parser decide…", "where is
//! the check that…", "what happens when…"), answered best by the code, or how
//! to *use* it ("how do I…", "can I…", "which option…"), answered best by the
//! documentation (and, in languages whose API docs live in the code, by doc
//! comments).
//!
//! Measured on eval/code-qa, whose questions carry the intent their writer
//! gave them: see the intent rows of `cairn eval --by-group` and BENCHMARKS.md.

use serde::Serialize;

/// The intent of a question.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Intent {
    /// How the code behaves: wants code.
    Behaviour,
    /// How to use it: wants documentation.
    Use,
    /// An issue pasted whole ([`is_issue`]: a bug report or a request,
    /// its title, steps, code and traceback): wants the code to change,
    /// whatever phrases its body holds ("how to reproduce", "instead of").
    Report,
    /// Neither reading is clear (a bare topic, a name): no preference.
    #[default]
    Unknown,
}

/// Phrases that ask how to use something: the asker wants to do it.
const USE_PHRASES: &[&str] = &[
    "how do i ",
    "how can i ",
    "how should i ",
    "how would i ",
    "how to ",
    "can i ",
    "should i ",
    "do i need",
    "do i have to",
    "what should i",
    "which option",
    "which options",
    "which setting",
    "which flag",
    "which import",
    "which release",
    "which version",
    "in which version",
    "is it better",
    "is it safe",
    "when is it safe",
    "what are my options",
    "example of",
    "an example",
    "instead of",
];

/// Phrases that ask how the code behaves.
const BEHAVIOUR_PHRASES: &[&str] = &[
    "how does ",
    "how do the ",
    "how is ",
    "how are ",
    "what happens",
    "where is ",
    "where are ",
    "where does ",
    "why does ",
    "why do i get",
    "why is ",
    "what does the ",
    "what is written",
    "is it decided",
    "decide",
    "decides",
    "the check",
    "checked",
    "implemented",
    "internally",
];

/// A query this long over at least [`ISSUE_LINES`] lines is an issue
/// pasted whole.
const ISSUE_CHARS: usize = 300;
/// See [`ISSUE_CHARS`].
const ISSUE_LINES: usize = 3;

/// Whether a query is an issue pasted whole: at least [`ISSUE_CHARS`]
/// characters over at least [`ISSUE_LINES`] non-empty lines (120 of
/// SWE-bench Lite's 128 reachable problem statements; no question of
/// eval/code-qa).
pub fn is_issue(query: &str) -> bool {
    query.len() >= ISSUE_CHARS
        && query.lines().filter(|l| !l.trim().is_empty()).count() >= ISSUE_LINES
}

/// Words a question starts with (or holds, after a clause: "on Linux, why
/// do I see…").
const QUESTION_WORDS: &[&str] = &[
    "what", "which", "why", "when", "where", "how", "who", "does", "do", "is", "are", "can",
    "will", "should", "if",
];

/// Whether `q` (lower case, padded) is phrased as a question rather than
/// a bare topic ("markup parser").
fn is_question(q: &str) -> bool {
    let words: Vec<&str> = q.split_whitespace().collect();
    words.len() >= 4 && words.iter().take(6).any(|w| QUESTION_WORDS.contains(w))
}

impl Intent {
    /// Reads a query. Use wins a tie: "how do I …" questions often also
    /// say what happens.
    pub fn of(query: &str) -> Intent {
        if is_issue(query) {
            return Intent::Report;
        }
        let q = format!(" {} ", query.to_lowercase().replace(['?', ',', ';'], " "));
        let has = |phrases: &[&str]| phrases.iter().any(|p| q.contains(&format!(" {p}")));
        if has(USE_PHRASES) {
            Intent::Use
        } else if has(BEHAVIOUR_PHRASES) || is_question(&q) {
            // A question that does not ask how to do something asks how it
            // is done ("does it run in parallel when compiled to WebAssembly",
            // "what is the default size limit for request bodies").
            Intent::Behaviour
        } else {
            Intent::Unknown
        }
    }

    /// Lower-case name, as `--explain` and the eval print it.
    pub fn name(self) -> &'static str {
        match self {
            Intent::Behaviour => "behaviour",
            Intent::Use => "use",
            Intent::Report => "report",
            Intent::Unknown => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_read_as_their_writers_meant_them() {
        for q in [
            "how does the unstable parallel sort avoid quadratic time",
            "what happens if I register two handlers for the same HTTP method on one path",
            "where is the Allow header of a 405 response built",
            "how are map keys that are integers written",
            "why do I get an error about a mandatory attribute after one with a default",
            "how does diff decide the release type",
        ] {
            assert_eq!(Intent::of(q), Intent::Behaviour, "{q}");
        }
        for q in [
            "how do I print JSON with indentation for humans to read",
            "How can I send warnings to stderr?",
            "can I append two compressed files together",
            "which import brings the parallel iterator methods into scope",
            "in which version did the library gain tree iteration",
            "is it better to read a file with from_reader or into memory first",
        ] {
            assert_eq!(Intent::of(q), Intent::Use, "{q}");
        }
        for q in ["markup parser", "Console", "database connection pool"] {
            assert_eq!(Intent::of(q), Intent::Unknown, "{q}");
        }
        // An issue pasted whole reports, however its body is phrased.
        let issue = "Merging loses a coordinate\n\nHow to reproduce: merge two datasets \
            instead of concatenating them, as in the example below; can I keep it?\n\n\
            ```python\nxr.merge([a, b])\n```\n\nThe coordinate `time` is gone from \
            the result, and the attributes of the first dataset are dropped as well; \
            the same happens with `combine_by_coords` on the same two datasets.\n";
        assert!(issue.len() >= ISSUE_CHARS);
        assert_eq!(Intent::of(issue), Intent::Report);
        assert_eq!(Intent::of(&issue.replace('\n', " ")), Intent::Use);
    }
}
