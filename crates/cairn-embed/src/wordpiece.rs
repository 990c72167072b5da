//! BERT's WordPiece tokenizer, our own: the ids the `tokenizers` crate
//! gives for a BERT-shaped `tokenizer.json`, from a file read in about a
//! millisecond.
//!
//! Why our own: a one-shot `cairn search` needs one query's ids, and the
//! crate's tokenizer cost it 9–11 ms to build (Xeon, AMX) of a 33 ms
//! search: the 30,522-word vocabulary parsed into a map of owned strings,
//! cloned again into the reverse map, and freed at exit (issue 65). Here
//! the words are copied into one buffer as the JSON is read, and found
//! through an open-addressing table of their offsets; nothing is allocated
//! per word. Tokenizing takes no alignment bookkeeping either, so it is
//! faster on the index's texts as well.
//!
//! Only the shape every BERT model Cairn ships has is read this way: a
//! `BertNormalizer`, the `BertPreTokenizer`, a WordPiece model, a
//! `[CLS] $A [SEP]` post-processor and added tokens matched as written
//! (not normalized, neither single-word nor stripped). Any other file is
//! the crate's ([`read`] answers `None`). The steps are the crate's, in
//! its order, on the same Unicode tables (`unicode_categories`,
//! `unicode-normalization-alignments`, the crates it uses):
//! `same_ids_as_the_crate_on_tricky_and_random_text` compares the two on
//! a small vocabulary, `tests/tokenizer.rs` on MiniLM's and real text.

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use unicode_categories::UnicodeCategories;
use unicode_normalization_alignments::UnicodeNormalization;

/// A WordPiece vocabulary: every word in one buffer, found by a table of
/// indexes into `entries` (open addressing, linear probing).
struct Vocab {
    text: String,
    /// (start, length in `text`, id) of each word.
    entries: Vec<(u32, u32, u32)>,
    /// Indexes into `entries`; `EMPTY` where none.
    slots: Vec<u32>,
}

const EMPTY: u32 = u32::MAX;

/// FNV-1a over the bytes of `a` then `b`: the words are short, and this
/// hashes a `##` prefix and a piece of a word without joining them.
fn hash(a: &[u8], b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in a.iter().chain(b) {
        h ^= u64::from(x);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Vocab {
    /// The table over `entries`; a word listed twice keeps its last id,
    /// as a map read from the same JSON would.
    fn new(text: String, mut entries: Vec<(u32, u32, u32)>) -> Vocab {
        let size = (entries.len() * 2).next_power_of_two().max(16);
        let mut slots = vec![EMPTY; size];
        let mut kept = 0;
        for i in 0..entries.len() {
            let (start, len, id) = entries[i];
            let word = &text.as_bytes()[start as usize..(start + len) as usize];
            let mut at = hash(word, b"") as usize & (size - 1);
            loop {
                match slots[at] {
                    EMPTY => {
                        entries[kept] = entries[i];
                        slots[at] = kept as u32;
                        kept += 1;
                        break;
                    }
                    e => {
                        let (s, l, _) = entries[e as usize];
                        if &text.as_bytes()[s as usize..(s + l) as usize] == word {
                            entries[e as usize].2 = id;
                            break;
                        }
                    }
                }
                at = (at + 1) & (size - 1);
            }
        }
        entries.truncate(kept);
        Vocab {
            text,
            entries,
            slots,
        }
    }

    /// The id of `prefix` followed by `word`.
    fn get(&self, prefix: &str, word: &str) -> Option<u32> {
        let (p, w) = (prefix.as_bytes(), word.as_bytes());
        let mask = self.slots.len() - 1;
        let mut at = hash(p, w) as usize & mask;
        loop {
            let e = self.slots[at];
            if e == EMPTY {
                return None;
            }
            let (s, l, id) = self.entries[e as usize];
            let known = &self.text.as_bytes()[s as usize..(s + l) as usize];
            if known.len() == p.len() + w.len() && known.starts_with(p) && known.ends_with(w) {
                return Some(id);
            }
            at = (at + 1) & mask;
        }
    }
}

impl<'de> Deserialize<'de> for Vocab {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Vocab, D::Error> {
        d.deserialize_map(VocabVisitor)
    }
}

struct VocabVisitor;

impl<'de> Visitor<'de> for VocabVisitor {
    type Value = Vocab;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a map of words to ids")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vocab, A::Error> {
        let mut text = String::with_capacity(1 << 18);
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(32_768));
        loop {
            let start = text.len();
            if map.next_key_seed(KeyInto(&mut text))?.is_none() {
                break;
            }
            let id: u32 = map.next_value()?;
            let (Ok(start), Ok(len)) = (u32::try_from(start), u32::try_from(text.len() - start))
            else {
                return Err(de::Error::custom("vocabulary over 4 GB"));
            };
            entries.push((start, len, id));
        }
        Ok(Vocab::new(text, entries))
    }
}

/// A map key appended to the vocabulary's buffer, never allocated alone.
struct KeyInto<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for KeyInto<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyInto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a word")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.push_str(v);
        Ok(())
    }
}

/// The fields of a tokenizer file; any other makes [`read`] decline.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: String,
    // Truncation and padding are the loader's; the decoder is not used.
    #[serde(default)]
    #[allow(dead_code)]
    truncation: IgnoredAny,
    #[serde(default)]
    #[allow(dead_code)]
    padding: IgnoredAny,
    #[serde(default)]
    #[allow(dead_code)]
    decoder: IgnoredAny,
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    normalizer: Option<serde_json::Value>,
    pre_tokenizer: Option<serde_json::Value>,
    post_processor: Option<serde_json::Value>,
    model: Model,
}

#[derive(Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default = "yes")]
    normalized: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    vocab: Vocab,
}

/// A BERT WordPiece tokenizer (see the module's text).
pub(crate) struct BertWordPiece {
    vocab: Vocab,
    unk: u32,
    prefix: String,
    max_chars: usize,
    cls: u32,
    sep: u32,
    /// Added tokens, found in the text as written: (content, id).
    added: Vec<(String, u32)>,
    clean_text: bool,
    chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
    /// Ids kept, special tokens included (the crate's truncation).
    max_tokens: usize,
}

/// The tokenizer of a BERT-shaped `tokenizer.json`'s bytes, truncating at
/// `max_tokens`, or `None` for a file of any other shape.
pub(crate) fn read(bytes: &[u8], max_tokens: usize) -> Option<BertWordPiece> {
    let file: File = serde_json::from_slice(bytes).ok()?;
    if file.version != "1.0" || file.model.kind != "WordPiece" {
        return None;
    }
    let norm = file.normalizer?;
    let flag = |name: &str| norm.get(name).and_then(serde_json::Value::as_bool);
    if norm.get("type")?.as_str()? != "BertNormalizer" || norm.as_object()?.len() != 5 {
        return None;
    }
    let lowercase = flag("lowercase")?;
    let strip_accents = match norm.get("strip_accents")? {
        serde_json::Value::Null => lowercase,
        v => v.as_bool()?,
    };
    if file.pre_tokenizer? != serde_json::json!({"type": "BertPreTokenizer"}) {
        return None;
    }
    let vocab = file.model.vocab;
    let ((cls, cls_id), (sep, sep_id)) = cls_and_sep(&file.post_processor?)?;
    let (cls, sep) = (vocab.get("", &cls)?, vocab.get("", &sep)?);
    if (u64::from(cls), u64::from(sep)) != (cls_id, sep_id) {
        return None;
    }
    let mut added = Vec::new();
    for t in file.added_tokens {
        // A token the crate would match otherwise, or give another id.
        if t.normalized || t.single_word || t.lstrip || t.rstrip || t.content.is_empty() {
            return None;
        }
        if vocab.get("", &t.content) != Some(t.id) {
            return None;
        }
        added.push((t.content, t.id));
    }
    Some(BertWordPiece {
        unk: vocab.get("", &file.model.unk_token)?,
        vocab,
        prefix: file.model.continuing_subword_prefix,
        max_chars: file.model.max_input_chars_per_word,
        cls,
        sep,
        added,
        clean_text: flag("clean_text")?,
        chinese_chars: flag("handle_chinese_chars")?,
        strip_accents,
        lowercase,
        max_tokens,
    })
}

/// The tokens around a single sequence, with the ids the file gives
/// them: `[CLS] $A [SEP]` as a template (one id each) or as
/// `BertProcessing`; anything else is not BERT's.
fn cls_and_sep(post: &serde_json::Value) -> Option<((String, u64), (String, u64))> {
    let named =
        |v: &serde_json::Value| Some((v.get(0)?.as_str()?.to_string(), v.get(1)?.as_u64()?));
    match post.get("type")?.as_str()? {
        "BertProcessing" => Some((named(post.get("cls")?)?, named(post.get("sep")?)?)),
        "TemplateProcessing" => {
            let single = post.get("single")?.as_array()?;
            let [first, middle, last] = single.as_slice() else {
                return None;
            };
            let special = |v: &serde_json::Value| -> Option<(String, u64)> {
                let name = v.get("SpecialToken")?.get("id")?.as_str()?;
                // The special token must stand for exactly itself.
                let entry = post.get("special_tokens")?.get(name)?;
                let [id] = entry.get("ids")?.as_array()?.as_slice() else {
                    return None;
                };
                let [token] = entry.get("tokens")?.as_array()?.as_slice() else {
                    return None;
                };
                (token.as_str()? == name).then_some((name.to_string(), id.as_u64()?))
            };
            if middle.get("Sequence")?.get("id")?.as_str()? != "A" {
                return None;
            }
            Some((special(first)?, special(last)?))
        }
        _ => None,
    }
}

/// BERT's whitespace: `\t`, `\n`, `\r` and Unicode's.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// BERT's control characters: Unicode's Cc, Cf and Co but the three above.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// The CJK ideograph blocks BERT puts spaces around.
fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

fn is_bert_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

impl BertWordPiece {
    /// The ids of `text`, with `[CLS]` and `[SEP]` around them when
    /// `specials`, cut to the tokenizer's `max_tokens`.
    pub(crate) fn ids(&self, text: &str, specials: bool) -> Vec<u32> {
        let limit = if specials {
            self.max_tokens.saturating_sub(2)
        } else {
            self.max_tokens
        };
        let mut ids = Vec::new();
        if specials {
            ids.push(self.cls);
        }
        let limit = limit.saturating_add(ids.len());
        let mut normal = String::new();
        let mut rest = text;
        while ids.len() < limit && !rest.is_empty() {
            let (before, token, after) = self.next_added(rest);
            self.normalize(before, &mut normal);
            self.words(&normal, &mut ids, limit);
            if let Some(id) = token {
                ids.push(id);
            }
            rest = after;
        }
        ids.truncate(limit);
        if specials {
            ids.push(self.sep);
        }
        ids
    }

    /// The id of a token of the vocabulary.
    pub(crate) fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.get("", token)
    }

    /// `text` cut at the first added token: the text before it, its id
    /// (the longest of those that start there), the text after it.
    fn next_added<'t>(&self, text: &'t str) -> (&'t str, Option<u32>, &'t str) {
        let bytes = text.as_bytes();
        for (at, &b) in bytes.iter().enumerate() {
            let mut best: Option<(usize, u32)> = None;
            for (content, id) in &self.added {
                if content.as_bytes()[0] == b
                    && bytes[at..].starts_with(content.as_bytes())
                    && best.is_none_or(|(len, _)| content.len() > len)
                {
                    best = Some((content.len(), *id));
                }
            }
            if let Some((len, id)) = best {
                return (&text[..at], Some(id), &text[at + len..]);
            }
        }
        (text, None, "")
    }

    /// BERT's normalizer, in its order: drop control characters and make
    /// all whitespace a space, space out CJK ideographs, strip accents
    /// (NFD without the nonspacing marks), lowercase char by char.
    fn normalize(&self, text: &str, out: &mut String) {
        out.clear();
        if text.is_ascii() {
            // The same steps, for the common case: no ideographs, NFD is
            // the identity.
            for b in text.bytes() {
                let c = b as char;
                if self.clean_text && is_control(c) {
                    continue;
                }
                let c = if self.clean_text && is_whitespace(c) {
                    ' '
                } else {
                    c
                };
                out.push(if self.lowercase {
                    c.to_ascii_lowercase()
                } else {
                    c
                });
            }
            return;
        }
        let mut cleaned = String::with_capacity(text.len() + 8);
        for c in text.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if is_whitespace(c) {
                    cleaned.push(' ');
                    continue;
                }
            }
            if self.chinese_chars && is_chinese_char(c) {
                cleaned.push(' ');
                cleaned.push(c);
                cleaned.push(' ');
            } else {
                cleaned.push(c);
            }
        }
        let mut push = |c: char| {
            if self.lowercase {
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
        };
        if self.strip_accents {
            for (c, _) in cleaned.as_str().nfd() {
                if !c.is_mark_nonspacing() {
                    push(c);
                }
            }
        } else {
            cleaned.chars().for_each(push);
        }
    }

    /// BERT's pre-tokenizer (split at whitespace, which goes, and around
    /// each punctuation mark, which stays), then WordPiece on each word,
    /// until `ids` holds `limit`.
    fn words(&self, text: &str, ids: &mut Vec<u32>, limit: usize) {
        let mut start = None;
        for (at, c) in text.char_indices() {
            if ids.len() >= limit {
                return;
            }
            let punct = is_bert_punctuation(c);
            if c.is_whitespace() || punct {
                if let Some(s) = start.take() {
                    self.word(&text[s..at], ids);
                }
                if punct {
                    self.word(&text[at..at + c.len_utf8()], ids);
                }
            } else if start.is_none() {
                start = Some(at);
            }
        }
        if let Some(s) = start
            && ids.len() < limit
        {
            self.word(&text[s..], ids);
        }
    }

    /// WordPiece on one word: the longest known piece from the left, then
    /// `##`-prefixed ones; a word that has no such cover, or is over
    /// `max_chars` characters, is one `[UNK]`.
    fn word(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > self.max_chars {
            ids.push(self.unk);
            return;
        }
        let before = ids.len();
        let mut start = 0;
        while start < word.len() {
            let prefix = if start > 0 { self.prefix.as_str() } else { "" };
            let mut end = word.len();
            let mut found = None;
            while start < end {
                if let Some(id) = self.vocab.get(prefix, &word[start..end]) {
                    found = Some(id);
                    break;
                }
                end -= word[start..end]
                    .chars()
                    .next_back()
                    .map_or(1, char::len_utf8);
            }
            match found {
                Some(id) => ids.push(id),
                None => {
                    ids.truncate(before);
                    ids.push(self.unk);
                    return;
                }
            }
            start = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;
    use tokenizers::{Tokenizer, TruncationParams};

    /// A BERT-style tokenizer file in MiniLM's shape: its words, and
    /// `extra` fields at the top level.
    fn bert_file(words: &[&str], model_type: &str, extra: &str) -> String {
        let vocab: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, w)| format!("{}: {i}", serde_json::to_string(w).unwrap()))
            .collect();
        let added: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            .iter()
            .enumerate()
            .map(|(i, w)| {
                format!(
                    r#"{{"id": {i}, "special": true, "content": "{w}", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}}"#
                )
            })
            .collect();
        format!(
            r###"{{"version": "1.0", "truncation": {{"max_length": 128, "strategy": "LongestFirst", "stride": 0}},
 "padding": null, "added_tokens": [{added}],
 "normalizer": {{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true}},
 "pre_tokenizer": {{"type": "BertPreTokenizer"}},
 "post_processor": {{"type": "TemplateProcessing",
   "single": [{{"SpecialToken": {{"id": "[CLS]", "type_id": 0}}}}, {{"Sequence": {{"id": "A", "type_id": 0}}}}, {{"SpecialToken": {{"id": "[SEP]", "type_id": 0}}}}],
   "pair": [{{"SpecialToken": {{"id": "[CLS]", "type_id": 0}}}}, {{"Sequence": {{"id": "A", "type_id": 0}}}}, {{"SpecialToken": {{"id": "[SEP]", "type_id": 0}}}}, {{"Sequence": {{"id": "B", "type_id": 1}}}}, {{"SpecialToken": {{"id": "[SEP]", "type_id": 1}}}}],
   "special_tokens": {{"[CLS]": {{"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}}, "[SEP]": {{"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}}}}},
 "decoder": {{"type": "WordPiece", "prefix": "##", "cleanup": true}}{extra},
 "model": {{"type": "{model_type}", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 12,
   "vocab": {{{vocab}}}}}}}"###,
            added = added.join(", "),
            vocab = vocab.join(", "),
        )
    }

    const WORDS: &[&str] = &[
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "session", "token", "valid", "##ate",
        "##s", "where", "do", "we", "cafe", "?", ".", "un", "##known", "a", "##b", "##c", "b", "c",
        "ab", "abc", "é", "e", "##e", "中", "国", "!", "(", ")", "_", "-", "σ", "##σ", "i", "x",
        "##x", "1", "##1", "\"", "[", "]", "##é", "ı", "ǆ", "ß", "##ß", "ss", "«", "»", "¿", "k",
        "##k", "ff", "ﬀ", "##ﬀ", "a\"b", "ab##", "#",
    ];

    /// Characters chosen to reach every branch: ASCII words and
    /// punctuation, accents precomposed and combining, CJK ideographs and
    /// kana, whitespace and control characters of several kinds, cased
    /// letters whose lowercase is longer, the special tokens' brackets.
    const PALETTE: &[&str] = &[
        "a",
        "b",
        "c",
        "x",
        "k",
        "e",
        "é",
        "É",
        "e\u{301}",
        "\u{301}",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        "\u{a0}",
        "\u{3000}",
        "\u{2028}",
        "\u{0}",
        "\u{fffd}",
        "\u{200b}",
        "\u{200d}",
        "\u{7}",
        "\u{e000}",
        "中",
        "国",
        "の",
        "한",
        "!",
        "?",
        ".",
        "(",
        ")",
        "_",
        "-",
        "\"",
        "#",
        "##",
        "«",
        "»",
        "¿",
        "Σ",
        "σ",
        "ς",
        "İ",
        "ǅ",
        "ẞ",
        "ß",
        "ﬀ",
        "K",
        "1",
        "١",
        "😀",
        "[CLS]",
        "[SEP]",
        "[UNK]",
        "[MASK]",
        "[",
        "]",
        "[CL",
        "the",
        "session",
        "tokens",
        "validate",
        "unknown",
        "cafe",
        "CAFÉ",
        "abcabcabcabcabc",
        "xxxxxxxxxxxxx",
        "\u{1F1FA}\u{1F1F8}",
        "\u{e9}\u{301}",
    ];

    fn reference(text: &str, max: usize) -> Tokenizer {
        let mut t = Tokenizer::from_str(text).expect("the crate reads the file");
        t.with_truncation(Some(TruncationParams {
            max_length: max,
            ..Default::default()
        }))
        .unwrap();
        t.with_padding(None);
        t
    }

    /// `n` strings of 0 to 24 pieces of the palette, from a fixed seed.
    fn random_texts(n: usize) -> Vec<String> {
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..n)
            .map(|_| {
                let len = (next() % 25) as usize;
                (0..len)
                    .map(|_| PALETTE[(next() % PALETTE.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn same_ids_as_the_crate_on_tricky_and_random_text() {
        let file = bert_file(WORDS, "WordPiece", "");
        for max in [6, 512] {
            let ours = read(file.as_bytes(), max).expect("a BERT file is read");
            let crate_tok = reference(&file, max);
            let mut texts: Vec<String> = PALETTE.iter().map(|s| s.to_string()).collect();
            texts.extend(
                [
                    "Where do we validate the session tokens?",
                    "CAFÉ [MASK] unknown zebra.",
                    "",
                    "[CLS] the [SEP] token",
                    "[CLS][SEP][CLS]",
                    "ΣΑΣ σας",
                    "a\"b ab## ##",
                    "abcabcabcabc abcabcabcabca",
                    "中国中国 the中国",
                ]
                .map(String::from),
            );
            texts.extend(random_texts(5_000));
            for text in &texts {
                for specials in [true, false] {
                    let want = crate_tok.encode(text.as_str(), specials).unwrap();
                    assert_eq!(
                        ours.ids(text, specials),
                        want.get_ids(),
                        "{text:?} specials {specials} max {max}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_vocabulary_finds_every_word_and_nothing_else() {
        let file = bert_file(WORDS, "WordPiece", "");
        let ours = read(file.as_bytes(), 512).unwrap();
        for (i, w) in WORDS.iter().enumerate() {
            assert_eq!(ours.token_to_id(w), Some(i as u32), "{w}");
        }
        for w in ["", "##", "sessio", "sessions", "THE", "ab#"] {
            assert_eq!(ours.token_to_id(w), None, "{w}");
        }
        assert_eq!(ours.vocab.get("##", "ate"), Some(9));
        // A word listed twice keeps its last id, as serde's map does.
        let twice = bert_file(
            &["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"],
            "WordPiece",
            "",
        )
        .replace("\"a\": 5", "\"a\": 5, \"a\": 4");
        assert_eq!(
            read(twice.as_bytes(), 512).unwrap().token_to_id("a"),
            Some(4)
        );
    }

    #[test]
    fn another_shape_is_left_to_the_crate() {
        let file = bert_file(WORDS, "WordPiece", "");
        assert!(read(bert_file(WORDS, "WordLevel", "").as_bytes(), 512).is_none());
        assert!(read(bert_file(WORDS, "WordPiece", r#", "x": 1"#).as_bytes(), 512).is_none());
        assert!(read(b"{ not json", 512).is_none());
        let changed = |from: &str, to: &str| {
            assert!(file.contains(from), "{from}");
            read(file.replace(from, to).as_bytes(), 512).is_none()
        };
        assert!(changed("\"1.0\"", "\"2.0\""));
        assert!(changed("BertPreTokenizer", "Whitespace"));
        assert!(changed("BertNormalizer", "Lowercase"));
        assert!(changed(
            r#""normalized": false}]"#,
            r#""normalized": true}]"#
        ));
        assert!(changed(r#""lstrip": false"#, r#""lstrip": true"#));
        assert!(changed(r#""ids": [2]"#, r#""ids": [2, 3]"#));
        assert!(changed(r#""id": "A""#, r#""id": "B""#));
        assert!(changed(r#""ids": [2]"#, r#""ids": [3]"#));
        // An added token whose id is not the vocabulary's.
        assert!(changed(r#""id": 4, "special""#, r#""id": 7, "special""#));
    }
}
