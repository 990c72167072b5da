//! The few lines of a chunk worth showing.

/// Up to `max_lines` consecutive non-blank lines of `text` holding the most
/// query terms (by case-insensitive prefix match of the term's first five
/// letters, a cheap stand-in for stemming), each cut at 200 characters.
pub fn snippet(text: &str, terms: &[String], max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() || max_lines == 0 {
        return String::new();
    }
    let stems: Vec<String> = terms.iter().map(|t| t.chars().take(5).collect()).collect();
    let score = |l: &str| {
        let lower = l.to_lowercase();
        stems.iter().filter(|s| lower.contains(s.as_str())).count()
    };
    let scores: Vec<usize> = lines.iter().map(|l| score(l)).collect();
    let w = max_lines.min(lines.len());
    let mut best = (0, 0);
    for start in 0..=lines.len() - w {
        // Ties go to the window that opens on a matching line.
        let s: usize =
            scores[start..start + w].iter().sum::<usize>() * 2 + usize::from(scores[start] > 0);
        if s > best.0 {
            best = (s, start);
        }
    }
    lines[best.1..best.1 + w]
        .iter()
        .map(|l| {
            let l = l.trim_end();
            match l.char_indices().nth(200) {
                Some((i, _)) => format!("{}…", &l[..i]),
                None => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_window_with_most_terms() {
        let text =
            "# Title\n\nintro line\nnothing here\nRedis caching uses a TTL\nof five minutes\n\nend";
        let s = snippet(text, &["caching".into(), "ttl".into()], 2);
        assert!(s.starts_with("Redis caching"), "{s}");
        assert_eq!(s.lines().count(), 2);
    }
}
