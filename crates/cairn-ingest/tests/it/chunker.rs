//! Property tests of the markdown chunker over generated documents.

use cairn_ingest::{ChunkOptions, chunk_markdown};
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "alpha", "beta", "cache", "redis", "index", "query", "vector", "chunk", "token", "search",
    "lorem", "ipsum", "dolor", "sit", "amet", "über", "naïve", "日本",
];

const CODE_LINES: &[&str] = &[
    "# not a heading",
    "",
    "",
    "## nor this",
    "let x = 1;",
    "    indented",
    "---",
    "fn main() {}",
    "- item",
    "> quote",
];

#[derive(Clone, Debug)]
enum Block {
    Heading(usize, String),
    Paragraph(Vec<String>),
    Code(Vec<String>),
}

fn line() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..24).prop_map(|w| w.join(" "))
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        3 => (1usize..=6, line()).prop_map(|(level, text)| Block::Heading(level, text)),
        4 => prop::collection::vec(line(), 1..8).prop_map(Block::Paragraph),
        // Long enough to force a split.
        1 => prop::collection::vec(line(), 15..45).prop_map(Block::Paragraph),
        2 => prop::collection::vec(prop::sample::select(CODE_LINES), 0..14)
            .prop_map(|lines| Block::Code(lines.into_iter().map(String::from).collect())),
    ]
}

/// A generated document and what the generator knows about it.
#[derive(Debug)]
struct Generated {
    text: String,
    /// Lines of frontmatter, fences included (0 for none).
    frontmatter_lines: usize,
    /// 1-based inclusive line ranges of the fenced code blocks, fences included.
    fences: Vec<(usize, usize)>,
}

fn document() -> impl Strategy<Value = Generated> {
    (
        any::<bool>(),
        prop::collection::vec((0usize..3, block()), 0..30),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(frontmatter, blocks, crlf, trailing_newline)| {
            let mut lines: Vec<String> = Vec::new();
            if frontmatter {
                lines.extend(["---", "title: Generated", "tags: [a, b]", "---"].map(String::from));
            }
            let frontmatter_lines = lines.len();
            let mut fences = Vec::new();
            for (blanks, block) in blocks {
                lines.extend(std::iter::repeat_n(String::new(), blanks));
                match block {
                    Block::Heading(level, text) => {
                        lines.push(format!("{} {text}", "#".repeat(level)))
                    }
                    Block::Paragraph(para) => lines.extend(para),
                    Block::Code(code) => {
                        let first = lines.len() + 1;
                        lines.push("```text".into());
                        lines.extend(code);
                        lines.push("```".into());
                        fences.push((first, lines.len()));
                    }
                }
            }
            let mut text = lines.join(if crlf { "\r\n" } else { "\n" });
            if trailing_newline && !text.is_empty() {
                text.push_str(if crlf { "\r\n" } else { "\n" });
            }
            Generated {
                text,
                frontmatter_lines,
                fences,
            }
        })
}

fn options() -> impl Strategy<Value = ChunkOptions> {
    prop_oneof![
        Just(ChunkOptions::default()),
        (50usize..2000, 0usize..4, 0usize..300).prop_map(
            |(max_chars, overlap_lines, min_chars)| {
                ChunkOptions {
                    max_chars,
                    overlap_lines,
                    min_chars,
                }
            }
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn chunks_cover_the_body_and_respect_structure(doc in document(), opts in options()) {
        let out = chunk_markdown("gen.md", &doc.text, &opts);
        let lines: Vec<&str> = doc.text.lines().collect();
        let chunks = &out.chunks;
        prop_assert_eq!(out.frontmatter.is_some(), doc.frontmatter_lines > 0);

        // (2) every chunk is a valid line range and its text is exactly those lines.
        for c in chunks {
            let (start, end) = (c.start_line as usize, c.end_line as usize);
            prop_assert!(1 <= start && start <= end && end <= lines.len(), "{:?}", c);
            prop_assert_eq!(&c.text, &lines[start - 1..end].join("\n"));
            prop_assert_eq!(c.level == 0, c.heading_path.is_empty());
        }

        // (1) every non-blank body line is in some chunk; starts never go back.
        for pair in chunks.windows(2) {
            prop_assert!(pair[0].start_line <= pair[1].start_line, "{:?}", pair);
        }
        let mut covered = vec![false; lines.len() + 1];
        for c in chunks {
            for flag in &mut covered[c.start_line as usize..=c.end_line as usize] {
                *flag = true;
            }
        }
        for (i, line) in lines.iter().enumerate().skip(doc.frontmatter_lines) {
            prop_assert!(line.trim().is_empty() || covered[i + 1], "line {} not covered: {:?}", i + 1, line);
        }

        // (3) a fenced block is wholly inside a chunk or wholly outside it.
        for &(a, b) in &doc.fences {
            for c in chunks {
                let (start, end) = (c.start_line as usize, c.end_line as usize);
                let whole = start <= a && b <= end;
                let apart = end < a || b < start;
                prop_assert!(whole || apart, "chunk {}-{} cuts fence {}-{}", start, end, a, b);
            }
        }

        // (4) no chunk starts inside the frontmatter.
        for c in chunks {
            prop_assert!(c.start_line as usize > doc.frontmatter_lines, "{:?}", c);
        }

        // Small chunks were merged away, unless one is all there is.
        if chunks.len() > 1 {
            for c in chunks {
                prop_assert!(c.text.trim().chars().count() >= opts.min_chars, "{:?}", c);
            }
        }
    }
}

/// Text made of the characters markdown cares about, in any order.
fn soup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(
        &[
            "#", "# ", "```", "~~~", "---", "...", "===", "    ", "\t", "> ", "- ", "1. ", "|",
            "`", "*", "[x](y)", "<!--", "-->", "word", "é", "\u{3000}", "\u{feff}", "\n", "\n",
            "\n", "\r\n", "\r",
        ][..],
    );
    prop::collection::vec(pieces, 0..200).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_gives_valid_chunks(text in soup(), opts in options()) {
        let out = chunk_markdown("soup.md", &text, &opts);
        let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let lines: Vec<&str> = body.lines().collect();
        let mut last_start = 0;
        for c in &out.chunks {
            let (start, end) = (c.start_line as usize, c.end_line as usize);
            prop_assert!(1 <= start && start <= end && end <= lines.len(), "{:?}", c);
            prop_assert!(start >= last_start, "{:?}", c);
            last_start = start;
            prop_assert_eq!(&c.text, &lines[start - 1..end].join("\n"));
            prop_assert!(!lines[start - 1].trim().is_empty() && !lines[end - 1].trim().is_empty());
        }
    }
}
