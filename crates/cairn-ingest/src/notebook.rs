//! Jupyter notebooks (`.ipynb`): a chunk per cell, the cell's number in the
//! breadcrumb (`analysis.ipynb > cell 3`, a markdown cell's own heading
//! after it: `analysis.ipynb > cell 1 > Loading the data`), its source as
//! the text; outputs (images, tables, tracebacks) and metadata are left out.
//! A code cell's definitions (in the notebook's language, Python unless its
//! metadata says otherwise) are its names, for the names retriever and the
//! graph. Each chunk's lines are those of its cell's `"source"` in the
//! file, so a hit points into the notebook as stored.

use cairn_core::{Chunk, Link, Relation};

use crate::code::{CodeDoc, chunk_code};
use crate::markdown::ChunkOptions;

/// File extensions of notebooks.
pub const NOTEBOOK_EXTENSIONS: [&str; 1] = ["ipynb"];

/// Whether a path is a notebook.
pub fn is_notebook(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("ipynb"))
}

/// One cell as read: its kind, its source and its lines in the file.
struct Cell {
    markdown: bool,
    source: String,
    start_line: u32,
    end_line: u32,
}

/// The notebook's cells and chunks; `None` when the text is no notebook
/// (not JSON, no `cells`), for the caller's line windows.
pub fn chunk_notebook(path: &str, text: &str, opts: &ChunkOptions) -> Option<CodeDoc> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    let cells = json.get("cells")?.as_array()?;
    let language = json
        .pointer("/metadata/kernelspec/language")
        .or_else(|| json.pointer("/metadata/language_info/name"))
        .and_then(|v| v.as_str())
        .unwrap_or("python")
        .to_ascii_lowercase();
    let ext = match language.as_str() {
        "python" => "py",
        "javascript" => "js",
        "typescript" => "ts",
        "rust" => "rs",
        "go" => "go",
        "ruby" => "rb",
        "lua" => "lua",
        "kotlin" => "kt",
        "swift" => "swift",
        "bash" | "sh" => "sh",
        "julia" => "jl",
        "r" => "r",
        "scala" => "scala",
        "haskell" => "hs",
        "elixir" => "ex",
        _ => "",
    };
    let spans = source_spans(text);
    let mut read = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let kind = cell.get("cell_type").and_then(|v| v.as_str()).unwrap_or("");
        if kind != "markdown" && kind != "code" {
            continue;
        }
        let source = match cell.get("source") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Array(parts)) => {
                parts.iter().filter_map(|p| p.as_str()).collect::<String>()
            }
            _ => continue,
        };
        // The cell's lines in the file; a notebook whose `"source"` keys
        // cannot be told apart from other text gives every cell line 1.
        let (start_line, end_line) = spans.get(i).copied().unwrap_or((1, 1));
        read.push((
            i + 1,
            Cell {
                markdown: kind == "markdown",
                source,
                start_line,
                end_line,
            },
        ));
    }
    let mut doc = CodeDoc {
        language: "notebook",
        ..CodeDoc::default()
    };
    for (number, cell) in read {
        if cell.source.trim().is_empty() {
            continue;
        }
        let label = format!("cell {number}");
        let mut crumb = vec![path.to_string(), label];
        if cell.markdown
            && let Some(heading) = cell
                .source
                .lines()
                .find(|l| l.trim_start().starts_with('#'))
                .map(|l| l.trim_start().trim_start_matches('#').trim().to_string())
            && !heading.is_empty()
        {
            crumb.push(heading);
        }
        let index = doc.chunks.len();
        // A cell longer than a chunk: its first `max_chars`, cut at a line;
        // the rest is still the cell's (its lines span it).
        let text = cut(&cell.source, opts.max_chars.max(1) * 4);
        doc.chunks.push(Chunk::new(
            path,
            crumb,
            2,
            cell.start_line,
            cell.end_line.max(cell.start_line),
            text,
        ));
        if !cell.markdown && !ext.is_empty() {
            // The cell's definitions and calls, read by its language's chunker.
            let code = chunk_code(&format!("cell.{ext}"), &cell.source, opts);
            let mut seen = std::collections::HashSet::new();
            for l in code.links {
                if matches!(
                    l.rel,
                    Relation::Defines | Relation::Calls | Relation::Imports
                ) && seen.insert((l.to.clone(), l.rel.clone()))
                {
                    doc.links.push(Link::from_chunk(index, l.to, l.rel));
                }
            }
            for (name, kind, _) in code.symbols {
                doc.symbols.push((name, kind, index));
            }
        }
    }
    Some(doc)
}

/// `text`'s first `max` bytes, cut at a line end (at a character boundary
/// when one line is longer).
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').map_or(end, |i| i + 1);
    text[..end].to_string()
}

/// The lines (1-based, inclusive) of each `"source"` value in the file, in
/// order: from the key's line to the line its value ends on. Strings are
/// skipped whole (escapes included), so a `"source"` inside a cell's text
/// is no key.
fn source_spans(text: &str) -> Vec<(u32, u32)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line: u32 = 1;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'"' => {
                let (end, lines) = skip_string(bytes, i);
                let key = &text[i..end.min(text.len())];
                let start_line = line;
                line += lines;
                i = end;
                if key == "\"source\"" {
                    // The value: after the colon, a string or an array.
                    let mut j = i;
                    while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\r' | b'\n' | b':')
                    {
                        if bytes[j] == b'\n' {
                            line += 1;
                        }
                        j += 1;
                    }
                    let (value_end, value_lines) = skip_value(bytes, j);
                    line += value_lines;
                    out.push((start_line, line));
                    i = value_end;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The end of the JSON string starting at `start` (its closing quote
/// included) and the newlines inside it (none in valid JSON, but a broken
/// file may have them).
fn skip_string(bytes: &[u8], start: usize) -> (usize, u32) {
    let mut i = start + 1;
    let mut lines = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'"' => return (i + 1, lines),
            b'\n' => lines += 1,
            _ => {}
        }
        i += 1;
    }
    (bytes.len(), lines)
}

/// The end of the JSON value (a string or an array of strings) at `start`
/// and the newlines in it.
fn skip_value(bytes: &[u8], start: usize) -> (usize, u32) {
    match bytes.get(start) {
        Some(b'"') => skip_string(bytes, start),
        Some(b'[') => {
            let mut i = start + 1;
            let mut lines = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        let (end, l) = skip_string(bytes, i);
                        lines += l;
                        i = end;
                        continue;
                    }
                    b'\n' => lines += 1,
                    b']' => return (i + 1, lines),
                    _ => {}
                }
                i += 1;
            }
            (bytes.len(), lines)
        }
        _ => (start, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NB: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Loading the data\n",
    "\n",
    "The ledger export is read with `load_ledger`, which parses the \"source\" column.\n"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "OUTPUT_ONLY_TOKEN 42 rows\n"
     ]
    }
   ],
   "source": [
    "import pandas as pd\n",
    "\n",
    "def load_ledger(path):\n",
    "    return pd.read_csv(path)\n"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "metadata": {},
   "outputs": [],
   "source": "frame = load_ledger('ledger.csv')"
  }
 ],
 "metadata": {
  "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    #[test]
    fn a_notebook_is_its_cells_without_their_outputs() {
        assert!(is_notebook("analysis/Ledger.ipynb"));
        let doc = chunk_notebook("Ledger.ipynb", NB, &ChunkOptions::default()).expect("a notebook");
        let crumbs: Vec<String> = doc.chunks.iter().map(|c| c.breadcrumb()).collect();
        assert_eq!(
            crumbs,
            [
                "Ledger.ipynb > cell 1 > Loading the data",
                "Ledger.ipynb > cell 2",
                "Ledger.ipynb > cell 3"
            ]
        );
        let lines: Vec<(u32, u32)> = doc
            .chunks
            .iter()
            .map(|c| (c.start_line, c.end_line))
            .collect();
        assert_eq!(lines, [(6, 10), (25, 30), (37, 37)]);
        assert!(doc.chunks[1].text.contains("def load_ledger(path):"));
        assert!(
            doc.chunks
                .iter()
                .all(|c| !c.text.contains("OUTPUT_ONLY_TOKEN")),
            "outputs are left out"
        );
        assert!(
            doc.links
                .iter()
                .any(|l| l.rel == Relation::Defines && l.to == "load_ledger"),
            "{:?}",
            doc.links
        );
        assert!(chunk_notebook("x.ipynb", "not json", &ChunkOptions::default()).is_none());
    }
}
