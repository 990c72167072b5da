//! Edits of a JSON file's text that leave every byte of the user's as it
//! was: an entry is inserted as one span of new text (after the last member
//! of an object, or the last element of an array, in the file's own indent
//! and line ending) and taken out as that span again. `cairn setup`, `hooks
//! install` and `mcp install` write through these, so a settings file keeps
//! its formatting, key order and everything cairn has no business with; and
//! each change is a [`TextEdit`] that `setup --undo` can revert exactly.

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One change of the text: at `offset`, `removed` became `inserted`.
/// `removed` is empty but for cairn's own text (an entry it replaces) and
/// the whitespace of a blank file or an empty `{}`/`[]` it fills: never
/// the user's data, so a record of edits holds no secret of theirs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TextEdit {
    pub offset: usize,
    pub removed: String,
    pub inserted: String,
}

impl TextEdit {
    /// The text before this edit, from the text after it; None when the
    /// text there is not what the edit inserted.
    pub fn revert(&self, text: &str) -> Option<String> {
        let end = self.offset.checked_add(self.inserted.len())?;
        if text.get(self.offset..end)? != self.inserted {
            return None;
        }
        Some(format!(
            "{}{}{}",
            &text[..self.offset],
            self.removed,
            &text[end..]
        ))
    }
}

/// A step on the way to a value: an object's key or an array's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

impl From<&str> for Seg {
    fn from(k: &str) -> Seg {
        Seg::Key(k.to_string())
    }
}
impl From<&String> for Seg {
    fn from(k: &String) -> Seg {
        Seg::Key(k.clone())
    }
}
impl From<usize> for Seg {
    fn from(i: usize) -> Seg {
        Seg::Index(i)
    }
}

/// A value's place in the text, `start..end`, and what it holds.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    Scalar,
}

#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(e) => Some(e),
            _ => None,
        }
    }

    pub fn member(&self, key: &str) -> Option<&Node> {
        self.members()?
            .iter()
            .rev()
            .find(|m| m.key == key)
            .map(|m| &m.value)
    }

    /// The value at `path` below this one.
    pub fn at(&self, path: &[Seg]) -> Option<&Node> {
        let mut node = self;
        for seg in path {
            node = match seg {
                Seg::Key(k) => node.member(k)?,
                Seg::Index(i) => node.elements()?.get(*i)?,
            };
        }
        Some(node)
    }

    /// What it is, in words (for an error that names a value of the wrong shape).
    pub fn what(&self, text: &str) -> &'static str {
        match &self.kind {
            Kind::Object(_) => "an object",
            Kind::Array(_) => "a list",
            Kind::Scalar => match text.as_bytes().get(self.start) {
                Some(b'"') => "a string",
                Some(b't' | b'f') => "a boolean",
                Some(b'n') => "null",
                _ => "a number",
            },
        }
    }
}

/// A JSON document's text being edited, with the edits made so far.
pub(crate) struct Doc {
    pub text: String,
    pub edits: Vec<TextEdit>,
    nl: &'static str,
    unit: String,
}

impl Doc {
    /// The text of a file that must hold a JSON object (blank: an empty
    /// one, written as `{}` when something is added). `name` is said in errors.
    pub fn new(text: String, name: &str) -> anyhow::Result<Doc> {
        let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let unit = indent_unit(&text);
        let mut doc = Doc {
            text,
            edits: Vec::new(),
            nl,
            unit,
        };
        if doc.text.trim().is_empty() {
            let edit = TextEdit {
                offset: 0,
                removed: doc.text.clone(),
                inserted: format!("{{}}{nl}"),
            };
            doc.apply(edit);
        } else {
            let v: Value = serde_json::from_str(&doc.text)
                .map_err(|e| anyhow!("{name} is not valid JSON ({e}); left unchanged"))?;
            if !v.is_object() {
                bail!("{name} is not a JSON object; left unchanged");
            }
        }
        Ok(doc)
    }

    /// Whether the text is blank or an empty object with only whitespace in it.
    pub fn is_empty_object(&self) -> bool {
        self.root().members().is_some_and(|m| m.is_empty())
    }

    pub fn root(&self) -> Node {
        // The text was checked to be JSON, and every edit keeps it JSON.
        let mut p = Parser {
            s: self.text.as_bytes(),
            i: 0,
        };
        p.ws();
        p.value().unwrap_or(Node {
            start: 0,
            end: 0,
            kind: Kind::Scalar,
        })
    }

    /// The value at `path`, parsed.
    pub fn value(&self, path: &[Seg]) -> Option<Value> {
        let root = self.root();
        let n = root.at(path)?;
        serde_json::from_str(&self.text[n.start..n.end]).ok()
    }

    fn apply(&mut self, edit: TextEdit) {
        let end = edit.offset + edit.removed.len();
        self.text.replace_range(edit.offset..end, &edit.inserted);
        self.edits.push(edit);
    }

    fn node(&self, path: &[Seg]) -> anyhow::Result<Node> {
        self.root()
            .at(path)
            .cloned()
            .ok_or_else(|| anyhow!("no value at {path:?}"))
    }

    /// `value` as text for a place whose line starts with `indent`.
    fn render(&self, value: &Value, indent: Option<&str>) -> String {
        let Some(indent) = indent else {
            // On one line, spaced as people write it: `{"a": [1, 2]}`.
            let mut out = Vec::new();
            let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
            return match value.serialize(&mut ser) {
                Ok(()) => String::from_utf8_lossy(&out).into_owned(),
                Err(_) => value.to_string(),
            };
        };
        let mut out = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(self.unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
        if value.serialize(&mut ser).is_err() {
            return value.to_string();
        }
        let text = String::from_utf8_lossy(&out).into_owned();
        text.replace('\n', &format!("{}{indent}", self.nl))
    }

    /// The indent of the line a value or key at `pos` starts, when it is
    /// the first thing on its line (None: the file is written compactly there).
    fn own_line_indent(&self, pos: usize) -> Option<String> {
        let before = &self.text[..pos];
        let line_start = before.rfind('\n').map(|i| i + 1)?;
        let lead = &before[line_start..];
        lead.chars()
            .all(|c| c == ' ' || c == '\t')
            .then(|| lead.to_string())
    }

    /// The indent of the line that holds `pos` (its leading whitespace).
    fn line_indent(&self, pos: usize) -> String {
        let before = &self.text[..pos];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        before[line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    }

    /// Puts `item` (a member's `"key": value` or an element, rendered by
    /// `render` for an indent) last into the object or array at `path`.
    fn insert_last(
        &mut self,
        path: &[Seg],
        item: impl Fn(&Doc, Option<&str>) -> String,
    ) -> anyhow::Result<()> {
        let node = self.node(path)?;
        let last = match &node.kind {
            Kind::Object(m) => m.last().map(|m| (m.key_start, m.value.end)),
            Kind::Array(e) => e.last().map(|e| (e.start, e.end)),
            Kind::Scalar => bail!("{path:?} holds no entries"),
        };
        let edit = match last {
            Some((first, end)) => {
                let indent = self.own_line_indent(first);
                let sep = match &indent {
                    Some(i) => format!(",{}{i}", self.nl),
                    None => ", ".into(),
                };
                TextEdit {
                    offset: end,
                    removed: String::new(),
                    inserted: format!("{sep}{}", item(self, indent.as_deref())),
                }
            }
            None => {
                // An empty `{}` / `[]`: filled on lines of its own where the
                // file is laid out on lines (a nested one: a line break
                // before it), else on one line.
                let interior = &self.text[node.start + 1..node.end - 1];
                let on_lines = if path.is_empty() {
                    self.text.contains('\n')
                } else {
                    self.text[..node.start].contains('\n')
                };
                let inserted = if on_lines {
                    let outer = self.line_indent(node.start);
                    let inner = format!("{outer}{}", self.unit);
                    let nl = self.nl;
                    format!("{nl}{inner}{}{nl}{outer}", item(self, Some(&inner)))
                } else {
                    item(self, None)
                };
                TextEdit {
                    offset: node.start + 1,
                    removed: interior.to_string(),
                    inserted,
                }
            }
        };
        self.apply(edit);
        Ok(())
    }

    /// Adds `"key": value` as the last member of the object at `path`.
    pub fn insert_member(&mut self, path: &[Seg], key: &str, value: &Value) -> anyhow::Result<()> {
        let key = Value::String(key.to_string()).to_string();
        self.insert_last(path, |d, indent| {
            format!("{key}: {}", d.render(value, indent))
        })
    }

    /// Adds `value` as the last element of the array at `path`.
    pub fn push_element(&mut self, path: &[Seg], value: &Value) -> anyhow::Result<()> {
        self.insert_last(path, |d, indent| d.render(value, indent))
    }

    /// Replaces the value at `path` (cairn's own entry) with `value`.
    pub fn replace(&mut self, path: &[Seg], value: &Value) -> anyhow::Result<()> {
        let node = self.node(path)?;
        let indent = self.own_line_indent(node.start).or_else(|| {
            // A member's value starts after its key: the key's line indent.
            self.text[..node.start]
                .contains('\n')
                .then(|| self.line_indent(node.start))
        });
        let edit = TextEdit {
            offset: node.start,
            removed: self.text[node.start..node.end].to_string(),
            inserted: self.render(value, indent.as_deref()),
        };
        self.apply(edit);
        Ok(())
    }

    /// Takes out the member or element at `path` with the separator that
    /// joined it to the others: the span [`Doc::insert_member`] and
    /// [`Doc::push_element`] add, so a removal after an insertion gives the
    /// text back as it was (an only entry leaves `{}` / `[]`).
    pub fn remove(&mut self, path: &[Seg]) -> anyhow::Result<()> {
        let Some((last, parent_path)) = path.split_last() else {
            bail!("the whole document cannot be removed");
        };
        let parent = self.node(parent_path)?;
        // Each entry as (where it starts, where it ends).
        let spans: Vec<(usize, usize)> = match (&parent.kind, last) {
            (Kind::Object(m), Seg::Key(_)) => {
                m.iter().map(|m| (m.key_start, m.value.end)).collect()
            }
            (Kind::Array(e), Seg::Index(_)) => e.iter().map(|e| (e.start, e.end)).collect(),
            _ => bail!("{path:?} is not an entry"),
        };
        let i = match (&parent.kind, last) {
            (Kind::Object(m), Seg::Key(k)) => m.iter().rposition(|m| &m.key == k),
            (_, Seg::Index(i)) => (*i < spans.len()).then_some(*i),
            _ => None,
        }
        .ok_or_else(|| anyhow!("no entry at {path:?}"))?;
        let (from, to) = if spans.len() == 1 {
            (parent.start + 1, parent.end - 1)
        } else if i > 0 {
            (spans[i - 1].1, spans[i].1)
        } else {
            (spans[0].0, spans[1].0)
        };
        let edit = TextEdit {
            offset: from,
            removed: self.text[from..to].to_string(),
            inserted: String::new(),
        };
        self.apply(edit);
        Ok(())
    }
}

/// serde_json's compact layout with a space after each `:` and `,`.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

/// The file's unit of indent: the leading whitespace of its first indented
/// line (two spaces when it has none).
fn indent_unit(text: &str) -> String {
    text.lines()
        .map(|l| {
            l.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .find(|lead| !lead.is_empty())
        .unwrap_or_else(|| "  ".into())
}

/// Finds where each value of a JSON text (already checked valid) lies.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self
            .s
            .get(self.i)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.s.get(self.i) == Some(&b)).then(|| self.i += 1)
    }

    fn string(&mut self) -> Option<(usize, usize)> {
        let start = self.i;
        self.eat(b'"')?;
        loop {
            match self.s.get(self.i)? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some((start, self.i));
                }
                _ => self.i += 1,
            }
        }
    }

    fn value(&mut self) -> Option<Node> {
        let start = self.i;
        match self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                loop {
                    self.ws();
                    if self.eat(b'}').is_some() {
                        break;
                    }
                    let (ks, ke) = self.string()?;
                    let key: String = serde_json::from_slice(&self.s[ks..ke]).unwrap_or_default();
                    self.ws();
                    self.eat(b':')?;
                    self.ws();
                    let value = self.value()?;
                    members.push(Member {
                        key,
                        key_start: ks,
                        value,
                    });
                    self.ws();
                    if self.eat(b',').is_none() {
                        self.ws();
                        self.eat(b'}')?;
                        break;
                    }
                }
                Some(Node {
                    start,
                    end: self.i,
                    kind: Kind::Object(members),
                })
            }
            b'[' => {
                self.i += 1;
                let mut elements = Vec::new();
                loop {
                    self.ws();
                    if self.eat(b']').is_some() {
                        break;
                    }
                    elements.push(self.value()?);
                    self.ws();
                    if self.eat(b',').is_none() {
                        self.ws();
                        self.eat(b']')?;
                        break;
                    }
                }
                Some(Node {
                    start,
                    end: self.i,
                    kind: Kind::Array(elements),
                })
            }
            b'"' => {
                let (s, e) = self.string()?;
                Some(Node {
                    start: s,
                    end: e,
                    kind: Kind::Scalar,
                })
            }
            _ => {
                while self.s.get(self.i).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.i += 1;
                }
                (self.i > start).then_some(Node {
                    start,
                    end: self.i,
                    kind: Kind::Scalar,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn revert_all(doc: &Doc) -> String {
        doc.edits
            .iter()
            .rev()
            .fold(doc.text.clone(), |t, e| e.revert(&t).unwrap())
    }

    #[test]
    fn an_inserted_member_is_one_span_in_the_files_own_layout() {
        let original = "{\r\n    \"a\": 1,  \r\n    \"b\": {\"x\": [1]}\r\n}";
        let mut doc = Doc::new(original.into(), "f").unwrap();
        doc.insert_member(&[], "cairn", &json!({"command": "cairn"}))
            .unwrap();
        assert_eq!(
            doc.text,
            "{\r\n    \"a\": 1,  \r\n    \"b\": {\"x\": [1]},\r\n    \"cairn\": {\r\n        \"command\": \"cairn\"\r\n    }\r\n}"
        );
        assert_eq!(revert_all(&doc), original);
        // Removing it by position gives the same bytes back.
        doc.remove(&["cairn".into()]).unwrap();
        assert_eq!(doc.text, original);
        // Into a compact object, compactly.
        let mut doc = Doc::new("{\"b\": {\"x\": 1}}".into(), "f").unwrap();
        doc.insert_member(&["b".into()], "k", &json!([1, 2]))
            .unwrap();
        assert_eq!(doc.text, "{\"b\": {\"x\": 1, \"k\": [1, 2]}}");
        doc.remove(&["b".into(), "k".into()]).unwrap();
        assert_eq!(doc.text, "{\"b\": {\"x\": 1}}");
    }

    #[test]
    fn empty_containers_and_blank_files_come_back_as_they_were() {
        for original in [
            "",
            "  \n",
            "{}",
            "{ }\n",
            "{\n  \"l\": [],\n  \"o\": {}\n}\n",
        ] {
            let mut doc = Doc::new(original.into(), "f").unwrap();
            doc.insert_member(&[], "cairn", &json!({"a": [1]})).unwrap();
            if original.contains("\"l\"") {
                doc.push_element(&["l".into()], &json!({"h": 1})).unwrap();
                doc.insert_member(&["o".into()], "k", &json!(2)).unwrap();
            }
            let v: Value = serde_json::from_str(&doc.text).unwrap();
            assert_eq!(v["cairn"], json!({"a": [1]}), "{}", doc.text);
            assert_eq!(revert_all(&doc), original);
        }
    }

    #[test]
    fn a_one_line_file_stays_on_one_line() {
        let original = "{\"hooks\": {}}\n";
        let mut doc = Doc::new(original.into(), "f").unwrap();
        doc.insert_member(&["hooks".into()], "Stop", &json!([{"a": 1}]))
            .unwrap();
        assert_eq!(doc.text, "{\"hooks\": {\"Stop\": [{\"a\": 1}]}}\n");
        assert_eq!(revert_all(&doc), original);
        // A file setup makes is laid out on lines.
        let mut doc = Doc::new(String::new(), "f").unwrap();
        doc.insert_member(&[], "k", &json!({"a": 1})).unwrap();
        assert_eq!(doc.text, "{\n  \"k\": {\n    \"a\": 1\n  }\n}\n");
    }

    #[test]
    fn removal_keeps_the_others_and_their_separators_valid() {
        let mut doc = Doc::new("[1, 2, 3]".into(), "f").unwrap_or_else(|_| Doc {
            text: "[1, 2, 3]".into(),
            edits: vec![],
            nl: "\n",
            unit: "  ".into(),
        });
        doc.remove(&[0.into()]).unwrap();
        assert_eq!(doc.text, "[2, 3]");
        doc.remove(&[1.into()]).unwrap();
        assert_eq!(doc.text, "[2]");
        doc.remove(&[0.into()]).unwrap();
        assert_eq!(doc.text, "[]");
        let mut doc = Doc::new("{\"a\": {\"k\": \"x\\\"}\"}, \"b\": 2}".into(), "f").unwrap();
        assert_eq!(doc.value(&["a".into(), "k".into()]), Some(json!("x\"}")));
        doc.replace(&["a".into()], &json!(1)).unwrap();
        assert_eq!(doc.text, "{\"a\": 1, \"b\": 2}");
        assert!(Doc::new("[]".into(), "f").is_err());
        assert!(Doc::new("{".into(), "f").is_err());
    }
}
