//! Synthetic English-like prose for benchmarks that must run on any machine
//! without a corpus.

const WORDS: &[&str] = &[
    "the",
    "index",
    "stores",
    "each",
    "chunk",
    "of",
    "a",
    "document",
    "with",
    "its",
    "heading",
    "path",
    "and",
    "line",
    "range",
    "so",
    "that",
    "an",
    "agent",
    "can",
    "find",
    "what",
    "it",
    "needs",
    "when",
    "cache",
    "entries",
    "expire",
    "after",
    "five",
    "minutes",
    "we",
    "rebuild",
    "them",
    "from",
    "markdown",
    "files",
    "which",
    "remain",
    "source",
    "of",
    "truth",
    "for",
    "every",
    "decision",
    "recorded",
    "by",
    "team",
    "during",
    "review",
    "protein",
    "cells",
    "expression",
    "increased",
    "patients",
    "treatment",
    "study",
    "results",
    "suggest",
    "risk",
    "associated",
    "mechanism",
    "signal",
    "pathway",
    "binding",
    "receptor",
    "memory",
    "search",
    "query",
    "vector",
    "latency",
    "throughput",
    "server",
    "client",
    "request",
    "response",
    "configuration",
    "deploy",
    "release",
    "version",
    "database",
    "transaction",
    "write",
    "read",
];

/// `n` texts of about `chars` characters each, deterministic for a given `seed`.
pub fn synthetic_prose(n: usize, chars: usize, seed: u64) -> Vec<String> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = move || {
        // xorshift64*: deterministic, no dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    (0..n)
        .map(|_| {
            let mut s = String::with_capacity(chars + 16);
            let mut sentence = 0;
            while s.len() < chars {
                let w = WORDS[(next() % WORDS.len() as u64) as usize];
                if sentence == 0 {
                    let mut c = w.chars();
                    if let Some(f) = c.next() {
                        s.extend(f.to_uppercase());
                        s.push_str(c.as_str());
                    }
                } else {
                    s.push(' ');
                    s.push_str(w);
                }
                sentence += 1;
                if sentence > 8 && next() % 6 == 0 {
                    s.push_str(". ");
                    sentence = 0;
                }
            }
            s.truncate(s.trim_end().len());
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn prose_is_deterministic_and_sized() {
        let a = super::synthetic_prose(3, 1500, 7);
        assert_eq!(a, super::synthetic_prose(3, 1500, 7));
        assert!(a.iter().all(|t| t.len() >= 1450 && t.len() < 1600));
        assert_ne!(a[0], a[1]);
    }
}
