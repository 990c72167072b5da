//! Boosts applied after fusion.

/// Factor for chunks in the same domain as the file being edited.
pub const DOMAIN_BOOST: f64 = 1.3;
/// Factor for chunks of `*.instructions.md` files (agent instructions).
pub const INSTRUCTIONS_BOOST: f64 = 1.2;

/// The domain of a document: the first folder of its path relative to the
/// knowledge-base root it was indexed from (`docs/cache/redis.md` indexed from
/// `docs` → `cache`); empty for files at the root.
pub fn domain_of(path_in_root: &str) -> &str {
    match path_in_root.split_once('/') {
        Some((first, _)) => first,
        None => "",
    }
}

/// Whether a path is an instructions file.
pub fn is_instructions(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".instructions.md")
}

/// The boosts that apply to one search.
#[derive(Clone, Debug, Default)]
pub struct Boosts {
    /// Domain of the file being edited, if it has one.
    pub current_domain: Option<String>,
}

impl Boosts {
    /// The factors that apply to a chunk of `path` in `domain`, with their reasons.
    pub fn factors(&self, path: &str, domain: &str) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        if let Some(d) = &self.current_domain
            && !d.is_empty()
            && d == domain
        {
            out.push(("domain", DOMAIN_BOOST));
        }
        if is_instructions(path) {
            out.push(("instructions", INSTRUCTIONS_BOOST));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_and_instructions() {
        assert_eq!(domain_of("cache/redis.md"), "cache");
        assert_eq!(domain_of("README.md"), "");
        let b = Boosts {
            current_domain: Some("cache".into()),
        };
        assert_eq!(
            b.factors("docs/cache/redis.md", "cache"),
            vec![("domain", 1.3)]
        );
        assert_eq!(
            b.factors("docs/api.instructions.md", "api"),
            vec![("instructions", 1.2)]
        );
        assert!(Boosts::default().factors("docs/x.md", "").is_empty());
    }
}
