//! Every field that comes from outside is redacted before it is stored or
//! printed: one rule set ([`cairn_ingest::redact`]) for text, tags,
//! entities, relation names, observations, session logs and the audit log.
//!
//! Free text keeps its words around a secret (`deploy with [redacted]`); a
//! name (tag, entity, relation, type, client) must hold no secret at all,
//! since it becomes a file name, a graph node or a filter value; a field
//! that would be nothing but `[redacted]` is refused. Errors name the
//! field and the rule family, never the secret.

use cairn_core::Memory;
use cairn_ingest::{REDACTED, looks_like_secret, only_secrets, redact, secret_family};

use crate::error::{Error, Result};

/// Free text (a memory, an observation): redacted; refused when it was only
/// a secret. `what` names the field in the error ("memory text").
pub(crate) fn text(what: &str, value: &str) -> Result<String> {
    let value = value.trim();
    if only_secrets(value) {
        return Err(refused(what, value, "is only a secret"));
    }
    Ok(redact(value).trim().to_string())
}

/// A name (tag, entity, relation type, entity type): refused when it holds a
/// secret, named by a rule or random-looking; otherwise trimmed.
pub(crate) fn name(what: &str, value: &str) -> Result<String> {
    let value = value.trim();
    if secret_family(value).is_some()
        || value.split_whitespace().any(looks_like_secret)
        || value.contains(REDACTED)
    {
        return Err(refused(what, value, "holds a secret"));
    }
    Ok(value.to_string())
}

/// Each of `values` through [`name`]; `what` is the field ("tag").
pub(crate) fn names(what: &str, values: &[String]) -> Result<Vec<String>> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let label = if values.len() > 1 {
                format!("{what} {} of {}", i + 1, values.len())
            } else {
                what.to_string()
            };
            name(&label, v)
        })
        .collect()
}

/// The error for a refused field: what it is and which rule, not the value.
fn refused(what: &str, value: &str, how: &str) -> Error {
    let family = secret_family(value).unwrap_or("a random-looking credential");
    Error::Query(format!(
        "{what} {how} ({family}); nothing was stored. Keep secrets out of memories: \
         an environment variable's name or a vault path says where one is"
    ))
}

/// The last guard before a memory file is written: every field redacted,
/// names that held a secret dropped. What went through [`text`] and
/// [`name`] is unchanged by it; a memory edited by hand or written by an
/// older cairn is cleaned on its next save.
pub(crate) fn memory(m: &Memory) -> Memory {
    let clean_names = |v: &[String]| -> Vec<String> {
        v.iter().filter(|s| name("", s).is_ok()).cloned().collect()
    };
    let mut m = m.clone();
    m.text = redact(&m.text);
    m.kind = redact(&m.kind);
    m.tags = clean_names(&m.tags);
    m.entities = clean_names(&m.entities);
    m.sources = m.sources.iter().map(|s| redact(s)).collect();
    m.entity = m.entity.as_deref().map(redact);
    m.entity_type = m.entity_type.as_deref().map(redact);
    for r in &mut m.relations {
        r.from = redact(&r.from);
        r.to = redact(&r.to);
        r.rel = redact(&r.rel);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_a_secret_are_refused_without_repeating_it() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let e = names("tag", &["caching".into(), token.into()]).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("tag 2 of 2 holds a secret (github token)"),
            "{msg}"
        );
        assert!(!msg.contains("abcdefghij"), "{msg}");
        assert_eq!(names("tag", &[" caching ".into()]).unwrap(), ["caching"]);
        assert!(name("entity", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_err());
        assert!(name("entity", "q8Zr3LmX0pT7vN2kW9yB4cJ6").is_err());
        assert!(name("entity", "Table._calculate_column_widths").is_ok());
    }

    #[test]
    fn text_keeps_its_words_and_refuses_a_lone_secret() {
        assert_eq!(
            text(
                "memory text",
                "deploy with sk_live_4eC39HqLyjWDarjtT1zdp7dc today"
            )
            .unwrap(),
            "deploy with [redacted] today"
        );
        let e = text("memory text", "  sk_live_4eC39HqLyjWDarjtT1zdp7dc ").unwrap_err();
        assert!(
            e.to_string()
                .contains("memory text is only a secret (stripe key)"),
            "{e}"
        );
    }
}
