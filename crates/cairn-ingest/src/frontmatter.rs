//! YAML frontmatter at the top of a markdown file.

use serde::Serialize;
use serde_yaml::Value;

/// The YAML block between `---` fences at the top of a markdown file.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Frontmatter {
    /// The `title` field, if it is a string (or a number or boolean).
    pub title: Option<String>,
    /// The `tags` field: a YAML list, or a string of comma- or space-separated tags.
    pub tags: Vec<String>,
    /// The whole parsed YAML document (`Null` when the block is empty).
    pub raw: Value,
    /// Fields left out because their value has the wrong shape (a mapping
    /// for `title`), each as `field: why`; every other field is kept.
    #[serde(skip)]
    pub dropped: Vec<String>,
}

/// Where the frontmatter of a text ends, and what it holds.
pub(crate) struct FrontmatterBlock {
    /// The parsed YAML, or why it is not valid frontmatter.
    pub(crate) parsed: Result<Frontmatter, String>,
    /// Lines occupied, including both fences.
    pub(crate) lines: usize,
    /// Byte offset just past the closing fence's line ending.
    pub(crate) end: usize,
}

/// Splits YAML frontmatter off the top of a markdown text.
///
/// If `text` starts with a `---` line and a later line is `---` or `...`, the
/// lines between are parsed as YAML. Returns the parsed frontmatter (or, when
/// the YAML is invalid or not a mapping, an error message for the caller to
/// log) and the number of lines the block occupies including both fences.
/// Without frontmatter the result is `(None, 0)`. A leading byte-order mark is
/// ignored.
pub fn split_frontmatter(text: &str) -> (Option<Result<Frontmatter, String>>, usize) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match find_frontmatter(text) {
        Some(block) => (Some(block.parsed), block.lines),
        None => (None, 0),
    }
}

/// Finds and parses the frontmatter block at the very start of `text` (which
/// must not start with a byte-order mark).
pub(crate) fn find_frontmatter(text: &str) -> Option<FrontmatterBlock> {
    let mut offset = 0;
    let mut yaml_start = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let content = line.trim_end();
        let line_start = offset;
        offset += line.len();
        if index == 0 {
            if content != "---" {
                return None;
            }
            yaml_start = offset;
        } else if content == "---" || content == "..." {
            return Some(FrontmatterBlock {
                parsed: parse(&text[yaml_start..line_start]),
                lines: index + 1,
                end: offset,
            });
        }
    }
    None
}

fn parse(yaml: &str) -> Result<Frontmatter, String> {
    let raw: Value =
        serde_yaml::from_str(yaml).map_err(|e| format!("invalid YAML frontmatter: {e}"))?;
    let mut dropped = Vec::new();
    let (title, tags) = match &raw {
        Value::Null => (None, Vec::new()),
        Value::Mapping(map) => {
            let title = match map.get("title") {
                Some(v) if is_collection(v) => {
                    dropped.push(format!("title: expected text, found {}", shape(v)));
                    None
                }
                Some(v) => scalar_string(v),
                None => None,
            };
            let tags = match map.get("tags") {
                Some(Value::Mapping(_)) => {
                    dropped.push("tags: expected a list, found a mapping".to_string());
                    Vec::new()
                }
                Some(v) => tag_list(v),
                None => Vec::new(),
            };
            (title, tags)
        }
        _ => return Err("frontmatter is not a YAML mapping".to_string()),
    };
    Ok(Frontmatter {
        title,
        tags,
        raw,
        dropped,
    })
}

/// Whether a value is a list or a mapping (possibly tagged).
fn is_collection(value: &Value) -> bool {
    match value {
        Value::Sequence(_) | Value::Mapping(_) => true,
        Value::Tagged(tagged) => is_collection(&tagged.value),
        _ => false,
    }
}

fn shape(value: &Value) -> &'static str {
    match value {
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(tagged) => shape(&tagged.value),
        _ => "a scalar",
    }
}

/// A scalar as a trimmed string; `None` for nulls, empty strings and collections.
fn scalar_string(value: &Value) -> Option<String> {
    let s = match value {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Tagged(tagged) => return scalar_string(&tagged.value),
        _ => return None,
    };
    (!s.is_empty()).then_some(s)
}

fn tag_list(value: &Value) -> Vec<String> {
    match value {
        Value::Sequence(items) => items.iter().filter_map(scalar_string).collect(),
        Value::String(s) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        other => scalar_string(other).into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_title_and_tag_list() {
        let text = "---\ntitle: Caching notes\ntags: [redis, ops]\n---\n# Body\n";
        let (fm, lines) = split_frontmatter(text);
        let fm = fm.unwrap().unwrap();
        assert_eq!(lines, 4);
        assert_eq!(fm.title.as_deref(), Some("Caching notes"));
        assert_eq!(fm.tags, ["redis", "ops"]);
        assert_eq!(fm.raw["title"], Value::from("Caching notes"));
    }

    #[test]
    fn parses_tag_string_and_dots_fence() {
        let text = "---\ntags: redis, ops  cache\nauthor: me\n...\nbody";
        let (fm, lines) = split_frontmatter(text);
        let fm = fm.unwrap().unwrap();
        assert_eq!(lines, 4);
        assert_eq!(fm.title, None);
        assert_eq!(fm.tags, ["redis", "ops", "cache"]);
    }

    #[test]
    fn block_list_tags_and_crlf() {
        let text = "---\r\ntitle: 'T'\r\ntags:\r\n  - a\r\n  - b\r\n---\r\nbody\r\n";
        let (fm, lines) = split_frontmatter(text);
        let fm = fm.unwrap().unwrap();
        assert_eq!(lines, 6);
        assert_eq!(fm.title.as_deref(), Some("T"));
        assert_eq!(fm.tags, ["a", "b"]);
    }

    #[test]
    fn empty_block_is_empty_frontmatter() {
        let (fm, lines) = split_frontmatter("---\n---\nbody");
        assert_eq!(fm.unwrap().unwrap(), Frontmatter::default());
        assert_eq!(lines, 2);
    }

    #[test]
    fn invalid_yaml_is_reported_with_its_lines() {
        let (fm, lines) = split_frontmatter("---\ntitle: [unclosed\n---\nbody\n");
        let err = fm.unwrap().unwrap_err();
        assert!(err.contains("invalid YAML"), "{err}");
        assert_eq!(lines, 3);
        let (fm, _) = split_frontmatter("---\njust a sentence\n---\n");
        assert!(fm.unwrap().is_err());
    }

    #[test]
    fn a_bad_field_is_dropped_and_named_and_the_rest_kept() {
        let text = "---\ntitle: {a: 1}\ntags: [x, y]\nauthor: me\n---\nbody\n";
        let fm = split_frontmatter(text).0.unwrap().unwrap();
        assert_eq!(fm.title, None);
        assert_eq!(fm.tags, ["x", "y"]);
        assert_eq!(fm.raw["author"], Value::from("me"));
        assert_eq!(fm.dropped, ["title: expected text, found a mapping"]);
        let fm = split_frontmatter("---\ntitle: T\ntags: {a: 1}\n---\n")
            .0
            .unwrap()
            .unwrap();
        assert_eq!(fm.title.as_deref(), Some("T"));
        assert!(fm.tags.is_empty());
        assert_eq!(fm.dropped, ["tags: expected a list, found a mapping"]);
    }

    #[test]
    fn no_frontmatter() {
        assert_eq!(split_frontmatter("# Title\n---\n").1, 0);
        assert!(split_frontmatter("# Title\n").0.is_none());
        assert!(split_frontmatter("").0.is_none());
        // An opening fence that never closes is not frontmatter.
        assert!(split_frontmatter("---\ntitle: x\n\nbody\n").0.is_none());
        // The fence must be the very first line.
        assert!(split_frontmatter("\n---\ntitle: x\n---\n").0.is_none());
    }

    #[test]
    fn bom_is_ignored() {
        let (fm, lines) = split_frontmatter("\u{feff}---\ntitle: x\n---\n");
        assert_eq!(fm.unwrap().unwrap().title.as_deref(), Some("x"));
        assert_eq!(lines, 3);
    }
}
