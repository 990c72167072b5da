//! The text the lexical index sees: runs of Chinese, Japanese and Korean
//! characters cut into overlapping character bigrams, everything else as it
//! is.
//!
//! FTS5's `unicode61` tokenizer makes one token of a run of letters, and
//! CJK writing puts no spaces between words, so a whole Chinese sentence
//! was one token and a query matched only an identical sentence. Both the
//! index (`cairn-store`'s FTS table, `cairn-postgres`' postings) and the
//! query (`cairn-search`'s `query_terms`) go through [`crate::fts_text`], so they
//! split alike: `東京都庁` → `東京 京都 都庁`. The chunk text itself is
//! stored and shown unchanged; only the tokenizer's input differs.
//!
//! **Why bigrams and not a dictionary segmenter.** Overlapping bigrams need
//! no dictionary, work the same for Chinese, Japanese (kanji and kana mixed)
//! and Korean, never drop an unknown word (names, product terms, new
//! coinages, which a dictionary splits into single characters), and match a
//! query word wherever it is a substring of the text — the usual CJK
//! baseline of Lucene's `CJKBigramFilter` and of Elasticsearch's `cjk`
//! analyzer. A dictionary segmenter (`jieba-rs`: Chinese only, a 5 MB
//! dictionary compiled in; `lindera`: Japanese or Korean per dictionary,
//! tens of MB and minutes of build on this project's 2-core hosts) would
//! give fewer, more precise tokens in one language and would put that
//! weight in `cairn-core`, which every crate builds on; the query and the
//! text are segmented alike either way, so a later switch is one function.
//! The cost of bigrams: about one token per CJK character (the index of CJK
//! text grows accordingly), and a one-character query word matches only
//! where that character stands alone (between punctuation or other
//! scripts), not inside a longer run.
//!
//! **Other scripts are untouched**: text with no CJK character is returned
//! borrowed, byte for byte, so English indexes and rankings are what they
//! were.

use std::borrow::Cow;

/// Whether `c` is written without spaces between words: Han ideographs
/// (with the iteration marks `々`, `〆`, `〇`), Hiragana, Katakana (with the
/// prolonged sound mark `ー`, half-width forms included), Bopomofo and
/// Hangul. Punctuation (`、`, `。`, `・`, full-width forms) is not: the
/// tokenizer already splits at it.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF      // Hangul Jamo
        | 0x3005..=0x3007    // 々 〆 〇
        | 0x3041..=0x309F    // Hiragana
        | 0x30A1..=0x30FA    // Katakana (less ゠ and ・)
        | 0x30FC..=0x30FF    // ー ヽ ヾ ヿ
        | 0x3105..=0x312F    // Bopomofo
        | 0x3131..=0x318E    // Hangul compatibility Jamo
        | 0x31A0..=0x31BF    // Bopomofo extended
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xA960..=0xA97F    // Hangul Jamo extended A
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xD7B0..=0xD7FF    // Hangul Jamo extended B
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0xFFA0..=0xFFDC    // half-width Hangul
        | 0x1B000..=0x1B16F  // Kana supplement and extended
        | 0x20000..=0x3134F  // CJK extensions B–H and compatibility supplement
    )
}

/// `text` as the lexical index and the query tokenizer take it: each run of
/// [`is_cjk`] characters replaced by its overlapping bigrams separated by
/// spaces (a run of one character stays one token), with a space on either
/// side; every other character as it is. Text with no CJK character comes
/// back borrowed and byte-identical. A raw FTS5 expression goes through
/// this alone; indexed text and natural-language queries through
/// [`crate::fts_text`], which also adds the words of camelCase names.
pub fn cjk_bigrams(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(is_cjk) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() * 2 + 8);
    out.push_str(&text[..first]);
    let mut run: Vec<char> = Vec::new();
    for c in text[first..].chars() {
        if is_cjk(c) {
            run.push(c);
            continue;
        }
        push_run(&mut out, &run);
        run.clear();
        out.push(c);
    }
    push_run(&mut out, &run);
    Cow::Owned(out)
}

/// Appends the bigrams of one CJK run, spaced off from what is around it.
fn push_run(out: &mut String, run: &[char]) {
    match run {
        [] => {}
        [one] => {
            out.push(' ');
            out.push(*one);
            out.push(' ');
        }
        _ => {
            for pair in run.windows(2) {
                out.push(' ');
                out.push(pair[0]);
                out.push(pair[1]);
            }
            out.push(' ');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_without_cjk_is_borrowed_unchanged() {
        for t in [
            "",
            "Caching > Redis: the cache caches; Café! naïve — ÀÉÎ, ß, Ωμέγα, Москва",
            "fn main() { println!(\"{}\", 1); }\n\t",
            "：ＡＢＣ１２３、。・「」",
        ] {
            assert!(matches!(cjk_bigrams(t), Cow::Borrowed(b) if b == t), "{t}");
        }
    }

    #[test]
    fn cjk_runs_become_overlapping_bigrams() {
        assert_eq!(cjk_bigrams("東京都庁"), " 東京 京都 都庁 ");
        assert_eq!(
            cjk_bigrams("用Rust写的检索器"),
            " 用 Rust 写的 的检 检索 索器 "
        );
        assert_eq!(
            cjk_bigrams("設定を変更する。"),
            " 設定 定を を変 変更 更す する 。"
        );
        assert_eq!(cjk_bigrams("한국어 검색"), " 한국 국어   검색 ");
        assert_eq!(cjk_bigrams("猫"), " 猫 ");
        assert_eq!(
            cjk_bigrams("コーヒー・ブレイク"),
            " コー ーヒ ヒー ・ ブレ レイ イク "
        );
    }

    #[test]
    fn a_bigram_is_its_own_segmentation() {
        // What the query sends is a bigram; splitting it again changes nothing.
        for t in ["東京", "검색", "する"] {
            assert_eq!(cjk_bigrams(t).trim(), t);
        }
    }

    proptest::proptest! {
        #[test]
        fn only_spaces_are_added(s in "\\PC{0,40}") {
            let out = cjk_bigrams(&s);
            let kept: String = out.chars().filter(|c| !is_cjk(*c) && *c != ' ').collect();
            let want: String = s.chars().filter(|c| !is_cjk(*c) && *c != ' ').collect();
            proptest::prop_assert_eq!(kept, want);
            if !s.chars().any(is_cjk) {
                proptest::prop_assert_eq!(out.as_ref(), s.as_str());
            }
        }
    }
}
