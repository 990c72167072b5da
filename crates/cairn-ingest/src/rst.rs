//! reStructuredText read as structure: its section titles (underlined, or
//! over- and underlined, levels in the order the styles first appear) and
//! its literal blocks (after `::`, and the bodies of `code-block`-like
//! directives), so the markdown chunker can cut it by sections; and the code
//! its Sphinx roles and autodoc directives name (`:func:`x.y``,
//! `.. autoclass:: pkg.Cls`), for the graph.
//!
//! Written here rather than taken from a crate: no maintained Rust crate
//! parses reStructuredText with line positions, and sections, literal blocks
//! and roles are all Cairn reads of it.

use std::sync::OnceLock;

use regex::Regex;

/// A section title: 0-based line where it starts (its overline, if any),
/// level from 1 and its text.
pub(crate) struct RstHeading {
    pub line: usize,
    pub level: u8,
    pub text: String,
}

/// What [`parse`] finds in a reStructuredText file's lines.
pub(crate) struct RstStructure {
    /// Section titles in document order.
    pub headings: Vec<RstHeading>,
    /// Inclusive 0-based line ranges of literal blocks, in order.
    pub code: Vec<(usize, usize)>,
}

/// Whether `line` is a section adornment: one punctuation character repeated
/// (at least three times; docutils asks for the title's length, a shorter
/// one only earns a warning there).
fn adornment(line: &str) -> Option<char> {
    let line = line.trim_end();
    let mut chars = line.chars();
    let c = chars.next()?;
    if !c.is_ascii_punctuation() || line.len() < 3 {
        return None;
    }
    chars.all(|x| x == c).then_some(c)
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Directives whose body is code, not prose.
const CODE_DIRECTIVES: [&str; 9] = [
    "code-block",
    "code",
    "sourcecode",
    "doctest",
    "testcode",
    "testoutput",
    "ipython",
    "highlight-block",
    "parsed-literal",
];

/// Whether line `i` opens a literal block: a paragraph line ending in `::`
/// (not a directive's own `..` line, unless it is a code directive) or a
/// code directive.
fn opens_literal(line: &str) -> bool {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("..") {
        let rest = rest.trim_start();
        return CODE_DIRECTIVES
            .iter()
            .any(|d| rest.strip_prefix(d).is_some_and(|r| r.starts_with("::")));
    }
    t.ends_with("::") && adornment(t).is_none()
}

/// Sections and literal blocks of the lines of a reStructuredText file.
pub(crate) fn parse(lines: &[&str]) -> RstStructure {
    let n = lines.len();
    let mut headings = Vec::new();
    let mut code = Vec::new();
    // Adornment styles in the order they first appear: (char, overlined).
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut i = 0;
    while i < n {
        let line = lines[i];
        if opens_literal(line) {
            let base = indent(line);
            // The block: the indented lines after it (directive options and
            // blank lines included), up to the first line indented no deeper
            // than the opener.
            let mut j = i + 1;
            let mut last = None;
            while j < n && (blank(lines[j]) || indent(lines[j]) > base) {
                if !blank(lines[j]) {
                    last = Some(j);
                }
                j += 1;
            }
            if let Some(last) = last {
                code.push((i + 1, last));
                i = last + 1;
                continue;
            }
            i += 1;
            continue;
        }
        let prev_blank = i == 0 || blank(lines[i - 1]);
        // Overlined title: adornment, title, the same adornment.
        if prev_blank
            && let Some(c) = adornment(line)
            && i + 2 < n
            && !blank(lines[i + 1])
            && adornment(lines[i + 1]).is_none()
            && adornment(lines[i + 2]) == Some(c)
        {
            let level = level_of(&mut styles, (c, true));
            headings.push(RstHeading {
                line: i,
                level,
                text: crate::markdown::collapse_whitespace(lines[i + 1]),
            });
            i += 3;
            continue;
        }
        // Underlined title: an unindented line, then its adornment at least
        // as long as the title (or three characters for a short one).
        if prev_blank
            && !blank(line)
            && indent(line) == 0
            && adornment(line).is_none()
            && i + 1 < n
            && let Some(c) = adornment(lines[i + 1])
            && lines[i + 1].trim_end().chars().count() >= line.trim_end().chars().count().min(4)
            && (i + 2 >= n || blank(lines[i + 2]) || adornment(lines[i + 2]).is_none())
        {
            let level = level_of(&mut styles, (c, false));
            headings.push(RstHeading {
                line: i,
                level,
                text: crate::markdown::collapse_whitespace(line),
            });
            i += 2;
            continue;
        }
        i += 1;
    }
    RstStructure { headings, code }
}

/// The level of a title style, 1 for the first style seen; the chunker's
/// levels stop at 6, like markdown's.
fn level_of(styles: &mut Vec<(char, bool)>, style: (char, bool)) -> u8 {
    let k = match styles.iter().position(|&s| s == style) {
        Some(k) => k,
        None => {
            styles.push(style);
            styles.len() - 1
        }
    };
    u8::try_from(k + 1).unwrap_or(6).min(6)
}

/// Whether a text file reads as reStructuredText: it has a section title
/// underlined the reStructuredText way that markdown would not take (`~`,
/// `^`, `*`, `#`, `+` or an overline), a directive, or a Sphinx role. Plain
/// `.txt` docs (Django's, many Python projects') are often reStructuredText.
pub(crate) fn looks_like_rst(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?m)^\.\. [a-z][a-z0-9_:-]*::|:(?:py:)?(?:func|class|meth|mod|attr|exc|data|obj|doc|ref):`|^[^\s].*\r?\n(?:~{4,}|\^{4,}|\*{4,}|#{4,}|\+{4,}|={4,}|-{4,})[ \t]*\r?$",
        )
        .expect("valid regex")
    });
    re.is_match(text)
}

/// The names of code a reStructuredText text documents: Sphinx roles
/// (`:func:`pkg.configure``, `:class:`~pkg.Logger``, `:meth:`Logger.bind``;
/// MyST markdown's `{func}`pkg.configure`` too),
/// autodoc and domain directives (`.. autoclass:: pkg.Logger`,
/// `.. function:: configure(**kw)`). Each dotted name gives its last part (the
/// definition's own name) and, for `Class.method`, the class too.
pub(crate) fn code_names(text: &str) -> Vec<String> {
    static ROLE: OnceLock<Regex> = OnceLock::new();
    static DIRECTIVE: OnceLock<Regex> = OnceLock::new();
    let role = ROLE.get_or_init(|| {
        Regex::new(
            r"[:{](?:py:)?(?:func|class|meth|attr|exc|data|obj|const|method|function)[a-z]*[:}]`(?:[^`<]*<)?[~!.]?([A-Za-z_][A-Za-z0-9_.]*)",
        )
        .expect("valid regex")
    });
    let directive = DIRECTIVE.get_or_init(|| {
        Regex::new(
            r"(?m)^\s*\.\. (?:py:)?(?:auto)?(?:class|function|method|exception|attribute|data|decorator|classmethod|staticmethod|property)::\s+([A-Za-z_][A-Za-z0-9_.]*)",
        )
        .expect("valid regex")
    });
    let mut out = Vec::new();
    for cap in role
        .captures_iter(text)
        .chain(directive.captures_iter(text))
    {
        let parts: Vec<&str> = cap[1].split('.').filter(|p| !p.is_empty()).collect();
        if let Some(last) = parts.last() {
            out.push((*last).to_string());
        }
        // `Class.method`: a capitalised part just before the last names its class.
        if parts.len() >= 2 {
            let owner = parts[parts.len() - 2];
            if owner.starts_with(|c: char| c.is_ascii_uppercase()) {
                out.push(owner.to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The documents a text's `:doc:` roles name, as written (`install`,
/// `../api`, `/tutorial`), without the `.rst` a reader adds.
pub(crate) fn doc_targets(text: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE
        .get_or_init(|| Regex::new(r"[:{]doc[:}]`(?:[^`<]*<)?([^`>\s]+)>?`").expect("valid regex"));
    re.captures_iter(text).map(|c| c[1].to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<&str> {
        text.lines().collect()
    }

    #[test]
    fn titles_take_levels_in_the_order_their_styles_appear() {
        let text = "=========\nStructlog\n=========\n\nIntro.\n\nInstall\n-------\n\nRun pip.\n\n\
                    Extras\n~~~~~~\n\nMore.\n\nUsage\n-----\n\nCall it.\n";
        let s = parse(&lines(text));
        let got: Vec<(usize, u8, &str)> = s
            .headings
            .iter()
            .map(|h| (h.line, h.level, h.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (0, 1, "Structlog"),
                (6, 2, "Install"),
                (11, 3, "Extras"),
                (16, 2, "Usage")
            ]
        );
    }

    #[test]
    fn literal_blocks_are_code_and_hold_no_titles() {
        let text = "Example::\n\n    x = 1\n    # comment\n    ----\n\nAfter.\n\n\
                    .. code-block:: python\n   :linenos:\n\n   def f():\n       return 1\n\nText\n====\n";
        let s = parse(&lines(text));
        assert_eq!(s.code, [(1, 4), (9, 12)]);
        let titles: Vec<&str> = s.headings.iter().map(|h| h.text.as_str()).collect();
        assert_eq!(titles, ["Text"]);
    }

    #[test]
    fn a_transition_or_a_table_border_is_not_a_title() {
        let text = "Para one.\n\n----------\n\nPara two.\n\n=====  =====\nA      B\n=====  =====\n";
        let s = parse(&lines(text));
        assert!(
            s.headings.is_empty(),
            "{:?}",
            s.headings.iter().map(|h| &h.text).collect::<Vec<_>>()
        );
    }

    #[test]
    fn roles_and_autodoc_name_the_code() {
        let text = "Call :func:`structlog.configure` or :meth:`~structlog.BoundLogger.bind`; \
                    see :class:`the logger <structlog.stdlib.BoundLogger>`.\n\n\
                    .. autoclass:: structlog.processors.JSONRenderer\n   :members:\n\n\
                    .. function:: wrap_logger(logger, **kw)\n\nRead :doc:`getting-started`; \
                    in MyST {py:func}`structlog.get_logger`.";
        let names = code_names(text);
        for want in [
            "configure",
            "bind",
            "BoundLogger",
            "JSONRenderer",
            "wrap_logger",
            "get_logger",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
        assert!(!names.iter().any(|n| n == "structlog"), "{names:?}");
        assert_eq!(doc_targets(text), ["getting-started"]);
    }

    #[test]
    fn rst_is_told_from_plain_text() {
        assert!(looks_like_rst("Title\n~~~~~\n\nBody.\n"));
        assert!(looks_like_rst("See :func:`x`.\n"));
        assert!(looks_like_rst(".. note::\n\n   Careful.\n"));
        assert!(!looks_like_rst(
            "Just some notes.\n\nAnother paragraph - with a dash.\n"
        ));
    }
}
