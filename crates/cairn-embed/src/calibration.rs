//! The texts an int8 model is calibrated on at load ([`crate::bert::Calibration`]):
//! a few of each kind Cairn embeds — prose, markdown, code in several
//! languages, a conversation turn, questions — written for this purpose.
//! The f32 layers read them once; the largest activation of each input
//! channel smooths the int8 layers (`int8::smoothing`) and names the
//! channels they multiply in f32 (`int8::outlier_channels`). Fixed texts make
//! the int8 weights, and so the vectors, the same on every load.

use crate::bert::Calibration;
use crate::error::Result;
use crate::minilm::TextTokenizer;

/// Documents and code.
const PASSAGES: [&str; 8] = [
    "The index is one SQLite file beside the project. Each write batch runs in a transaction, so a process killed halfway leaves the last complete batch and nothing half written.",
    "## Configuration\n\nSet `[search] limit` to change how many hits a search returns. The default is five; the command line's `--limit` overrides it for one call.",
    "pub fn parse_range(input: &str) -> Result<Range, ParseError> {\n    let (lo, hi) = input.split_once(\"..\").ok_or(ParseError::NoDots)?;\n    Ok(Range { lo: lo.trim().parse()?, hi: hi.trim().parse()? })\n}",
    "def read_config(path):\n    \"\"\"Loads the settings file, falling back to defaults when it is missing.\"\"\"\n    try:\n        with open(path) as f:\n            return json.load(f)\n    except FileNotFoundError:\n        return dict(DEFAULTS)",
    "function debounce(fn, ms) {\n  let timer = null;\n  return (...args) => {\n    clearTimeout(timer);\n    timer = setTimeout(() => fn(...args), ms);\n  };\n}",
    "static int window_fill(struct state *s, const unsigned char *buf, size_t len) {\n    if (len > s->free) return -1; /* caller must flush first */\n    memcpy(s->window + s->pos, buf, len);\n    s->pos += len;\n    return 0;\n}",
    "Patients who received the higher dose showed a 12% reduction in systolic blood pressure after eight weeks, compared with 4% in the placebo group; adverse events were mild and evenly distributed.",
    "Melanie: I finally signed up for the pottery class on Thursdays! Caroline: That's great, you've talked about it since last summer. Did you pick the evening group?",
];

/// Questions, as a user or an agent asks them.
const QUESTIONS: [&str; 4] = [
    "how does the parser decide where a range ends",
    "which setting turns off the automatic model download",
    "does a higher dose lower blood pressure more than placebo",
    "when did Melanie start going to pottery class",
];

fn ids(tok: &TextTokenizer, text: &str) -> Result<Vec<u32>> {
    tok.ids(text, true)
}

/// For an embedding model: every passage, and every question with the
/// model's query prefix.
pub(crate) fn for_embedder(tok: &TextTokenizer, query_prefix: &str) -> Result<Calibration> {
    let mut out = Vec::new();
    for p in PASSAGES {
        out.push(ids(tok, p)?);
    }
    for q in QUESTIONS {
        out.push(ids(tok, &format!("{query_prefix}{q}"))?);
    }
    Ok(Calibration {
        ids: out,
        types: None,
        cache: None,
    })
}

/// For a cross-encoder: each question with two passages, as
/// `[CLS] question [SEP] passage [SEP]` (types 0, then 1), by `join`.
pub(crate) fn for_pairs(
    join: impl Fn(&str, &str) -> Result<(Vec<u32>, Vec<u32>)>,
) -> Result<Calibration> {
    let (mut all_ids, mut all_types) = (Vec::new(), Vec::new());
    for (i, q) in QUESTIONS.iter().enumerate() {
        for p in [
            PASSAGES[i % PASSAGES.len()],
            PASSAGES[(i + 5) % PASSAGES.len()],
        ] {
            let (ids, types) = join(q, p)?;
            all_ids.push(ids);
            all_types.push(types);
        }
    }
    Ok(Calibration {
        ids: all_ids,
        types: Some(all_types),
        cache: None,
    })
}
