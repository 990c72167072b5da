//! Entities named in a text, found without a language model: code
//! identifiers, file paths, ticket ids, capitalised multi-word names and
//! versions. Memories carry them so recall can filter on them (and the graph
//! can link them later).

/// Most entities kept from one text.
pub const MAX_ENTITIES: usize = 32;

/// Extensions that make a bare `name.ext` a file name.
const FILE_EXTENSIONS: &[&str] = &[
    "rs", "py", "ts", "tsx", "js", "jsx", "go", "java", "cs", "c", "h", "cpp", "hpp", "rb", "php",
    "swift", "kt", "scala", "sh", "md", "toml", "yaml", "yml", "json", "sql", "html", "css", "txt",
    "lock", "cfg", "ini", "xml",
];

/// Words that start sentences and are not names ("The Redis Cluster" → "Redis Cluster").
const NOT_NAMES: &[&str] = &[
    "A", "An", "And", "As", "At", "But", "By", "For", "From", "He", "I", "If", "In", "It", "Its",
    "My", "No", "Not", "Of", "On", "Or", "Our", "She", "So", "That", "The", "Then", "There",
    "These", "They", "This", "To", "We", "When", "Where", "Which", "While", "With", "You",
];

/// The entities in `text`, in order of first appearance, without duplicates,
/// at most [`MAX_ENTITIES`]:
///
/// * code identifiers: `PolicyController`, `getUserId`, `snake_case_names`, `MAX_RETRIES`;
/// * file paths: `src/auth/jwt.rs`, `config.toml`;
/// * ticket ids: `JIRA-1234`, `#123`;
/// * capitalised multi-word names: `Acme Corp`, `New York` (a leading
///   sentence word such as "The" or "We" is dropped);
/// * versions: `v2.1`, `1.4.0`.
///
/// And, in a memory's text, a single capitalised word inside a sentence
/// (`Memcached`, `Sphinx`) and a word in backticks (`orjson`).
pub fn extract_entities(text: &str) -> Vec<String> {
    entities(text, true)
}

/// [`extract_entities`] without its single-word names: what a doc's chunks
/// mention for the graph, where every capitalised word of prose
/// ("Alzheimer", "Monday") would become a node.
pub(crate) fn doc_entities(text: &str) -> Vec<String> {
    entities(text, false)
}

fn entities(text: &str, single_names: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Never a secret: not one the rules name, not a random-looking word,
    // not a name cut around a `[redacted]` mark.
    let mut push = |s: &str| {
        let secret = s.contains(crate::REDACTED)
            || crate::looks_like_secret(s)
            || crate::secret_family(s).is_some();
        if !s.is_empty() && !secret && out.len() < MAX_ENTITIES && !out.iter().any(|e| e == s) {
            out.push(s.to_string());
        }
    };
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut i = 0;
    while i < tokens.len() {
        let raw = tokens[i];
        let token = trim_punct(raw);
        // Capitalised multi-word names: a run of capitalised plain words.
        if is_capitalised_word(token) {
            let mut words = vec![token];
            let mut j = i + 1;
            // A run stops after a word that ends a clause ("Redis, Postgres").
            let mut open = !ends_clause(raw);
            while open && j < tokens.len() {
                let next = trim_punct(tokens[j]);
                if !is_capitalised_word(next) {
                    break;
                }
                words.push(next);
                open = !ends_clause(tokens[j]);
                j += 1;
            }
            while words.first().is_some_and(|w| NOT_NAMES.contains(w)) {
                words.remove(0);
            }
            if words.len() >= 2 {
                push(&words.join(" "));
                i = j;
                continue;
            }
            // One capitalised word inside a sentence is a name too ("we
            // moved to Memcached", "docs built with Sphinx"): not the
            // sentence's first word, which any word can be.
            let mid_sentence = i > 0
                && !tokens[i - 1]
                    .trim_end_matches(['*', '_', '`', '"', '\'', ')'])
                    .ends_with(['.', '!', '?', ':']);
            if single_names
                && words.len() == 1
                && mid_sentence
                && token.chars().count() >= 3
                && !NOT_NAMES.contains(&token)
                && dotted(token).is_none()
            {
                push(token);
                i += 1;
                continue;
            }
        }
        // A word in backticks is a name the writer marked (`orjson`).
        if single_names
            && raw.len() > 2
            && raw
                .trim_end_matches([',', '.', ';', ':', ')', '!', '?'])
                .starts_with('`')
            && raw
                .trim_end_matches([',', '.', ';', ':', ')', '!', '?'])
                .ends_with('`')
            && token.len() >= 3
            && token
                .chars()
                .all(|c| c.is_alphanumeric() || "_-.".contains(c))
            && classify(token).is_none()
            && dotted(token).is_none()
        {
            push(token);
            i += 1;
            continue;
        }
        if let Some((whole, last)) = dotted(token) {
            push(whole);
            push(last);
        } else if let Some(entity) = classify(token) {
            push(entity);
        }
        i += 1;
    }
    out
}

/// Whether a token ends a clause, markdown emphasis and quotes aside
/// (`**Joanna:** Thanks` is a speaker and a word, not the name "Joanna
/// Thanks": LoCoMo's transcripts made 152 such names of "John: Thanks").
fn ends_clause(raw: &str) -> bool {
    raw.trim_end_matches(['*', '_', '`', '"', '\'', ']', '\u{2019}', '\u{201d}'])
        .ends_with([',', '.', ';', ':', '!', '?', ')'])
}

/// A token without the punctuation around it (but keeping a leading `#`).
fn trim_punct(token: &str) -> &str {
    token.trim_matches(|c: char| {
        matches!(
            c,
            '.' | ','
                | ';'
                | ':'
                | '!'
                | '?'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '"'
                | '\''
                | '`'
                | '*'
                | '<'
                | '>'
        )
    })
}

fn is_capitalised_word(t: &str) -> bool {
    let mut chars = t.chars();
    chars.next().is_some_and(|c| c.is_uppercase())
        && t.chars().skip(1).all(|c| c.is_lowercase() || c == '\'')
        && t.len() > 1
}

/// A dotted code name (`os.get_terminal_size`, `Table._calculate_widths`,
/// `rich.console.Console`) and its last part, which is named alone as often:
/// parts that are identifiers, at least one of them code-shaped (snake_case,
/// camelCase, a capital first letter or a leading `_`) or three parts or
/// more. A file name (`config.toml`) and a version are not dotted names.
fn dotted(t: &str) -> Option<(&str, &str)> {
    let parts: Vec<&str> = t.split('.').collect();
    if parts.len() < 2 || t.len() < 5 || t.len() > 120 {
        return None;
    }
    let ident = |p: &str| {
        p.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !parts.iter().all(|p| ident(p)) {
        return None;
    }
    let last = parts[parts.len() - 1];
    if FILE_EXTENSIONS.contains(&last.to_ascii_lowercase().as_str()) {
        return None;
    }
    let code_shaped = |p: &&str| {
        p.contains('_')
            || p.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            || p.as_bytes()
                .windows(2)
                .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
    };
    (parts.len() >= 3 || parts.iter().any(code_shaped)).then_some((t, last))
}

/// Which kind of entity a single token is, if any.
fn classify(t: &str) -> Option<&str> {
    if t.len() < 2 || t.len() > 120 {
        return None;
    }
    // Ticket ids.
    if let Some(num) = t.strip_prefix('#') {
        return (!num.is_empty() && num.chars().all(|c| c.is_ascii_digit())).then_some(t);
    }
    if let Some((project, num)) = t.split_once('-')
        && project.len() >= 2
        && project
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_uppercase())
        && project
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && !num.is_empty()
        && num.chars().all(|c| c.is_ascii_digit())
    {
        return Some(t);
    }
    // Versions: v1.2, 1.2.3.
    let digits = t.strip_prefix('v').unwrap_or(t);
    let parts: Vec<&str> = digits.split('.').collect();
    if parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && (t.starts_with('v') || parts.len() >= 3)
    {
        return Some(t);
    }
    // File paths.
    let path_chars = t
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
    if path_chars && t.chars().any(|c| c.is_ascii_alphabetic()) {
        let has_ext = t.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        });
        if (t.contains('/') && !t.starts_with("http")) || has_ext {
            return Some(t);
        }
    }
    // Code identifiers.
    let ident = t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && t.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !ident {
        return None;
    }
    let inner = t.trim_matches('_');
    if inner.contains('_') && inner.split('_').all(|p| !p.is_empty()) && t.len() >= 4 {
        return Some(t); // snake_case or SCREAMING_CASE
    }
    let chars: Vec<char> = t.chars().collect();
    let humps = chars
        .windows(2)
        .filter(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        .count();
    if humps >= 1 && t.len() >= 4 {
        return Some(t); // CamelCase or camelCase
    }
    None
}

#[cfg(test)]
mod tests {
    use super::extract_entities;

    #[test]
    fn dotted_names_are_entities_with_their_last_part() {
        let e = extract_entities(
            "Console calls os.get_terminal_size() and Table._calculate_column_widths, \
             then rich.console.Console; see config.toml, e.g. v1.2.3.",
        );
        for want in [
            "os.get_terminal_size",
            "get_terminal_size",
            "Table._calculate_column_widths",
            "_calculate_column_widths",
            "rich.console.Console",
            "config.toml",
            "v1.2.3",
        ] {
            assert!(e.contains(&want.to_string()), "{want} not in {e:?}");
        }
        assert!(!e.iter().any(|x| x == "e.g" || x == "config"), "{e:?}");
    }

    #[test]
    fn one_capitalised_word_inside_a_sentence_and_a_backticked_word_are_names() {
        // Issue 61 (14): no entity for Redis, Memcached, orjson or Sphinx.
        let e = extract_entities(
            "We use Redis for session caching. Later we moved to Memcached, \
             serialised with `orjson`; the docs are built with Sphinx.",
        );
        for want in ["Redis", "Memcached", "orjson", "Sphinx"] {
            assert!(e.contains(&want.to_string()), "{want} not in {e:?}");
        }
        assert!(!e.iter().any(|x| x == "We" || x == "Later"), "{e:?}");
    }

    #[test]
    fn finds_each_kind() {
        let e = extract_entities(
            "The PolicyController calls validate_token in src/auth/jwt.rs (see JIRA-1234 and #42); \
             Acme Corp moved to Postgres v16.2 on release 1.4.0, config in settings.toml. \
             getUserId returns MAX_RETRIES.",
        );
        for want in [
            "PolicyController",
            "validate_token",
            "src/auth/jwt.rs",
            "JIRA-1234",
            "#42",
            "Acme Corp",
            "v16.2",
            "1.4.0",
            "settings.toml",
            "getUserId",
            "MAX_RETRIES",
        ] {
            assert!(e.iter().any(|x| x == want), "{want} missing from {e:?}");
        }
    }

    #[test]
    fn a_speaker_label_ends_the_name() {
        let e = extract_entities("**Joanna:** Thanks, Nate! **John:** Wow Acme Corp rocks");
        assert!(!e.iter().any(|x| x.starts_with("Joanna")), "{e:?}");
        assert!(!e.iter().any(|x| x.starts_with("John")), "{e:?}");
        assert!(
            e.iter().any(|x| x == "Wow Acme Corp" || x == "Acme Corp"),
            "{e:?}"
        );
    }

    #[test]
    fn plain_prose_has_none() {
        let e = extract_entities(
            "We use a cache with a short expiry, so users sign in again after a while. It works.",
        );
        assert!(e.is_empty(), "{e:?}");
        // A sentence-initial word is not half of a name.
        let e = extract_entities("The Redis Cluster holds sessions.");
        assert_eq!(e, ["Redis Cluster"]);
        // Lists of single names are not one multi-word name: each is one.
        let e = extract_entities("We compared Redis, Postgres and Kafka.");
        assert_eq!(e, ["Redis", "Postgres", "Kafka"]);
        // 3.5 is a number, not a version; http links are not paths.
        let e = extract_entities("It took 3.5 seconds, see https://example.com/x");
        assert!(e.is_empty(), "{e:?}");
    }

    #[test]
    fn duplicates_are_kept_once_and_the_list_is_capped() {
        let e = extract_entities("FooBar FooBar FooBar");
        assert_eq!(e, ["FooBar"]);
        let many: String = (0..100).map(|i| format!("name_{i} ")).collect();
        assert_eq!(extract_entities(&many).len(), super::MAX_ENTITIES);
    }
}
