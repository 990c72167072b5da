//! `cairn config show`: every setting's effective value and its layer.

use std::path::Path;

use cairn::{Config, Source};

use crate::args::Cli;
use crate::print;
use crate::project::{flag_sets, project_root};

/// Longest line `config show` prints, where it can help it (a single string
/// value longer than that is printed whole).
const WIDTH: usize = 100;
/// The layer annotations line up after the longest `key = value` up to this
/// long; a longer one has its annotation three spaces after it.
const ALIGN_MAX: usize = 56;

/// A setting as `config show` prints it: a store URI without its password,
/// a float as written.
fn shown_value(key: &str, value: &toml::Value) -> toml::Value {
    match (key, value) {
        ("store.uri", toml::Value::String(uri)) => toml::Value::String(cairn_core::redact_uri(uri)),
        (_, toml::Value::Float(f)) => toml::Value::Float(as_written(*f)),
        _ => value.clone(),
    }
}

/// A float as its field holds it: a built-in `f32` default reaches the
/// table widened to `f64` (`0.3` as `0.30000001192092896`), so a value an
/// `f32` holds exactly is the shortest decimal that reads back as that
/// `f32`. (An `f64` setting holding exactly such a value would have to be
/// written with all 17 digits of the widened `f32`.)
fn as_written(f: f64) -> f64 {
    let narrow = f as f32;
    if narrow.is_finite() && f64::from(narrow) == f {
        narrow.to_string().parse().unwrap_or(f)
    } else {
        f
    }
}

/// A layer, short: the project's file by its path in the project, the
/// user's with `~` for the home folder.
fn shown_source(source: &Source, root: &Path, home: Option<&Path>) -> String {
    let short = |p: &Path| -> String {
        if let Ok(rel) = p.strip_prefix(root) {
            return rel.display().to_string();
        }
        match home.and_then(|h| p.strip_prefix(h).ok()) {
            Some(rel) => format!("~/{}", rel.display()),
            None => p.display().to_string(),
        }
    };
    match source {
        Source::Project(p) => format!("project file {}", short(p)),
        Source::User(p) => format!("user file {}", short(p)),
        other => other.to_string(),
    }
}

/// `key = value   # layer` lines of at most [`WIDTH`] columns: the layers
/// line up, an array too long for one line continues on the next (indented
/// four), and an annotation that does not fit goes on a line of its own
/// below.
fn lines(rows: &[(String, String, String)]) -> Vec<String> {
    let width = rows
        .iter()
        .map(|(k, v, _)| k.len() + 3 + v.len())
        .filter(|n| *n <= ALIGN_MAX)
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for (k, v, source) in rows {
        let mut kv = wrap(&format!("{k} = {v}"));
        let last = kv.pop().unwrap_or_default();
        out.extend(kv);
        let pad = width.saturating_sub(last.chars().count());
        let line = format!("{last}{:pad$}   # {source}", "");
        if line.chars().count() <= WIDTH {
            out.push(line);
        } else {
            out.push(last);
            out.push(format!("    # {source}"));
        }
    }
    out
}

/// A `key = [a, b, …]` line cut after commas into lines of at most
/// [`WIDTH`] columns (later ones indented four); any other line as it is.
fn wrap(line: &str) -> Vec<String> {
    if line.chars().count() <= WIDTH || !line.ends_with(']') || !line.contains(" = [") {
        return vec![line.to_string()];
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    for part in line.split_inclusive(", ") {
        if !cur.trim().is_empty() && cur.chars().count() + part.trim_end().chars().count() > WIDTH {
            out.push(cur.trim_end().to_string());
            cur = "    ".to_string();
        }
        cur.push_str(part);
    }
    out.push(cur.trim_end().to_string());
    out
}

pub(crate) fn show(cli: &Cli, json: bool) -> anyhow::Result<()> {
    let root = project_root(cli)?;
    let (_, sources) = Config::load_layers(&root, &cairn::Layers::from_env(flag_sets(cli)))?;
    if json {
        let rows: Vec<serde_json::Value> = sources
            .iter()
            .map(|(k, v, s)| serde_json::json!({"key": k, "value": shown_value(k, v), "source": s.to_string()}))
            .collect();
        return print::json(&rows);
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from);
    let rows: Vec<(String, String, String)> = sources
        .iter()
        .map(|(k, v, s)| {
            (
                k.clone(),
                shown_value(k, v).to_string(),
                shown_source(s, &root, home.as_deref()),
            )
        })
        .collect();
    for line in lines(&rows) {
        say!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_is_shown_as_written() {
        let shown =
            |f: f64| shown_value("search.graph_restart", &toml::Value::Float(f)).to_string();
        assert_eq!(shown(f64::from(0.3_f32)), "0.3");
        assert_eq!(shown(0.3), "0.3");
        assert_eq!(shown(0.92), "0.92");
        assert_eq!(shown(1.0), "1.0");
        assert_eq!(shown(f64::from(0.05_f32)), "0.05");
    }

    #[test]
    fn lines_stay_within_a_hundred_columns() {
        let extensions = toml::Value::Array(
            cairn::Config::default()
                .index
                .extensions
                .iter()
                .map(|e| toml::Value::String(e.clone()))
                .collect(),
        );
        let rows = vec![
            (
                "chunk.max_chars".to_string(),
                "1500".to_string(),
                "default".to_string(),
            ),
            (
                "index.extensions".to_string(),
                extensions.to_string(),
                "default".to_string(),
            ),
            (
                "embed.model".to_string(),
                "\"none\"".to_string(),
                shown_source(
                    &Source::Project("/home/someone/work/a/long/project/path/cairn.toml".into()),
                    Path::new("/home/someone/work/a/long/project/path"),
                    Some(Path::new("/home/someone")),
                ),
            ),
            (
                "llm.model".to_string(),
                "\"x\"".to_string(),
                shown_source(
                    &Source::User(
                        format!("/home/someone/{}/config.toml", "deep/".repeat(12)).into(),
                    ),
                    Path::new("/elsewhere"),
                    Some(Path::new("/home/someone")),
                ),
            ),
        ];
        let out = lines(&rows);
        for l in &out {
            assert!(
                l.chars().count() <= WIDTH,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert!(
            out[0].starts_with("chunk.max_chars = 1500   ") && out[0].ends_with("# default"),
            "{out:?}"
        );
        assert!(
            out.iter()
                .any(|l| l.starts_with("index.extensions = [\"md\"")),
            "{out:?}"
        );
        // The array's layer: beside its last line, or under it where that
        // line is full.
        assert!(
            out.iter()
                .any(|l| (l.starts_with("    \"") && l.ends_with("# default"))
                    || l.trim() == "# default"),
            "{out:?}"
        );
        assert!(
            out.iter().any(|l| l.ends_with("# project file cairn.toml")),
            "{out:?}"
        );
        assert!(
            out.iter().any(|l| l.starts_with("    # user file ~/deep/")),
            "{out:?}"
        );
        // The array, read back, is the same.
        let joined: String = out
            .iter()
            .skip_while(|l| !l.starts_with("index.extensions"))
            .take_while(|l| !l.starts_with("embed.model"))
            .map(|l| l.split("   #").next().unwrap_or(l).trim())
            .collect::<Vec<_>>()
            .join(" ");
        let value = joined.trim_start_matches("index.extensions = ");
        assert_eq!(
            value.replace(", ", ",").replace(' ', ""),
            extensions.to_string().replace(", ", ",")
        );
    }
}
