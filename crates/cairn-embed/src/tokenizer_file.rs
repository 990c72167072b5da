//! Reading a WordPiece `tokenizer.json` in a few milliseconds.
//!
//! `Tokenizer::from_file` takes 23–27 ms for MiniLM's file (EPYC-AVX2): its
//! model field goes through two untagged enums and a flattened
//! `serde_json::Value`, so the 30,522-entry vocabulary is buffered and
//! copied three times before the `WordPiece` is built. A one-shot
//! `cairn search` pays that on every call, a third of its time (issue 65).
//! Here the vocabulary is read once, straight into the map `WordPiece`
//! keeps, and the small parts (normalizer, pre-tokenizer, post-processor,
//! decoder, added tokens) go through the crate's own deserializers, so the
//! tokenizer built is the one `from_file` builds. A file of any other
//! shape (another model type, a field this reader does not know) is left
//! to `from_file`: [`read`] answers `None`.

use ahash::AHashMap;
use serde::Deserialize;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{AddedToken, Tokenizer};

/// The fields of a tokenizer file this reader understands; any other
/// field makes it decline (`deny_unknown_fields`), as a newer format might
/// mean something it would drop.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: String,
    // Truncation and padding are set by the loader, whatever the file says.
    #[serde(default)]
    #[allow(dead_code)]
    truncation: serde::de::IgnoredAny,
    #[serde(default)]
    #[allow(dead_code)]
    padding: serde::de::IgnoredAny,
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    post_processor: Option<PostProcessorWrapper>,
    decoder: Option<DecoderWrapper>,
    model: Model,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    vocab: AHashMap<String, u32>,
}

/// The tokenizer of a WordPiece `tokenizer.json`'s bytes, or `None` when
/// the file is not one this reader knows (the caller then uses
/// `Tokenizer::from_file`, which also names the error of a broken file).
pub(crate) fn read(bytes: &[u8]) -> Option<Tokenizer> {
    let file: File = serde_json::from_slice(bytes).ok()?;
    if file.version != "1.0" || file.model.kind != "WordPiece" {
        return None;
    }
    let model = WordPiece::builder()
        .vocab(file.model.vocab)
        .unk_token(file.model.unk_token)
        .continuing_subword_prefix(file.model.continuing_subword_prefix)
        .max_input_chars_per_word(file.model.max_input_chars_per_word)
        .build()
        .ok()?;
    let mut tok = Tokenizer::new(model);
    tok.with_normalizer(file.normalizer)
        .with_pre_tokenizer(file.pre_tokenizer)
        .with_post_processor(file.post_processor)
        .with_decoder(file.decoder);
    // As the crate's own deserializer does: the added tokens (each with
    // its own `special` flag) after the model, through `add_tokens`.
    tok.add_tokens(&file.added_tokens);
    Some(tok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    /// A BERT-style tokenizer file in MiniLM's shape, with a small vocabulary.
    fn file(model_type: &str, extra: &str) -> String {
        let words = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "session", "token", "valid",
            "##ate", "##s", "where", "do", "we", "cafe", "?", ".", "un", "##known",
        ];
        let vocab: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, w)| format!("{:?}: {i}", w))
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
 "model": {{"type": "{model_type}", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
   "vocab": {{{vocab}}}}}}}"###,
            added = added.join(", "),
            vocab = vocab.join(", "),
        )
    }

    #[test]
    fn the_quick_reader_builds_the_tokenizer_the_crate_builds() {
        let text = file("WordPiece", "");
        let quick = read(text.as_bytes()).expect("a WordPiece file is read");
        let mut slow = Tokenizer::from_str(&text).expect("the crate reads it");
        // The same tokenizer, field by field, as the crate writes it (but
        // the truncation, which the loader sets whatever the file says)...
        slow.with_truncation(None).unwrap();
        assert_eq!(
            quick.to_string(false).unwrap(),
            slow.to_string(false).unwrap()
        );
        // ...and the same ids, special tokens and unknown words included.
        for s in [
            "Where do we validate the session tokens?",
            "CAFÉ [MASK] unknown zebra.",
            "",
            "[CLS] the [SEP] token",
        ] {
            let a = quick.encode(s, true).unwrap();
            let b = slow.encode(s, true).unwrap();
            assert_eq!(a.get_ids(), b.get_ids(), "{s:?}");
            assert_eq!(a.get_offsets(), b.get_offsets(), "{s:?}");
        }
        assert_eq!(
            quick.encode("validates", true).unwrap().get_ids(),
            [2, 8, 9, 10, 3]
        );
    }

    #[test]
    fn another_model_or_an_unknown_field_is_left_to_the_crate() {
        assert!(read(file("WordLevel", "").as_bytes()).is_none());
        assert!(read(file("WordPiece", r#", "something_new": 1"#).as_bytes()).is_none());
        assert!(read(b"{ not json").is_none());
        assert!(read(file("WordPiece", "").replace("1.0", "2.0").as_bytes()).is_none());
    }
}
