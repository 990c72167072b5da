//! `cairn eval --floors`, second part: where `[search]
//! confident_similarity` should sit. Each of the set's queries (on-topic)
//! and each prompt of two other domains (off-topic: nothing in the corpus
//! answers them) is searched as `search --limit 10` runs it; the closest
//! hit's similarity decides whether the answer is *confident*. At each floor
//! of a grid: the share of on-topic queries answered confidently, of those
//! whose first hit is relevant, and of off-topic prompts (what the floor is
//! for: each one confident is an answer that should have said "nothing").

use serde::Serialize;

/// Floors tried (cosine similarity).
pub(crate) const CONFIDENCE_GRID: [f64; 9] = [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6];

/// Everyday chat no document or code answers (LoCoMo's domain).
pub const CHAT_PROMPTS: [&str; 12] = [
    "what did Caroline say about her painting class last week",
    "when is Melanie's daughter's birthday party",
    "did John enjoy the camping trip with his friends",
    "which book did Audrey recommend for the summer",
    "how did the adoption interview go",
    "what kind of dog did Maria get from the shelter",
    "where did they go for the anniversary dinner",
    "why was Tim nervous before the job interview",
    "what song did she play at the open mic night",
    "how long has Evan been learning to surf",
    "who came to the pottery workshop on Saturday",
    "what did Joanna bake for the neighbours",
];

/// Biomedical claims no chat or code answers (SciFact's domain).
pub const SCIENCE_PROMPTS: [&str; 12] = [
    "vitamin D supplementation reduces the risk of fractures in the elderly",
    "statins lower LDL cholesterol by inhibiting HMG-CoA reductase",
    "the BRCA1 mutation increases the risk of ovarian cancer",
    "mitochondrial dysfunction contributes to Parkinson's disease",
    "gut microbiota composition differs in patients with type 2 diabetes",
    "aspirin reduces the incidence of colorectal cancer",
    "T regulatory cells suppress autoimmune responses",
    "sleep deprivation impairs glucose tolerance",
    "the measles vaccine does not cause autism",
    "CRISPR Cas9 introduces off-target mutations in human cells",
    "high salt intake raises blood pressure in salt-sensitive people",
    "telomere length shortens with chronic stress",
];

/// Off-topic prompts for a set, by its domain: the two other domains'
/// prompts (a set named `scifact` is science, `locomo` chat, any other code;
/// code prompts are [`crate::memory::OFF_TOPIC`]).
pub fn off_topic_for(set_name: &str) -> Vec<String> {
    let code = crate::memory::OFF_TOPIC.iter();
    let (chat, science) = (CHAT_PROMPTS.iter(), SCIENCE_PROMPTS.iter());
    let name = set_name.to_ascii_lowercase();
    let picked: Vec<&&str> = if name.contains("scifact") {
        chat.chain(code).collect()
    } else if name.contains("locomo") {
        science.chain(code).collect()
    } else {
        chat.chain(science).collect()
    };
    picked.into_iter().map(|s| s.to_string()).collect()
}

/// One floor's row.
#[derive(Clone, Debug, Serialize)]
pub struct ConfidenceRow {
    /// The floor (cosine similarity).
    pub floor: f64,
    /// Whether this is `[search] confident_similarity`.
    pub configured: bool,
    /// Share of the set's queries answered confidently.
    pub on_topic_confident: f64,
    /// Share of the queries whose first hit is relevant that stay confident.
    pub relevant_first_confident: f64,
    /// Share of off-topic prompts answered confidently (should be 0).
    pub off_topic_confident: f64,
}

/// The closest similarity of each on-topic query (with whether its first
/// hit is relevant) and of each off-topic prompt.
#[derive(Default)]
pub(crate) struct Samples {
    pub on: Vec<(Option<f64>, bool)>,
    pub off: Vec<Option<f64>>,
}

impl Samples {
    /// The grid's rows.
    pub fn rows(&self, configured: f64) -> Vec<ConfidenceRow> {
        let share = |n: usize, of: usize| n as f64 / of.max(1) as f64;
        let clears = |s: &Option<f64>, f: f64| s.is_some_and(|s| s >= f);
        let relevant: Vec<_> = self.on.iter().filter(|(_, r)| *r).collect();
        let mut floors: Vec<f64> = CONFIDENCE_GRID.to_vec();
        if !floors.iter().any(|f| (f - configured).abs() < 1e-9) {
            floors.push(configured);
            floors.sort_by(f64::total_cmp);
        }
        floors
            .into_iter()
            .map(|f| ConfidenceRow {
                floor: f,
                configured: (f - configured).abs() < 1e-9,
                on_topic_confident: share(
                    self.on.iter().filter(|(s, _)| clears(s, f)).count(),
                    self.on.len(),
                ),
                relevant_first_confident: share(
                    relevant.iter().filter(|(s, _)| clears(s, f)).count(),
                    relevant.len(),
                ),
                off_topic_confident: share(
                    self.off.iter().filter(|s| clears(s, f)).count(),
                    self.off.len(),
                ),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_count_what_clears_each_floor() {
        let s = Samples {
            on: vec![
                (Some(0.5), true),
                (Some(0.3), true),
                (None, false),
                (Some(0.45), false),
            ],
            off: vec![Some(0.2), Some(0.42), None, Some(0.1)],
        };
        let rows = s.rows(0.4);
        let at = |f: f64| rows.iter().find(|r| (r.floor - f).abs() < 1e-9).unwrap();
        assert_eq!(at(0.4).on_topic_confident, 0.5);
        assert_eq!(at(0.4).relevant_first_confident, 0.5);
        assert_eq!(at(0.4).off_topic_confident, 0.25);
        assert!(at(0.4).configured && !at(0.45).configured);
        assert_eq!(at(0.2).off_topic_confident, 0.5);
        assert_eq!(off_topic_for("scifact").len(), 32);
    }
}
