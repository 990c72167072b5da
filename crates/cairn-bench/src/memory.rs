//! LoCoMo as a memory benchmark: every turn of a conversation is stored as a
//! memory through [`Engine::remember`] (the path an agent's `memory_store`
//! takes, near-duplicate merging included), dated with its session, one
//! project per conversation; each question is then answered with
//! [`Engine::recall`] and scored at turn level (Recall@5, @10) and session
//! level (Recall@5).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cairn_core::Embedder;
use serde::Serialize;

use cairn::{Config, Engine, Error, MemoryInput, Progress, RecallOptions, Result};

/// How to run the memory benchmark.
#[derive(Clone, Debug)]
pub struct MemoryEvalOptions {
    /// Where the per-conversation projects are built (kept between runs).
    pub work_dir: PathBuf,
    /// Rebuild the projects from scratch.
    pub fresh: bool,
    /// Score only the first N questions (0 = all).
    pub max_queries: usize,
    /// Settings of every project.
    pub config: Config,
}

/// What the memory benchmark measured.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryEvalReport {
    /// Conversations loaded.
    pub conversations: usize,
    /// Turns stored.
    pub turns: usize,
    /// Memory files after storing (turns minus near-duplicate merges).
    pub memories: usize,
    /// Stores that updated a near-duplicate instead of adding a file.
    pub merged: usize,
    /// Seconds spent storing (0 when the projects were already built).
    pub store_seconds: f64,
    /// Questions scored.
    pub queries: usize,
    /// Turn-level Recall@5 (top 5 memories).
    pub turn_recall_at_5: f64,
    /// Turn-level Recall@10.
    pub turn_recall_at_10: f64,
    /// Session-level Recall@5 (sessions of the top 5 memories).
    pub session_recall_at_5: f64,
    /// Mean memories a recall returned (of 10 asked; fewer when the
    /// relevance floors of `[memory]` left some out).
    pub mean_returned: f64,
    /// Median `recall` latency, query embedding included (ms).
    pub recall_p50_ms: f64,
    /// 95th percentile `recall` latency (ms).
    pub recall_p95_ms: f64,
    /// Each question used as a prompt to the `UserPromptSubmit` hook, at
    /// several similarity floors (`[inject] prompt_min_similarity`).
    pub injection: Vec<InjectionRow>,
}

/// What prompt injection does at one similarity floor, over every question.
#[derive(Clone, Debug, Serialize)]
pub struct InjectionRow {
    /// The floor (cosine).
    pub min_similarity: f64,
    /// Share of prompts that got a block at all.
    pub injected: f64,
    /// Share of prompts whose block holds a turn that answers them.
    pub answered: f64,
    /// Share of injected blocks that hold an answering turn.
    pub precision: f64,
    /// Mean tokens per prompt (0 for those with no block).
    pub mean_tokens: f64,
    /// 95th percentile tokens of the blocks injected.
    pub p95_tokens: f64,
    /// Share of [`OFF_TOPIC`] prompts (coding questions, asked of every
    /// conversation's chat memories) that got a block: injections nothing
    /// in the memories could answer.
    pub off_topic_injected: f64,
}

/// Prompts no LoCoMo memory answers (a developer's questions to an agent,
/// written for this benchmark): what the prompt hook should stay silent on.
pub const OFF_TOPIC: [&str; 20] = [
    "fix the failing unit test in the parser module",
    "how do I configure the webpack dev server proxy",
    "rename the function parse_config to load_config everywhere",
    "why does cargo build fail with a linker error on musl",
    "add pagination to the REST endpoint that lists invoices",
    "what does the retry middleware do when the upstream times out",
    "write a migration that adds an index on users.email",
    "explain the difference between Arc and Rc in this codebase",
    "the CI pipeline is red after the dependency bump, investigate",
    "set up eslint with the airbnb config and fix the warnings",
    "where is the JWT signing key loaded from",
    "profile the hot loop in the image resizer and make it faster",
    "convert this callback based code to async await",
    "how many goroutines does the worker pool start",
    "add a Dockerfile for the api service with a multi stage build",
    "which environment variable sets the database connection pool size",
    "refactor the payment service to use dependency injection",
    "make the integration tests run in parallel",
    "why is the kubernetes pod stuck in CrashLoopBackOff",
    "document the public API of the tokenizer crate",
];

/// The floors the injection table is measured at.
const INJECTION_FLOORS: [f64; 7] = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6];

/// Running sums of one floor's row.
#[derive(Default)]
struct InjectionSums {
    injected: usize,
    answered: usize,
    tokens: Vec<usize>,
    off_topic: usize,
}

/// One turn of a session file.
struct Turn {
    id: String,
    text: String,
    date: Option<String>,
}

/// `1:56 pm on 8 May, 2023` → RFC 3339.
fn session_date(s: &str) -> Option<String> {
    let s = s.trim();
    let dt = jiff::civil::DateTime::strptime("%I:%M %p on %d %B, %Y", s)
        .ok()
        .or_else(|| {
            jiff::civil::Date::strptime("%d %B, %Y", s.rsplit(" on ").next()?)
                .ok()
                .map(|d| d.to_datetime(jiff::civil::Time::midnight()))
        })?;
    dt.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().to_string())
}

/// The turns of one session file (`## D<s>:<t>` then `**Speaker:** text`).
fn parse_session(conv: &str, text: &str) -> Vec<Turn> {
    let date = text
        .lines()
        .find_map(|l| l.strip_prefix("Date:"))
        .and_then(session_date);
    let mut out: Vec<Turn> = Vec::new();
    for line in text.lines() {
        if let Some(id) = line.strip_prefix("## ") {
            out.push(Turn {
                id: format!("{conv}:{}", id.trim()),
                text: String::new(),
                date: date.clone(),
            });
        } else if let Some(t) = out.last_mut()
            && !line.trim().is_empty()
        {
            let clean = line.replace("**", "");
            if !t.text.is_empty() {
                t.text.push(' ');
            }
            t.text.push_str(clean.trim());
        }
    }
    out.retain(|t| !t.text.is_empty());
    out
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn tsv(path: &Path) -> Result<Vec<Vec<String>>> {
    Ok(read(path)?
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect())
}

/// The labels: which session each turn is in, and the relevant turns and
/// sessions of each question.
struct Labels {
    turn_session: HashMap<String, String>,
    turn_qrels: HashMap<String, HashSet<String>>,
    session_qrels: HashMap<String, HashSet<String>>,
}

fn labels(dir: &Path) -> Result<Labels> {
    let turn_session: HashMap<String, String> = tsv(&dir.join("turns.tsv"))?
        .into_iter()
        .filter(|c| c.len() >= 2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect();
    let mut turn_qrels: HashMap<String, HashSet<String>> = HashMap::new();
    for c in tsv(&dir.join("qrels_turns.tsv"))? {
        if c.len() >= 2 {
            turn_qrels
                .entry(c[0].clone())
                .or_default()
                .insert(c[1].clone());
        }
    }
    let mut session_qrels: HashMap<String, HashSet<String>> = HashMap::new();
    for c in tsv(&dir.join("qrels.tsv"))? {
        if c.len() >= 2 {
            session_qrels
                .entry(c[0].clone())
                .or_default()
                .insert(c[1].clone());
        }
    }

    Ok(Labels {
        turn_session,
        turn_qrels,
        session_qrels,
    })
}

/// One project per conversation, every turn remembered (unless an earlier
/// run left them there).
struct Stored {
    engines: HashMap<String, Engine>,
    turns: usize,
    merged: usize,
    store_seconds: f64,
}

fn store_conversations(
    corpus: &Path,
    embedder: Option<Arc<dyn Embedder>>,
    opts: &MemoryEvalOptions,
    progress: &dyn Progress,
) -> Result<Stored> {
    let mut convs: Vec<PathBuf> = std::fs::read_dir(corpus)
        .map_err(|source| Error::Io {
            path: corpus.to_path_buf(),
            source,
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    convs.sort();

    let mut engines: HashMap<String, Engine> = HashMap::new();
    let (mut turns_total, mut merged, mut store_seconds) = (0, 0, 0.0);
    for conv_dir in &convs {
        let conv = conv_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let project = opts.work_dir.join(&conv);
        let marker = project.join(".cairn").join("locomo-loaded");
        if opts.fresh && project.exists() {
            std::fs::remove_dir_all(&project).map_err(|source| Error::Io {
                path: project.clone(),
                source,
            })?;
        }
        std::fs::create_dir_all(&project).map_err(|source| Error::Io {
            path: project.clone(),
            source,
        })?;
        let engine = Engine::open(&project, opts.config.clone(), embedder.clone())?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(conv_dir)
            .map_err(|source| Error::Io {
                path: conv_dir.clone(),
                source,
            })?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        let mut turns = Vec::new();
        for f in &files {
            turns.extend(parse_session(&conv, &read(f)?));
        }
        turns_total += turns.len();
        if !marker.exists() {
            progress.stage(&format!("storing {conv}"), turns.len() as u64);
            let started = Instant::now();
            for t in &turns {
                let stored = engine.remember(&MemoryInput {
                    text: t.text.clone(),
                    kind: Some("event".into()),
                    tags: vec![t.id.clone()],
                    created: t.date.clone(),
                    client: "locomo".into(),
                    ..MemoryInput::default()
                })?;
                if stored.action == "updated" {
                    merged += 1;
                }
                progress.inc(1);
            }
            store_seconds += started.elapsed().as_secs_f64();
            progress.finish();
            std::fs::write(&marker, "").map_err(|source| Error::Io {
                path: marker.clone(),
                source,
            })?;
        }
        engines.insert(conv, engine);
    }
    Ok(Stored {
        engines,
        turns: turns_total,
        merged,
        store_seconds,
    })
}

/// The questions with turn labels, in file order (the first `max` when set).
fn questions(
    dir: &Path,
    turn_qrels: &HashMap<String, HashSet<String>>,
    max: usize,
) -> Result<Vec<(String, String)>> {
    let mut queries: Vec<(String, String)> = read(&dir.join("queries.jsonl"))?
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| {
            Some((
                v["id"].as_str()?.to_string(),
                v["text"].as_str()?.to_string(),
            ))
        })
        .filter(|(id, _)| turn_qrels.contains_key(id))
        .collect();
    if max > 0 {
        queries.truncate(max);
    }
    Ok(queries)
}

/// Summed turn Recall@5, @10, session Recall@5, memories returned, and
/// each recall's time.
struct Scores {
    t5: f64,
    t10: f64,
    s5: f64,
    returned: usize,
    times: Vec<f64>,
    injection: Vec<InjectionSums>,
}

fn score_recalls(
    queries: &[(String, String)],
    engines: &HashMap<String, Engine>,
    l: &Labels,
    progress: &dyn Progress,
) -> Result<Scores> {
    progress.stage("recall", queries.len() as u64);
    let (mut t5, mut t10, mut s5, mut returned) = (0.0, 0.0, 0.0, 0);
    let mut times = Vec::with_capacity(queries.len());
    let mut injection: Vec<InjectionSums> = INJECTION_FLOORS
        .iter()
        .map(|_| InjectionSums::default())
        .collect();
    for (id, text) in queries {
        let conv = id.split_once("_q").map_or("", |(c, _)| c);
        let Some(engine) = engines.get(conv) else {
            continue;
        };
        let started = Instant::now();
        let hits = engine.recall(
            text,
            &RecallOptions {
                limit: 10,
                no_touch: true,
                include_expired: true,
                ..RecallOptions::default()
            },
        )?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        returned += hits.len();
        // A memory stands for every turn tagged on it (merged turns included).
        let turns_of = |n: usize| -> HashSet<String> {
            hits.iter()
                .take(n)
                .flat_map(|h| h.memory.memory.tags.iter().cloned())
                .collect()
        };
        let relevant = &l.turn_qrels[id];
        let share = |got: &HashSet<String>, want: &HashSet<String>| {
            want.iter().filter(|w| got.contains(*w)).count() as f64 / want.len().max(1) as f64
        };
        t5 += share(&turns_of(5), relevant);
        t10 += share(&turns_of(10), relevant);
        // The prompt hook recalls the top `[inject] prompt_memories` the
        // same way (same depth, same order) and keeps those close enough.
        let cfg = &engine.config().inject;
        let top = &hits[..hits.len().min(cfg.prompt_memories)];
        for (floor, sums) in INJECTION_FLOORS.iter().zip(&mut injection) {
            let block = cairn::prompt_block(top, *floor, cfg.prompt_tokens);
            if block.memories == 0 {
                continue;
            }
            sums.injected += 1;
            sums.tokens.push(block.tokens);
            let answers = top.iter().any(|h| {
                block.ids.contains(&h.memory.memory.id)
                    && h.memory.memory.tags.iter().any(|t| relevant.contains(t))
            });
            sums.answered += usize::from(answers);
        }
        if let Some(sessions) = l.session_qrels.get(id) {
            let got: HashSet<String> = turns_of(5)
                .iter()
                .filter_map(|t| l.turn_session.get(t).cloned())
                .collect();
            s5 += share(&got, sessions);
        }
        progress.inc(1);
    }
    progress.finish();
    // Every off-topic prompt, asked of every conversation.
    for engine in engines.values() {
        let cfg = &engine.config().inject;
        for prompt in OFF_TOPIC {
            let hits = engine.recall(prompt, &cairn::prompt_recall(cfg))?;
            for (floor, sums) in INJECTION_FLOORS.iter().zip(&mut injection) {
                let block = cairn::prompt_block(&hits, *floor, cfg.prompt_tokens);
                sums.off_topic += usize::from(block.memories > 0);
            }
        }
    }
    Ok(Scores {
        t5,
        t10,
        s5,
        returned,
        times,
        injection,
    })
}

/// Runs the benchmark on a LoCoMo folder (`corpus/<conv>/session-NN.md`,
/// `queries.jsonl`, `qrels.tsv`, `qrels_turns.tsv`, `turns.tsv`).
pub fn run_memory_eval(
    dir: &Path,
    embedder: Option<Arc<dyn Embedder>>,
    opts: &MemoryEvalOptions,
    progress: &dyn Progress,
) -> Result<MemoryEvalReport> {
    let labels = labels(dir)?;
    let stored = store_conversations(&dir.join("corpus"), embedder, opts, progress)?;
    let engines = &stored.engines;
    let memories = engines
        .values()
        .map(|e| e.status().map(|s| s.files as usize))
        .sum::<Result<usize>>()?;

    let queries = questions(dir, &labels.turn_qrels, opts.max_queries)?;
    let Scores {
        t5,
        t10,
        s5,
        returned,
        mut times,
        injection,
    } = score_recalls(&queries, engines, &labels, progress)?;
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        if times.is_empty() {
            0.0
        } else {
            times[((times.len() - 1) as f64 * p).round() as usize]
        }
    };
    let n = queries.len().max(1) as f64;
    Ok(MemoryEvalReport {
        conversations: engines.len(),
        turns: stored.turns,
        memories,
        merged: stored.merged,
        store_seconds: stored.store_seconds,
        queries: queries.len(),
        turn_recall_at_5: t5 / n,
        turn_recall_at_10: t10 / n,
        session_recall_at_5: s5 / n,
        mean_returned: returned as f64 / n,
        recall_p50_ms: pct(0.5),
        recall_p95_ms: pct(0.95),
        injection: INJECTION_FLOORS
            .iter()
            .zip(injection)
            .map(|(floor, mut s)| {
                s.tokens.sort_unstable();
                let p95 = if s.tokens.is_empty() {
                    0.0
                } else {
                    s.tokens[((s.tokens.len() - 1) as f64 * 0.95).round() as usize] as f64
                };
                InjectionRow {
                    min_similarity: *floor,
                    injected: s.injected as f64 / n,
                    answered: s.answered as f64 / n,
                    precision: s.answered as f64 / s.injected.max(1) as f64,
                    mean_tokens: s.tokens.iter().sum::<usize>() as f64 / n,
                    p95_tokens: p95,
                    off_topic_injected: s.off_topic as f64
                        / (OFF_TOPIC.len() * engines.len()).max(1) as f64,
                }
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_parse_into_dated_turns() {
        let text = "# conv-26 session 1: A and B, 1:56 pm on 8 May, 2023\n\nDate: 1:56 pm on 8 May, 2023\n\n## D1:1\n**Caroline:** Hey Mel!\n\n## D1:2\n**Melanie:** Hi!\n*[shares an image: a dog]*\n";
        let turns = parse_session("conv-26", text);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].id, "conv-26:D1:1");
        assert_eq!(turns[0].text, "Caroline: Hey Mel!");
        assert_eq!(turns[1].text, "Melanie: Hi! *[shares an image: a dog]*");
        assert_eq!(turns[0].date.as_deref(), Some("2023-05-08T13:56:00Z"));
    }
}
