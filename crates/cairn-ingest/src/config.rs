//! Configuration and build files read as their structure: the sections a
//! reader looks things up by become chunks with their key path as the
//! breadcrumb (`pyproject.toml > tool.pytest.ini_options`, `ci.yml > jobs >
//! test`, `Makefile > release`), so "which pytest options are set" or "how
//! is the release built" meets the section that says it.
//!
//! A line scan per format, not a parser: a file that does not parse (a
//! template, a half-written YAML) still gets its sections, and the chunks
//! keep the file's own lines.

use std::sync::OnceLock;

use regex::Regex;

/// A format whose sections [`sections`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConfigKind {
    /// `[table]` and `[[array]]` headers.
    Toml,
    /// `[section]` headers (`tox.ini`, `setup.cfg`, `.editorconfig`).
    Ini,
    /// Mapping keys, up to three levels deep by indentation.
    Yaml,
    /// Object keys whose value is an object or array, two levels deep.
    Json,
    /// Targets (`release: build`).
    Make,
    /// Build stages (`FROM rust:1.80 AS build`).
    Docker,
    /// An environment template (`.env.example`): its variables, each
    /// value redacted ([`redact_env`]).
    Env,
}

/// Names of environment templates: the variables a project reads, with
/// example values (which may be real ones someone pasted).
const ENV_TEMPLATES: [&str; 7] = [
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    ".env.defaults",
    "env.example",
    "example.env",
];

/// Whether a file name is an environment template (`.env.example`).
pub fn is_env_template(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ENV_TEMPLATES.contains(&lower.as_str())
}

/// An environment template with every value redacted, line for line (the
/// line count and the names stay): `DATABASE_URL=postgres://u:p@db/x` →
/// `DATABASE_URL=[redacted]`, `export KEY="v"  # note` → `export
/// KEY=[redacted]  # note`. An empty value stays empty. What is stored and
/// what `get` and `expand` show of such a file.
pub fn redact_env(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let trimmed = body.trim_start();
        let assignment = !trimmed.starts_with('#')
            && trimmed.split_once('=').is_some_and(|(k, _)| {
                let k = k.trim().trim_start_matches("export ").trim();
                !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            });
        if !assignment {
            out.push_str(line);
            continue;
        }
        let (key, value) = body.split_once('=').unwrap_or((body, ""));
        // A comment after the value: ` # …` after its closing quote, if
        // it is quoted.
        let lead = value.len() - value.trim_start().len();
        let quoted_end = value[lead..]
            .chars()
            .next()
            .filter(|c| matches!(c, '"' | '\''))
            .and_then(|q| value[lead + 1..].find(q).map(|e| lead + e + 2));
        let from = quoted_end.unwrap_or(0).min(value.len());
        let (value, comment) = match value[from..].find(" #") {
            // The spaces before the `#` stay the comment's.
            Some(at) => value.split_at(value[..from + at].trim_end().len()),
            None => (value, ""),
        };
        out.push_str(key);
        out.push('=');
        if !value.trim().trim_matches(['"', '\'']).is_empty() {
            out.push_str(crate::redact::REDACTED);
        }
        out.push_str(comment);
        out.push_str(ending);
    }
    out
}

/// JSON files read as configuration, by name: other JSON is data (fixtures,
/// schemas, lock files) and is left to the extension list.
const JSON_CONFIGS: [&str; 6] = [
    "package.json",
    "composer.json",
    "tsconfig.json",
    "jsconfig.json",
    "deno.json",
    "deno.jsonc",
];

impl ConfigKind {
    /// The format of `path` (project-relative), if it is a configuration or
    /// build file.
    pub(crate) fn of_path(path: &str) -> Option<ConfigKind> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let lower = name.to_ascii_lowercase();
        if JSON_CONFIGS.contains(&lower.as_str())
            || (lower.starts_with("tsconfig.") && lower.ends_with(".json"))
        {
            return Some(ConfigKind::Json);
        }
        if is_env_template(&lower) {
            return Some(ConfigKind::Env);
        }
        match lower.as_str() {
            "makefile" | "gnumakefile" => return Some(ConfigKind::Make),
            "dockerfile" | "containerfile" => return Some(ConfigKind::Docker),
            _ => {}
        }
        match lower.rsplit_once('.').map(|(_, e)| e) {
            Some("toml") => Some(ConfigKind::Toml),
            Some("ini" | "cfg") => Some(ConfigKind::Ini),
            Some("yaml" | "yml") => Some(ConfigKind::Yaml),
            Some("mk") => Some(ConfigKind::Make),
            Some("dockerfile") => Some(ConfigKind::Docker),
            _ => None,
        }
    }

    /// The name the index report and `--explain` give the format.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ConfigKind::Toml => "toml",
            ConfigKind::Ini => "ini",
            ConfigKind::Yaml => "yaml",
            ConfigKind::Json => "json",
            ConfigKind::Make => "make",
            ConfigKind::Docker => "dockerfile",
            ConfigKind::Env => "env",
        }
    }
}

/// A section: its 0-based first line, its level (1 for the outermost) and
/// its name.
pub(crate) type Section = (usize, u8, String);

/// The sections of a file of `kind`, in order.
pub(crate) fn sections(kind: ConfigKind, text: &str) -> Vec<Section> {
    let lines: Vec<&str> = text.lines().collect();
    match kind {
        ConfigKind::Toml | ConfigKind::Ini => bracket_headers(&lines),
        ConfigKind::Yaml => indented_keys(&lines, yaml_key, 3),
        ConfigKind::Json => indented_keys(&lines, json_key, 2),
        ConfigKind::Make => make_targets(&lines),
        ConfigKind::Docker => docker_stages(&lines),
        // Short files of variables: line windows, no sections.
        ConfigKind::Env => Vec::new(),
    }
}

/// `[name]`, `[[name]]`, `[tool.pytest.ini_options]`: one level each (a
/// table's dotted name is its whole key path).
fn bracket_headers(lines: &[&str]) -> Vec<Section> {
    let mut out = Vec::new();
    let mut in_string = false;
    for (i, line) in lines.iter().enumerate() {
        // A TOML multi-line string can hold a line that looks like a header.
        if line.matches("\"\"\"").count() % 2 == 1 || line.matches("'''").count() % 2 == 1 {
            in_string = !in_string;
        }
        if in_string {
            continue;
        }
        let t = line.trim();
        let Some(inner) = t.strip_prefix('[') else {
            continue;
        };
        let inner = inner.trim_start_matches('[');
        let Some(end) = inner.find(']') else {
            continue;
        };
        let name = inner[..end].trim();
        if !name.is_empty() && indent(line) == 0 {
            out.push((i, 1, name.to_string()));
        }
    }
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn yaml_key(line: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r#"^\s*(?:-\s+)?(["']?)([A-Za-z0-9_.$/@-][A-Za-z0-9_.$/@ -]*)(["']?)\s*:(?:\s|$)"#,
        )
        .expect("valid regex")
    });
    let t = line.trim_start();
    if t.starts_with('#') {
        return None;
    }
    re.captures(line).map(|c| c[2].trim().to_string())
}

fn json_key(line: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re =
        RE.get_or_init(|| Regex::new(r#"^\s*"([^"]{1,80})"\s*:\s*[\{\[]"#).expect("valid regex"));
    re.captures(line).map(|c| c[1].to_string())
}

/// Keys by indentation: each distinct indentation of a key line under the
/// ones above it is one level deeper, up to `depth` levels. YAML's block
/// scalars (`run: |`) are skipped whole.
fn indented_keys(lines: &[&str], key: fn(&str) -> Option<String>, depth: u8) -> Vec<Section> {
    let mut out = Vec::new();
    // The indentation of each open level.
    let mut stack: Vec<usize> = Vec::new();
    let mut block: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let ind = indent(line);
        if let Some(b) = block {
            if ind > b {
                continue;
            }
            block = None;
        }
        let Some(name) = key(line) else {
            continue;
        };
        let t = line.trim_end();
        if t.ends_with('|') || t.ends_with('>') || t.ends_with("|-") || t.ends_with(">-") {
            block = Some(ind);
        }
        while stack.last().is_some_and(|&s| s >= ind) {
            stack.pop();
        }
        stack.push(ind);
        // JSON's outermost `{` is no key: its keys are level 1.
        let level = stack.len();
        if level <= usize::from(depth) {
            out.push((i, level as u8, name));
        }
    }
    out
}

/// `target: deps` lines at the start of a line (not variable assignments,
/// not special targets like `.PHONY`).
fn make_targets(lines: &[&str]) -> Vec<Section> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^([A-Za-z0-9_./%$()-][A-Za-z0-9_./%$() -]*?)\s*::?(?:[^=]|$)")
            .expect("valid regex")
    });
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let c = re.captures(l)?;
            let name = c[1].trim();
            (!name.starts_with('.')).then(|| (i, 1, name.to_string()))
        })
        .collect()
}

/// `FROM image [AS name]` lines: one section per build stage.
fn docker_stages(lines: &[&str]) -> Vec<Section> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim();
            let rest = t
                .get(..5)
                .filter(|h| h.eq_ignore_ascii_case("FROM "))
                .map(|_| t[5..].trim())?;
            Some((i, 1, format!("FROM {rest}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_environment_template_keeps_its_names_and_loses_its_values() {
        for name in [".env.example", ".env.sample", "example.env", ".ENV.EXAMPLE"] {
            assert!(is_env_template(name), "{name}");
        }
        assert!(!is_env_template(".env"), "the real one is never read");
        assert!(!is_env_template(".envrc"));
        let text = "# Payments\nSTRIPE_SECRET_KEY=sk_live_51Habc\nexport DATABASE_URL=\"postgres://app:hunter2@db/app\"  # local\nEMPTY=\nDEBUG = true\nnot an assignment\n";
        let out = redact_env(text);
        assert_eq!(
            out,
            "# Payments\nSTRIPE_SECRET_KEY=[redacted]\nexport DATABASE_URL=[redacted]  # local\nEMPTY=\nDEBUG =[redacted]\nnot an assignment\n"
        );
        assert_eq!(out.lines().count(), text.lines().count());
        assert_eq!(
            ConfigKind::of_path("app/.env.example"),
            Some(ConfigKind::Env)
        );
    }

    fn names(kind: ConfigKind, text: &str) -> Vec<(u8, String)> {
        sections(kind, text)
            .into_iter()
            .map(|(_, l, n)| (l, n))
            .collect()
    }

    #[test]
    fn formats_by_name() {
        assert_eq!(
            ConfigKind::of_path("pyproject.toml"),
            Some(ConfigKind::Toml)
        );
        assert_eq!(ConfigKind::of_path("a/tox.ini"), Some(ConfigKind::Ini));
        assert_eq!(
            ConfigKind::of_path(".github/workflows/ci.yml"),
            Some(ConfigKind::Yaml)
        );
        assert_eq!(
            ConfigKind::of_path("web/package.json"),
            Some(ConfigKind::Json)
        );
        assert_eq!(
            ConfigKind::of_path("tsconfig.build.json"),
            Some(ConfigKind::Json)
        );
        assert_eq!(ConfigKind::of_path("tests/fixture.json"), None);
        assert_eq!(ConfigKind::of_path("Makefile"), Some(ConfigKind::Make));
        assert_eq!(
            ConfigKind::of_path("docker/Dockerfile"),
            Some(ConfigKind::Docker)
        );
        assert_eq!(ConfigKind::of_path("src/main.rs"), None);
    }

    #[test]
    fn toml_tables_and_ini_sections() {
        let text = "[project]\nname = \"x\"\ndescription = \"\"\"\n[not a table]\n\"\"\"\n\n\
                    [tool.pytest.ini_options]\naddopts = \"-q\"\n\n[[tool.mypy.overrides]]\nmodule = \"a\"\n";
        assert_eq!(
            names(ConfigKind::Toml, text),
            [
                (1, "project".to_string()),
                (1, "tool.pytest.ini_options".into()),
                (1, "tool.mypy.overrides".into())
            ]
        );
    }

    #[test]
    fn yaml_keys_by_depth_without_block_scalars() {
        let text = "name: ci\non:\n  push:\njobs:\n  test:\n    runs-on: ubuntu\n    steps:\n      - uses: x\n      - run: |\n          key: not a key\n          echo\n  lint:\n    steps: []\n";
        assert_eq!(
            names(ConfigKind::Yaml, text),
            [
                (1, "name".to_string()),
                (1, "on".into()),
                (2, "push".into()),
                (1, "jobs".into()),
                (2, "test".into()),
                (3, "runs-on".into()),
                (3, "steps".into()),
                (2, "lint".into()),
                (3, "steps".into())
            ]
        );
    }

    #[test]
    fn json_objects_make_targets_docker_stages() {
        let json = "{\n  \"name\": \"x\",\n  \"scripts\": {\n    \"test\": \"jest\"\n  },\n  \"dependencies\": {\n    \"a\": \"1\"\n  }\n}\n";
        assert_eq!(
            names(ConfigKind::Json, json),
            [(1, "scripts".to_string()), (1, "dependencies".into())]
        );
        let make = ".PHONY: all\nCC := gcc\nall: build\nrelease: all\n\tcargo build --release\n";
        assert_eq!(
            names(ConfigKind::Make, make),
            [(1, "all".to_string()), (1, "release".into())]
        );
        let docker =
            "FROM rust:1.80 AS build\nRUN cargo build\nFROM debian:12\nCOPY --from=build /x /x\n";
        assert_eq!(
            names(ConfigKind::Docker, docker),
            [
                (1, "FROM rust:1.80 AS build".to_string()),
                (1, "FROM debian:12".into())
            ]
        );
    }
}
