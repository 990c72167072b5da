//! The links of a markdown document (docs and memories): markdown links to
//! other files, `[[wikilinks]]`, headings as concepts, and mentions of code
//! symbols and paths (code spans included).

use std::sync::OnceLock;

use cairn_core::{Chunk, Link, Relation};
use regex::Regex;

use crate::entities::doc_entities;

fn md_link() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)"#).expect("valid regex")
    })
}

fn code_span() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"`([A-Za-z_][A-Za-z0-9_:.\-/]{2,80})(?:\(\))?`").expect("valid regex")
    })
}

fn wikilink() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\[\[([^\]\|#\n]+)(?:#[^\]\|\n]*)?(?:\|[^\]\n]*)?\]\]").expect("valid regex")
    })
}

/// Whether a link target is an image or another binary asset: no text of it
/// is indexed, so as a graph node it only joins the pages that show it (one
/// explain path ran through a `.gif`).
fn is_binary_asset(target: &str) -> bool {
    const ASSETS: [&str; 24] = [
        "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "tif", "tiff", "avif", "pdf",
        "zip", "gz", "tgz", "xz", "bz2", "7z", "mp4", "webm", "mov", "mp3", "wav", "woff2",
    ];
    target
        .rsplit_once('.')
        .is_some_and(|(_, ext)| ASSETS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// Links from the chunks of the markdown file `path` (project-relative):
///
/// * `[text](other.md)` / `[text](../src/auth.rs#L10)` → `links` to the
///   target path, resolved against the file's folder (URLs are left out);
/// * `[[Name]]` → `links` to the entity `Name`;
/// * the innermost heading above a chunk → `heading` to that concept, and
///   the file's name (without extension) from its first chunk;
/// * names that look like code or paths ([`crate::extract_entities`]:
///   `PolicyController`, `validate_token`, `src/auth/jwt.rs`, …) →
///   `mentions`.
pub fn doc_links(path: &str, chunks: &[Chunk]) -> Vec<Link> {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let stem = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .rsplit_once('.')
        .map_or(path, |(s, _)| s);
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map_or("rst", |(_, e)| e);
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        if i == 0 && !stem.is_empty() {
            out.push(Link::from_chunk(0, stem, Relation::Heading));
        }
        if let Some(h) = c.heading_path.last() {
            out.push(Link::from_chunk(i, h.clone(), Relation::Heading));
        }
        for cap in md_link().captures_iter(&c.text) {
            let target = &cap[1];
            if target.contains("://") || target.starts_with("mailto:") || target.starts_with('#') {
                continue;
            }
            let target = target.split(['#', '?']).next().unwrap_or(target);
            if let Some(resolved) = resolve(dir, target) {
                out.push(Link::from_chunk(i, resolved, Relation::Links));
            }
        }
        for cap in wikilink().captures_iter(&c.text) {
            out.push(Link::from_chunk(i, cap[1].trim(), Relation::Links));
        }
        // A code span names code, even a plain word (`Ledger`).
        for cap in code_span().captures_iter(&c.text) {
            for name in cap[1].split("::") {
                if name.len() >= 3 {
                    out.push(Link::from_chunk(i, name, Relation::Mentions));
                }
            }
        }
        // Sphinx roles and autodoc directives name the code a doc documents;
        // `:doc:` names another page (of this page's own extension).
        for name in crate::rst::code_names(&c.text) {
            out.push(Link::from_chunk(i, name, Relation::Mentions));
        }
        for target in crate::rst::doc_targets(&c.text) {
            let with_ext = if target.rsplit('/').next().is_some_and(|n| n.contains('.')) {
                target
            } else {
                format!("{target}.{ext}")
            };
            if let Some(resolved) = resolve(dir, &with_ext) {
                out.push(Link::from_chunk(i, resolved, Relation::Links));
            }
        }
        // `Type::method` names two symbols.
        for e in doc_entities(&c.text.replace("::", " ")) {
            out.push(Link::from_chunk(i, e, Relation::Mentions));
        }
    }
    out.retain(|l| !is_binary_asset(&l.to));
    out.sort_by(|a, b| (a.chunk, &a.to, &a.rel).cmp(&(b.chunk, &b.to, &b.rel)));
    out.dedup_by(|a, b| a.chunk == b.chunk && a.to == b.to);
    out
}

/// `target` relative to `dir`, normalised; `None` when it climbs out of the
/// project or is empty.
fn resolve(dir: &str, target: &str) -> Option<String> {
    let joined = if let Some(abs) = target.strip_prefix('/') {
        abs.to_string()
    } else if dir.is_empty() {
        target.to_string()
    } else {
        format!("{dir}/{target}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in joined.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_wikilinks_headings_and_mentions() {
        let text = "# Login throttling\n\nSee [the gate](../src/gate.rs#L4), [[Rate Limits|limits]] and \
                    [site](https://example.com). `RateGate::admit` lives in src/gate.rs, `Ledger` too.";
        let chunk = Chunk::new(
            "docs/throttle.md",
            vec!["Login throttling".into()],
            1,
            1,
            3,
            text.into(),
        );
        let links = doc_links("docs/throttle.md", &[chunk]);
        let has = |to: &str, rel: Relation| links.iter().any(|l| l.to == to && l.rel == rel);
        assert!(has("src/gate.rs", Relation::Links), "{links:?}");
        assert!(has("Rate Limits", Relation::Links), "{links:?}");
        assert!(has("Login throttling", Relation::Heading), "{links:?}");
        assert!(has("throttle", Relation::Heading), "{links:?}");
        assert!(has("RateGate", Relation::Mentions), "{links:?}");
        assert!(has("admit", Relation::Mentions), "{links:?}");
        assert!(has("Ledger", Relation::Mentions), "{links:?}");
        assert!(
            !links.iter().any(|l| l.to.contains("example.com")),
            "{links:?}"
        );
        assert_eq!(resolve("docs", "../../x.md"), None);
        let pic = Chunk::new(
            "docs/a.md",
            vec!["Flow".into()],
            1,
            1,
            2,
            "![flow](img/flow.gif) and [plan](plan.PDF); the diagram docs/img/flow.gif shows it."
                .into(),
        );
        let links = doc_links("docs/a.md", &[pic]);
        assert!(
            !links.iter().any(|l| is_binary_asset(&l.to)),
            "no image or binary file is a graph node: {links:?}"
        );
        assert_eq!(resolve("docs/a", "./b.md"), Some("docs/a/b.md".into()));
    }
}
