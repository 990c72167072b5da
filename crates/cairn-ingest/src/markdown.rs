//! Turning one markdown file into chunks: sections by heading, split at
//! paragraph boundaries, code blocks kept whole, tiny pieces merged.
//!
//! Everything works on line numbers of the original file. The text is scanned
//! once into a table of lines (byte span, running character count, blank and
//! code flags); pulldown-cmark finds the headings and code blocks; every later
//! step only moves line indexes around, and chunk text is sliced from the file
//! at the end.

use cairn_core::Chunk;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;

use crate::frontmatter::{Frontmatter, find_frontmatter};

/// How [`chunk_markdown`] sizes its chunks. Sizes are counted in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Largest chunk worth building (1500); a section up to this size is one
    /// chunk. A single paragraph line or code block bigger than this is still
    /// one chunk.
    pub max_chars: usize,
    /// Non-blank lines a later part of a split section repeats from the part
    /// before it (2).
    pub overlap_lines: usize,
    /// Chunks with fewer characters (ignoring surrounding whitespace) are
    /// merged into a neighbour (100).
    pub min_chars: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            max_chars: 1500,
            overlap_lines: 2,
            min_chars: 100,
        }
    }
}

/// A markdown file cut into chunks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MarkdownDoc {
    /// The file's frontmatter, if it has a valid one.
    pub frontmatter: Option<Frontmatter>,
    /// Why the frontmatter block could not be parsed, if it could not; its
    /// lines are left out of the chunks all the same.
    pub frontmatter_error: Option<String>,
    /// The chunks, in document order.
    pub chunks: Vec<Chunk>,
}

/// Cuts a markdown text into chunks.
///
/// `path` is stored in every chunk (and goes into its id). Frontmatter is
/// parsed and left out of the chunks. The rest is cut into one section per
/// heading (plus the text before the first heading), each section into parts of
/// at most `opts.max_chars` characters at paragraph boundaries, with a fenced
/// code block never split and kept with the paragraph before it; later parts
/// repeat `opts.overlap_lines` lines of the part before. Chunks smaller than
/// `opts.min_chars` are merged into the next chunk, or the previous one at the
/// end of the file. Every chunk is a contiguous range of lines, with line
/// numbers counted from the top of the file (frontmatter included), and its
/// text is exactly those lines joined with `\n`.
pub fn chunk_markdown(path: &str, text: &str, opts: &ChunkOptions) -> MarkdownDoc {
    chunk_as(path, text, opts, Syntax::Markdown)
}

/// Cuts a doc by the syntax its path and text show: `.rst`/`.rest` as
/// reStructuredText, `.txt` and extensionless docs (`README`, `NEWS`) as
/// reStructuredText when they read as it (Django's docs are `.txt`), else
/// as markdown, which cuts plain text at its paragraphs.
pub fn chunk_doc(path: &str, text: &str, opts: &ChunkOptions) -> MarkdownDoc {
    chunk_as(path, text, opts, Syntax::of(path, text))
}

/// Cuts a text into chunks by sections found elsewhere (a configuration
/// file's tables or keys: `crate::config`), the way docs are cut: one chunk
/// per section, split at blank lines when too long, small ones merged. Each
/// chunk's heading path starts with `path`, as code chunks' do.
pub(crate) fn chunk_sections(
    path: &str,
    text: &str,
    opts: &ChunkOptions,
    found: Vec<crate::config::Section>,
) -> Vec<Chunk> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc = Document::new(text);
    let headings: Vec<Heading> = found
        .into_iter()
        .filter(|(line, _, _)| *line < doc.lines.len())
        .map(|(line, level, text)| Heading {
            line,
            level: level.clamp(1, 5),
            text,
        })
        .collect();
    let (sections, spans) = doc.split(0, &headings, opts);
    let spans = merge_small(&doc, spans, opts.min_chars);
    spans
        .iter()
        .map(|span| {
            let section = &sections[span.section];
            let mut heading_path = vec![path.to_string()];
            heading_path.extend(section.heading_path.iter().cloned());
            Chunk::new(
                path,
                heading_path,
                section.level + 1,
                line_number(span.start),
                line_number(span.end),
                doc.text_of(span.start, span.end),
            )
        })
        .collect()
}

/// How a doc's sections and code blocks are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Syntax {
    Markdown,
    Rst,
    /// `= Title`, `== Section` (AsciiDoc).
    AsciiDoc,
    /// `* Heading`, `** Sub` (Org mode).
    Org,
    /// `.SH NAME`, `.SS Sub` (man pages: roff's man and mdoc macros).
    Man,
}

impl Syntax {
    fn of(path: &str, text: &str) -> Syntax {
        let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        let ext = name.rsplit_once('.').map(|(_, e)| e);
        match ext {
            Some("rst" | "rest") => Syntax::Rst,
            Some("md" | "markdown" | "mdx") => Syntax::Markdown,
            Some("adoc" | "asciidoc") => Syntax::AsciiDoc,
            Some("org") => Syntax::Org,
            Some("man") => Syntax::Man,
            Some(e) if e.len() == 1 && e.as_bytes()[0].is_ascii_digit() => Syntax::Man,
            _ if crate::rst::looks_like_rst(text) => Syntax::Rst,
            _ => Syntax::Markdown,
        }
    }
}

fn chunk_as(path: &str, text: &str, opts: &ChunkOptions, syntax: Syntax) -> MarkdownDoc {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // reStructuredText has no YAML frontmatter: a `---` first line is an
    // overline or a transition there.
    let block = match syntax {
        Syntax::Markdown => find_frontmatter(text),
        _ => None,
    };
    let (frontmatter, frontmatter_error, body_line, body_byte) = match block {
        None => (None, None, 0, 0),
        Some(block) => match block.parsed {
            Ok(fm) => (Some(fm), None, block.lines, block.end),
            Err(err) => {
                tracing::debug!(path, error = %err, "unparsable frontmatter");
                (None, Some(err), block.lines, block.end)
            }
        },
    };

    let mut doc = Document::new(text);
    let headings = doc.parse_as(syntax, body_byte, body_line);
    let (sections, spans) = doc.split(body_line, &headings, opts);
    let spans = merge_small(&doc, spans, opts.min_chars);

    let chunks = spans
        .iter()
        .map(|span| {
            let section = &sections[span.section];
            Chunk::new(
                path,
                section.heading_path.clone(),
                section.level,
                line_number(span.start),
                line_number(span.end),
                doc.text_of(span.start, span.end),
            )
        })
        .collect();

    MarkdownDoc {
        frontmatter,
        frontmatter_error,
        chunks,
    }
}

/// A heading of a markdown file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadingLine {
    /// 1-based line of the heading (its first line, for setext headings).
    pub line: u32,
    /// Level, 1..=6.
    pub level: u8,
    /// The heading's text, whitespace collapsed.
    pub text: String,
}

/// The headings of a doc in order, read by the syntax [`chunk_doc`] reads it
/// by, with its line numbering (frontmatter counted, heading marks inside code
/// blocks and frontmatter ignored). `expand` uses it to find the section
/// around a chunk.
pub fn doc_headings(path: &str, text: &str) -> Vec<HeadingLine> {
    let syntax = Syntax::of(path, text);
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let block = match syntax {
        Syntax::Markdown => find_frontmatter(text),
        _ => None,
    };
    let body_byte = block.as_ref().map_or(0, |block| block.end);
    let body_line = block.as_ref().map_or(0, |block| block.lines);
    let mut doc = Document::new(text);
    let found = doc.parse_as(syntax, body_byte, body_line);
    found
        .into_iter()
        .map(|h| HeadingLine {
            line: line_number(h.line),
            level: h.level,
            text: h.text,
        })
        .collect()
}

/// 1-based line number of a 0-based line index.
fn line_number(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

const BLANK: u8 = 1;
const CODE: u8 = 2;

/// One line of the file.
struct Line {
    /// Byte offset of the line's first byte.
    start: usize,
    /// Byte offset just past its content, before `\n` or `\r\n`.
    end: usize,
    /// Characters in all earlier lines, counting one per line break.
    chars_before: usize,
    /// `chars_before` plus the characters of this line's content.
    chars_end: usize,
    /// `BLANK` and `CODE` flags.
    flags: u8,
}

/// The file as a table of lines, plus its code blocks.
struct Document<'a> {
    text: &'a str,
    lines: Vec<Line>,
    /// Inclusive line ranges of code blocks, in document order.
    code: Vec<(usize, usize)>,
}

/// A heading as found in the file.
struct Heading {
    line: usize,
    level: u8,
    text: String,
}

/// A section's breadcrumb.
struct Section {
    heading_path: Vec<String>,
    level: u8,
}

/// A chunk to be: inclusive 0-based line range and its section.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: usize,
    end: usize,
    section: usize,
}

/// A paragraph (or a line, when splitting an oversized paragraph) with the
/// code blocks glued to it: inclusive line range whose ends are not blank.
#[derive(Clone, Copy)]
struct Unit {
    start: usize,
    end: usize,
}

impl<'a> Document<'a> {
    fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut lines = Vec::with_capacity(bytes.len() / 40 + 1);
        let mut pos = 0;
        let mut chars = 0;
        while pos < bytes.len() {
            let (end, next) = match text[pos..].find('\n') {
                Some(i) => {
                    let nl = pos + i;
                    let end = if nl > pos && bytes[nl - 1] == b'\r' {
                        nl - 1
                    } else {
                        nl
                    };
                    (end, nl + 1)
                }
                None => (bytes.len(), bytes.len()),
            };
            let content = &text[pos..end];
            let blank = content.trim().is_empty();
            let len = content.chars().count();
            lines.push(Line {
                start: pos,
                end,
                chars_before: chars,
                chars_end: chars + len,
                flags: if blank { BLANK } else { 0 },
            });
            chars += len + 1;
            pos = next;
        }
        Document {
            text,
            lines,
            code: Vec::new(),
        }
    }

    fn content(&self, i: usize) -> &'a str {
        &self.text[self.lines[i].start..self.lines[i].end]
    }

    fn is_blank(&self, i: usize) -> bool {
        self.lines[i].flags & BLANK != 0
    }

    fn in_code(&self, i: usize) -> bool {
        self.lines[i].flags & CODE != 0
    }

    /// The line holding byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.lines
            .partition_point(|l| l.start <= offset)
            .saturating_sub(1)
    }

    /// Characters in lines `a..=b` joined with `\n`.
    fn chars(&self, a: usize, b: usize) -> usize {
        self.lines[b].chars_end - self.lines[a].chars_before
    }

    /// Like [`Self::chars`], without the whitespace that starts line `a` and ends line `b`.
    fn trimmed_chars(&self, a: usize, b: usize) -> usize {
        let lead = self
            .content(a)
            .chars()
            .take_while(|c| c.is_whitespace())
            .count();
        let trail = self
            .content(b)
            .chars()
            .rev()
            .take_while(|c| c.is_whitespace())
            .count();
        self.chars(a, b).saturating_sub(lead + trail)
    }

    /// Lines `a..=b` joined with `\n`.
    fn text_of(&self, a: usize, b: usize) -> String {
        let slice = &self.text[self.lines[a].start..self.lines[b].end];
        if !slice.contains('\r') {
            return slice.to_string();
        }
        // CRLF line endings: drop the `\r` of each line break.
        let mut out = String::with_capacity(slice.len());
        for i in a..=b {
            if i > a {
                out.push('\n');
            }
            out.push_str(self.content(i));
        }
        out
    }

    /// The last line of the code block containing line `i`, if any.
    fn code_block_end(&self, i: usize) -> Option<usize> {
        if !self.in_code(i) {
            return None;
        }
        let k = self.code.partition_point(|&(_, end)| end < i);
        self.code.get(k).map(|&(_, end)| end)
    }

    /// Finds the top-level headings and all code blocks of the text from byte
    /// `body_byte` on, and flags the code lines.
    fn parse_body(&mut self, body_byte: usize) -> Vec<Heading> {
        let mut headings = Vec::new();
        let body = &self.text[body_byte..];
        let options = Options::ENABLE_TABLES
            | Options::ENABLE_FOOTNOTES
            | Options::ENABLE_STRIKETHROUGH
            | Options::ENABLE_TASKLISTS;
        let mut depth = 0usize;
        let mut current: Option<Heading> = None;
        for (event, range) in Parser::new_ext(body, options).into_offset_iter() {
            match event {
                Event::Start(tag) => {
                    match tag {
                        Tag::Heading { level, .. } if depth == 0 => {
                            current = Some(Heading {
                                line: self.line_of(body_byte + range.start),
                                level: level as u8,
                                text: String::new(),
                            });
                        }
                        Tag::CodeBlock(_) if range.end > range.start => {
                            let first = self.line_of(body_byte + range.start);
                            let mut last = self.line_of(body_byte + range.end - 1);
                            while last > first && self.is_blank(last) {
                                last -= 1;
                            }
                            self.code.push((first, last));
                        }
                        _ => {}
                    }
                    depth += 1;
                }
                Event::End(tag) => {
                    depth = depth.saturating_sub(1);
                    if depth == 0
                        && matches!(tag, TagEnd::Heading(_))
                        && let Some(mut heading) = current.take()
                    {
                        heading.text = collapse_whitespace(&heading.text);
                        headings.push(heading);
                    }
                }
                Event::Text(t) | Event::Code(t) => {
                    if let Some(heading) = current.as_mut() {
                        heading.text.push_str(&t);
                    }
                }
                Event::SoftBreak | Event::HardBreak => {
                    if let Some(heading) = current.as_mut() {
                        heading.text.push(' ');
                    }
                }
                _ => {}
            }
        }
        self.flag_code();
        headings
    }

    /// Flags the lines of [`Self::code`]'s blocks as code.
    fn flag_code(&mut self) {
        for &(first, last) in &self.code {
            for line in &mut self.lines[first..=last] {
                line.flags |= CODE;
            }
        }
    }

    /// The headings of the body by `syntax` (and its code lines flagged).
    fn parse_as(&mut self, syntax: Syntax, body_byte: usize, body_line: usize) -> Vec<Heading> {
        match syntax {
            Syntax::Markdown => self.parse_body(body_byte),
            Syntax::Rst => self.parse_rst(body_line),
            Syntax::AsciiDoc | Syntax::Org | Syntax::Man => self.parse_marked(syntax),
        }
    }

    /// Headings written as marks at a line's start (AsciiDoc's `=`, Org's
    /// `*`, roff's `.SH`/`.SS`), outside their literal blocks (AsciiDoc's
    /// `----`/`....` delimited blocks, Org's `#+BEGIN_…`/`#+END_…`, roff's
    /// `.nf`/`.fi` and `.EX`/`.EE`), which are flagged as code.
    fn parse_marked(&mut self, syntax: Syntax) -> Vec<Heading> {
        let mut headings = Vec::new();
        let mut open: Option<usize> = None;
        for i in 0..self.lines.len() {
            let line = self.content(i);
            let t = line.trim_end();
            let lower = t.to_ascii_lowercase();
            let (opens, closes) = match syntax {
                Syntax::AsciiDoc => {
                    let delim = t.len() >= 4
                        && (t.bytes().all(|b| b == b'-') || t.bytes().all(|b| b == b'.'));
                    (delim, delim)
                }
                Syntax::Org => (lower.starts_with("#+begin_"), lower.starts_with("#+end_")),
                _ => (
                    t == ".nf"
                        || t == ".EX"
                        || t == ".Bd -literal"
                        || t.starts_with(".Bd -literal "),
                    t == ".fi" || t == ".EE" || t == ".Ed",
                ),
            };
            if let Some(start) = open {
                if closes {
                    self.code.push((start, i));
                    open = None;
                }
                continue;
            }
            if opens {
                open = Some(i);
                continue;
            }
            let heading = match syntax {
                Syntax::AsciiDoc => {
                    let marks = t.bytes().take_while(|&b| b == b'=').count();
                    (marks >= 1 && t.as_bytes().get(marks) == Some(&b' '))
                        .then(|| (marks, t[marks..].trim()))
                }
                Syntax::Org => {
                    let marks = t.bytes().take_while(|&b| b == b'*').count();
                    (marks >= 1 && t.as_bytes().get(marks) == Some(&b' '))
                        .then(|| (marks, t[marks..].trim()))
                }
                _ => {
                    let head = t.get(..4);
                    match head {
                        Some(".SH " | ".Sh ") => Some((1, t[4..].trim())),
                        Some(".SS " | ".Ss ") => Some((2, t[4..].trim())),
                        _ => None,
                    }
                }
            };
            if let Some((level, text)) = heading {
                let text = text.trim_matches('"').trim();
                if !text.is_empty() {
                    headings.push(Heading {
                        line: i,
                        level: u8::try_from(level.min(6)).unwrap_or(6),
                        text: collapse_whitespace(text),
                    });
                }
            }
        }
        self.flag_code();
        headings
    }

    /// Finds the section titles and literal blocks of a reStructuredText
    /// body (from line `body_line` on) and flags the code lines.
    fn parse_rst(&mut self, body_line: usize) -> Vec<Heading> {
        let lines: Vec<&str> = (body_line..self.lines.len())
            .map(|i| self.content(i))
            .collect();
        let found = crate::rst::parse(&lines);
        self.code = found
            .code
            .iter()
            .map(|&(a, b)| (a + body_line, b + body_line))
            .collect();
        self.flag_code();
        found
            .headings
            .into_iter()
            .map(|h| Heading {
                line: h.line + body_line,
                level: h.level,
                text: h.text,
            })
            .collect()
    }

    /// Cuts the body (from line `body_line` on) into one section per heading
    /// and each section into parts of at most `max_chars` characters.
    fn split(
        &self,
        body_line: usize,
        headings: &[Heading],
        opts: &ChunkOptions,
    ) -> (Vec<Section>, Vec<Span>) {
        let n = self.lines.len();
        let mut sections = Vec::with_capacity(headings.len() + 1);
        let mut spans = Vec::new();

        sections.push(Section {
            heading_path: Vec::new(),
            level: 0,
        });
        let first_heading = headings.first().map_or(n, |h| h.line);
        self.split_section(body_line, first_heading, 0, opts, &mut spans);

        let mut stack: Vec<(u8, &str)> = Vec::new();
        for (k, heading) in headings.iter().enumerate() {
            while stack
                .last()
                .is_some_and(|&(level, _)| level >= heading.level)
            {
                stack.pop();
            }
            stack.push((heading.level, &heading.text));
            sections.push(Section {
                heading_path: stack.iter().map(|&(_, t)| t.to_string()).collect(),
                level: heading.level,
            });
            let end = headings.get(k + 1).map_or(n, |next| next.line);
            self.split_section(heading.line, end, sections.len() - 1, opts, &mut spans);
        }
        (sections, spans)
    }

    /// Cuts the lines `start..end` of section number `section` into parts.
    fn split_section(
        &self,
        start: usize,
        end: usize,
        section: usize,
        opts: &ChunkOptions,
        spans: &mut Vec<Span>,
    ) {
        let end = end.min(self.lines.len());
        let Some(first) = (start..end).find(|&i| !self.is_blank(i)) else {
            return;
        };
        let last = (first..end)
            .rev()
            .find(|&i| !self.is_blank(i))
            .unwrap_or(first);

        let mut packer = Packer {
            doc: self,
            max_chars: opts.max_chars,
            overlap_lines: opts.overlap_lines,
            section,
            first_span: spans.len(),
            spans,
            current: None,
        };
        let mut i = first;
        while i <= last {
            if self.is_blank(i) {
                i += 1;
                continue;
            }
            let paragraph = self.unit_at(i, last, true);
            if self.chars(paragraph.start, paragraph.end) <= opts.max_chars {
                packer.push(paragraph);
            } else {
                // Too big for one part: on its own, cut between lines, each
                // code block staying with the line before it.
                packer.flush();
                let mut j = paragraph.start;
                while j <= paragraph.end {
                    if self.is_blank(j) {
                        j += 1;
                        continue;
                    }
                    let piece = self.unit_at(j, paragraph.end, false);
                    packer.push(piece);
                    j = piece.end + 1;
                }
                packer.flush();
            }
            i = paragraph.end + 1;
        }
        packer.flush();
    }

    /// The unit starting at non-blank line `i`, ending by `last`: the
    /// paragraph (or, unless `paragraph`, just the line) at `i`, with any code
    /// block that follows it glued on, even across blank lines. A code block
    /// is always taken whole.
    fn unit_at(&self, i: usize, last: usize, paragraph: bool) -> Unit {
        let mut end = i;
        let mut j = i;
        loop {
            while j <= last {
                if let Some(block_end) = self.code_block_end(j) {
                    end = block_end;
                    j = block_end + 1;
                } else if !self.is_blank(j) && (paragraph || j == i) {
                    end = j;
                    j += 1;
                } else {
                    break;
                }
            }
            let mut k = j;
            while k <= last && self.is_blank(k) && !self.in_code(k) {
                k += 1;
            }
            if k <= last && self.in_code(k) {
                j = k;
            } else {
                return Unit { start: i, end };
            }
        }
    }

    /// Where a part whose first unit starts at line `start` begins once it
    /// repeats up to `count` non-blank lines of the previous part (which
    /// began at `prev_start`). The overlap stops at a code block.
    fn overlap_start(&self, start: usize, prev_start: usize, count: usize) -> usize {
        let mut begin = start;
        let mut taken = 0;
        let mut j = start;
        while taken < count && j > prev_start + 1 {
            j -= 1;
            if self.in_code(j) {
                break;
            }
            if !self.is_blank(j) {
                begin = j;
                taken += 1;
            }
        }
        begin
    }
}

/// Greedily fills the parts of one section with units.
struct Packer<'d, 'a> {
    doc: &'d Document<'a>,
    max_chars: usize,
    overlap_lines: usize,
    section: usize,
    /// Index in `spans` of this section's first part.
    first_span: usize,
    spans: &'d mut Vec<Span>,
    current: Option<Span>,
}

impl Packer<'_, '_> {
    /// Adds `unit` to the current part if it still fits, else starts a new
    /// part with it (which overlaps the part before).
    fn push(&mut self, unit: Unit) {
        if let Some(current) = &mut self.current
            && self.doc.chars(current.start, unit.end) <= self.max_chars
        {
            current.end = unit.end;
            return;
        }
        self.flush();
        let start = match self.spans[self.first_span..].last() {
            Some(prev) => self
                .doc
                .overlap_start(unit.start, prev.start, self.overlap_lines),
            None => unit.start,
        };
        self.current = Some(Span {
            start,
            end: unit.end,
            section: self.section,
        });
    }

    fn flush(&mut self) {
        if let Some(span) = self.current.take() {
            self.spans.push(span);
        }
    }
}

/// Merges spans smaller than `min_chars` into the next span (which takes
/// their start) or, for the last one, into the previous span (which takes its
/// end). A lone small span stays.
fn merge_small(doc: &Document<'_>, spans: Vec<Span>, min_chars: usize) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    let mut pending: Option<usize> = None;
    let count = spans.len();
    for (k, span) in spans.into_iter().enumerate() {
        let start = pending.map_or(span.start, |p| p.min(span.start));
        let small = doc.trimmed_chars(start, span.end) < min_chars;
        let is_last = k + 1 == count;
        if small && !is_last {
            pending = Some(start);
            continue;
        }
        pending = None;
        if small && let Some(prev) = out.last_mut() {
            prev.end = prev.end.max(span.end);
            continue;
        }
        out.push(Span { start, ..span });
    }
    out
}

pub(crate) fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asciidoc_org_and_man_pages_are_cut_by_their_headings() {
        // Issue 63 (3): docs in every format, sections by their headings.
        let crumbs = |path: &str, text: &str| -> Vec<String> {
            chunk_doc(path, text, &NO_MERGE)
                .chunks
                .iter()
                .map(|c| c.heading_path.join(" > "))
                .collect()
        };
        let adoc = "= Guide\n\nIntro.\n\n== Install\n\nRun it.\n\n----\n== not a heading\n----\n\n=== Extras\n\nMore.\n";
        assert_eq!(
            crumbs("docs/guide.adoc", adoc),
            ["Guide", "Guide > Install", "Guide > Install > Extras"]
        );
        let org = "* Tasks\nSome.\n** Release\n#+BEGIN_SRC sh\n* not a heading\n#+END_SRC\n* Notes\nOther.\n";
        assert_eq!(
            crumbs("notes.org", org),
            ["Tasks", "Tasks > Release", "Notes"]
        );
        let man = ".TH CAIRN 1\n.SH NAME\ncairn \\- memory for agents\n.SH OPTIONS\n.SS \"Search options\"\n.nf\n.SH not a heading\n.fi\n--limit N\n";
        assert_eq!(
            crumbs("man/cairn.1", man),
            ["", "NAME", "OPTIONS", "OPTIONS > Search options"]
        );
    }

    /// No merging of small chunks, so each section shows up on its own.
    const NO_MERGE: ChunkOptions = ChunkOptions {
        max_chars: 1500,
        overlap_lines: 2,
        min_chars: 0,
    };

    /// Chunks `text` and checks that each chunk's text is its line range.
    fn chunks(text: &str, opts: &ChunkOptions) -> Vec<Chunk> {
        let doc = chunk_markdown("doc.md", text, opts);
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let lines: Vec<&str> = text.lines().collect();
        for c in &doc.chunks {
            assert!(1 <= c.start_line && c.start_line <= c.end_line, "{c:?}");
            let range = c.start_line as usize - 1..c.end_line as usize;
            assert_eq!(c.text, lines[range].join("\n"), "{c:?}");
            assert_eq!(
                c,
                &Chunk::new(
                    "doc.md",
                    c.heading_path.clone(),
                    c.level,
                    c.start_line,
                    c.end_line,
                    c.text.clone()
                )
            );
        }
        doc.chunks
    }

    fn ranges(chunks: &[Chunk]) -> Vec<(u32, u32)> {
        chunks.iter().map(|c| (c.start_line, c.end_line)).collect()
    }

    fn breadcrumbs(chunks: &[Chunk]) -> Vec<String> {
        chunks.iter().map(Chunk::breadcrumb).collect()
    }

    /// A paragraph of `n` lines of about 60 characters, tagged with `tag`.
    fn paragraph(tag: &str, n: usize) -> String {
        (0..n)
            .map(|i| format!("{tag} line {i:02} lorem ipsum dolor sit amet consectetur adipiscing"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn nested_headings_give_breadcrumbs() {
        let text = "\
# Architecture

Overview.

## Caching

Why we cache.

### Redis `setup`

Install *redis* and run it.

#### Tuning

Memory limits.

## Storage

SQLite.

# Operations

Runbooks.
";
        let c = chunks(text, &NO_MERGE);
        assert_eq!(
            breadcrumbs(&c),
            [
                "Architecture",
                "Architecture > Caching",
                "Architecture > Caching > Redis setup",
                "Architecture > Caching > Redis setup > Tuning",
                "Architecture > Storage",
                "Operations",
            ]
        );
        assert_eq!(
            c.iter().map(|c| c.level).collect::<Vec<_>>(),
            [1, 2, 3, 4, 2, 1]
        );
        assert_eq!(
            ranges(&c),
            [(1, 3), (5, 7), (9, 11), (13, 15), (17, 19), (21, 23)]
        );
        assert_eq!(
            c[2].text,
            "### Redis `setup`\n\nInstall *redis* and run it."
        );
    }

    #[test]
    fn setext_headings_and_skipped_levels() {
        let text = "Title\n=====\n\nintro\n\n### Deep\n\ndeep text\n\nSub\n---\n\nsub text\n";
        let c = chunks(text, &NO_MERGE);
        assert_eq!(breadcrumbs(&c), ["Title", "Title > Deep", "Title > Sub"]);
        assert_eq!(ranges(&c), [(1, 4), (6, 8), (10, 13)]);
        assert_eq!(c[2].level, 2);
    }

    #[test]
    fn text_before_the_first_heading_is_a_preamble() {
        let text = "\n\nSome intro text.\nMore intro.\n\n# First\n\nBody.\n";
        let c = chunks(text, &NO_MERGE);
        assert_eq!(ranges(&c), [(3, 4), (6, 8)]);
        assert!(c[0].heading_path.is_empty());
        assert_eq!(c[0].level, 0);
        assert_eq!(c[0].text, "Some intro text.\nMore intro.");
        assert_eq!(breadcrumbs(&c[1..]), ["First"]);
    }

    #[test]
    fn code_fence_is_whole_and_kept_with_its_paragraph() {
        let fence = "```sh\n# not a heading\n\nredis-server --port 6379\n\n# still not\n```";
        let text = format!(
            "# Setup\n\n{}\n\nRun this:\n\n{fence}\n\n{}\n",
            paragraph("first", 3),
            paragraph("after", 3)
        );
        let opts = ChunkOptions {
            max_chars: 250,
            overlap_lines: 2,
            min_chars: 0,
        };
        let c = chunks(&text, &opts);
        assert!(c.len() >= 3, "{c:#?}");
        for chunk in &c {
            assert_eq!(
                chunk.heading_path,
                ["Setup"],
                "`#` in a fence is no heading"
            );
        }
        let with_fence: Vec<&Chunk> = c.iter().filter(|c| c.text.contains("```sh")).collect();
        assert_eq!(with_fence.len(), 1, "{c:#?}");
        let part = with_fence[0];
        assert!(
            part.text.contains(&format!("Run this:\n\n{fence}")),
            "{part:?}"
        );
        // It starts with two lines of overlap from the part before.
        assert!(part.text.starts_with("first line 01"), "{part:?}");
        // The part after the fence repeats nothing from inside it.
        let next = &c[c.iter().position(|x| std::ptr::eq(x, part)).unwrap() + 1];
        assert!(next.start_line > part.end_line, "{next:?}");
        assert!(next.text.starts_with("after line 00"));
    }

    #[test]
    fn big_section_is_split_with_overlap() {
        let text = format!(
            "# Big\n\n{}\n\n{}\n\n{}\n",
            paragraph("alpha", 10),
            paragraph("beta", 10),
            paragraph("gamma", 10)
        );
        let opts = ChunkOptions {
            max_chars: 1500,
            overlap_lines: 2,
            min_chars: 100,
        };
        let c = chunks(&text, &opts);
        // Lines: 1 heading, 3-12 alpha, 14-23 beta, 25-34 gamma; each paragraph ~690 chars.
        assert_eq!(ranges(&c), [(1, 23), (22, 34)]);
        assert!(c.iter().all(|c| c.heading_path == ["Big"] && c.level == 1));
        for line in ["beta line 08", "beta line 09"] {
            assert!(
                c[0].text.contains(line) && c[1].text.contains(line),
                "{line}"
            );
        }
        assert!(c[1].text.starts_with("beta line 08"));
        assert!(c.iter().all(|c| c.text.chars().count() <= opts.max_chars));
    }

    #[test]
    fn overlap_skips_blank_lines_and_stops_at_code() {
        let text = format!(
            "{}\n\n{}\n\n```\ncode\n```\n\n{}\n",
            paragraph("a", 3),
            paragraph("b", 1),
            paragraph("c", 3)
        );
        let opts = ChunkOptions {
            max_chars: 200,
            overlap_lines: 2,
            min_chars: 0,
        };
        let c = chunks(&text, &opts);
        // a: 1-3, b: 5, code 7-9 glued to b, c: 11-13.
        assert_eq!(ranges(&c), [(1, 3), (2, 9), (11, 13)]);
    }

    #[test]
    fn oversized_paragraph_is_split_between_lines() {
        let text = format!("# Long\n{}\n", paragraph("x", 30));
        let c = chunks(&text, &ChunkOptions::default());
        assert!(c.len() >= 2, "{c:#?}");
        for pair in c.windows(2) {
            assert_eq!(
                pair[1].start_line + 1,
                pair[0].end_line,
                "two lines of overlap"
            );
        }
        assert_eq!(c.last().unwrap().end_line, 31);
        assert!(c.iter().all(|c| c.text.chars().count() <= 1500));
    }

    #[test]
    fn oversized_line_and_code_block_stay_whole() {
        let long_line = "word ".repeat(400);
        let code: String = (0..40)
            .map(|i| format!("let x{i} = {i}; // some code here, long enough\n"))
            .collect();
        let text = format!("# A\n\n{long_line}\n\n# B\n\n```rust\n{code}```\n");
        let c = chunks(&text, &ChunkOptions::default());
        // The heading-only part of A merges forward into the long line.
        assert_eq!(ranges(&c), [(1, 3), (5, 48)]);
        assert!(c.iter().all(|c| c.text.chars().count() > 1500));
    }

    #[test]
    fn tiny_chunks_merge_forward() {
        let body = paragraph("body", 3);
        let text = format!("# Title\n\n## Sub\n\n{body}\n");
        let c = chunks(&text, &ChunkOptions::default());
        assert_eq!(ranges(&c), [(1, 7)]);
        assert_eq!(c[0].heading_path, ["Title", "Sub"]);
        assert_eq!(c[0].level, 2);
        assert!(c[0].text.starts_with("# Title\n\n## Sub"));
    }

    #[test]
    fn tiny_chunks_at_the_end_merge_backward() {
        let text = format!(
            "# Main\n\n{}\n\n## See also\n\nlinks\n",
            paragraph("main", 3)
        );
        let c = chunks(&text, &ChunkOptions::default());
        assert_eq!(ranges(&c), [(1, 9)]);
        assert_eq!(c[0].heading_path, ["Main"]);
    }

    #[test]
    fn small_chunks_add_up_before_merging() {
        let text = "# A\n\n## B\n\nshort\n\n## C\n\nalso short\n";
        let c = chunks(text, &ChunkOptions::default());
        assert_eq!(ranges(&c), [(1, 9)], "{c:#?}");
        assert_eq!(c[0].breadcrumb(), "A > C");
        let opts = ChunkOptions {
            min_chars: 10,
            ..ChunkOptions::default()
        };
        let c = chunks(text, &opts);
        assert_eq!(ranges(&c), [(1, 5), (7, 9)]);
        assert_eq!(breadcrumbs(&c), ["A > B", "A > C"]);
    }

    #[test]
    fn a_lone_tiny_chunk_is_kept() {
        let c = chunks("# Hi\n", &ChunkOptions::default());
        assert_eq!(ranges(&c), [(1, 1)]);
        assert_eq!(c[0].heading_path, ["Hi"]);
    }

    #[test]
    fn frontmatter_is_parsed_and_left_out() {
        let text = "---\ntitle: Notes\ntags: [a, b]\n---\n\n# Heading\n\nText.\n";
        let doc = chunk_markdown("n.md", text, &NO_MERGE);
        let fm = doc.frontmatter.unwrap();
        assert_eq!(fm.title.as_deref(), Some("Notes"));
        assert_eq!(fm.tags, ["a", "b"]);
        assert_eq!(doc.frontmatter_error, None);
        assert_eq!(ranges(&doc.chunks), [(6, 8)]);
        assert_eq!(doc.chunks[0].text, "# Heading\n\nText.");

        let text = "---\ntags: x, y\n---\nPreamble right away.\n";
        let doc = chunk_markdown("n.md", text, &ChunkOptions::default());
        assert_eq!(doc.frontmatter.unwrap().tags, ["x", "y"]);
        assert_eq!(ranges(&doc.chunks), [(4, 4)]);
        assert!(!doc.chunks[0].text.contains("tags"));
    }

    #[test]
    fn frontmatter_setext_lookalike_is_not_a_heading() {
        // Without frontmatter handling, `title: x` + `---` would be a setext heading.
        let text = "---\ntitle: x\n---\nbody\n";
        let c = chunks(text, &NO_MERGE);
        assert_eq!(ranges(&c), [(4, 4)]);
        assert!(c[0].heading_path.is_empty());
    }

    #[test]
    fn invalid_frontmatter_is_reported_and_still_left_out() {
        let text = "---\ntitle: [oops\n---\n# H\n\nbody\n";
        let doc = chunk_markdown("bad.md", text, &NO_MERGE);
        assert!(doc.frontmatter.is_none());
        assert!(doc.frontmatter_error.is_some());
        assert_eq!(ranges(&doc.chunks), [(4, 6)]);
    }

    #[test]
    fn crlf_lines() {
        let text = "---\r\ntitle: T\r\n---\r\n# One\r\n\r\nfirst\r\n\r\n## Two\r\nsecond\r\n";
        let doc = chunk_markdown("crlf.md", text, &NO_MERGE);
        assert_eq!(doc.frontmatter.unwrap().title.as_deref(), Some("T"));
        let c = chunks(text, &NO_MERGE);
        assert_eq!(ranges(&c), [(4, 6), (8, 9)]);
        assert_eq!(c[0].text, "# One\n\nfirst");
        assert_eq!(c[1].text, "## Two\nsecond");
        assert_eq!(breadcrumbs(&c), ["One", "One > Two"]);
    }

    #[test]
    fn a_document_without_headings_is_one_chunk() {
        let text = format!("{}\n\n{}\n", paragraph("p", 2), paragraph("q", 2));
        let c = chunks(&text, &ChunkOptions::default());
        assert_eq!(ranges(&c), [(1, 5)]);
        assert_eq!(c[0].level, 0);
        assert!(c[0].heading_path.is_empty());
    }

    #[test]
    fn empty_documents_have_no_chunks() {
        for text in ["", "\n\n", "   \n\t\n", "---\ntitle: x\n---\n", "\u{feff}"] {
            assert!(
                chunks(text, &ChunkOptions::default()).is_empty(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn headings_in_block_quotes_and_lists_do_not_cut_sections() {
        let text = "# Top\n\n> # quoted\n\n- # listed\n\nend\n";
        let c = chunks(text, &NO_MERGE);
        assert_eq!(ranges(&c), [(1, 7)]);
    }

    #[test]
    fn bom_is_not_part_of_the_text() {
        let c = chunks("\u{feff}# T\n\nbody\n", &NO_MERGE);
        assert_eq!(c[0].text, "# T\n\nbody");
    }

    #[test]
    fn large_file_chunks_fast() {
        let mut text = String::new();
        let mut k = 0;
        while text.len() < 90_000 {
            k += 1;
            text.push_str(&format!("## Section {k}\n\n{}\n\n", paragraph("p", 5)));
            text.push_str(&format!(
                "```\n# code {k}\n\nx = {k}\n```\n\n{}\n\n",
                paragraph("q", 12)
            ));
        }
        let start = std::time::Instant::now();
        let doc = chunk_markdown("big.md", &text, &ChunkOptions::default());
        let took = start.elapsed();
        assert!(doc.chunks.len() > 50);
        // Generous bound: debug build on a slow shared machine.
        assert!(took < std::time::Duration::from_millis(200), "{took:?}");
    }
}
