//! Memory an agent gets without asking: the digest a session starts with and
//! the memories a prompt brings, each within a token budget, for a client's
//! `SessionStart` and `UserPromptSubmit` hooks (what the Claude Code plugins
//! of memsearch, claude-mem and mcp-memory-service do).
//!
//! A session starts with the last captured session's summary and the
//! memories most relevant to the project, its branch and the files changed
//! lately (`[inject] session_tokens`, 1,500). A prompt brings only memories
//! whose meaning is close to it: a cosine similarity of at least
//! `[inject] prompt_min_similarity` to the prompt, within `prompt_tokens`
//! (500); nothing at all when none is, and nothing without an embedding
//! model, which alone can say how close "close" is. Recall's fused scores
//! cannot: they are shares of the best match of the same query, so the best
//! of a set of unrelated memories scores as high as the best of related ones.

use std::path::Path;

use cairn_search::estimate_tokens;
use serde::Serialize;

use crate::config::InjectConfig;
use crate::engine::Engine;
use crate::error::Result;
use crate::memory::{RecallOptions, Recalled};

/// An injected block, and what it holds (the health file records the
/// counts, never the text).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Injection {
    /// The block as the agent reads it (empty: inject nothing).
    pub text: String,
    /// Memories in it.
    pub memories: usize,
    /// Whether it opens with the last session's summary.
    pub last_session: bool,
    /// Its estimated tokens.
    pub tokens: usize,
    /// Ids of the memories in it, best first.
    #[serde(skip)]
    pub ids: Vec<String>,
    /// Why each memory in it was chosen, in order (`m…: gotcha, importance
    /// 9, standing` / `…, recalled 0.62`): ids and reasons, never text.
    pub reasons: Vec<String>,
}

/// How much a memory type weighs in a session's digest: what an agent must
/// not get wrong (gotchas, decisions, conventions) first, then what it
/// should know, then notes and events; entity and relation stubs last.
pub fn type_priority(kind: &str) -> u8 {
    match kind {
        "gotcha" => 4,
        "decision" | "convention" => 3,
        "preference" | "fact" => 2,
        "note" | "event" => 1,
        _ => 0,
    }
}

/// Memories a session hears of whatever it works on: gotchas, decisions and
/// conventions, and any memory of importance at least this.
pub const STANDING_IMPORTANCE: u8 = 8;

/// Orders a session's candidates: type priority, then importance, then the
/// recall's score; with the reason each is there.
fn session_order(memories: &[Recalled]) -> Vec<(&Recalled, String)> {
    let mut ranked: Vec<&Recalled> = memories.iter().collect();
    ranked.sort_by(|a, b| {
        let key = |r: &Recalled| {
            (
                type_priority(&r.memory.memory.kind),
                r.memory.memory.importance,
            )
        };
        key(b).cmp(&key(a)).then(b.score.total_cmp(&a.score))
    });
    ranked
        .into_iter()
        .map(|r| {
            let m = &r.memory.memory;
            let why = if r.standing {
                "standing".to_string()
            } else {
                format!("recalled {:.2}", r.score)
            };
            (
                r,
                format!("{}: {}, importance {}, {why}", m.id, m.kind, m.importance),
            )
        })
        .collect()
}

/// The newest session summary in `<memory>/sessions/YYYY-MM-DD.md`: its
/// day and time (`2026-11-24 14:02`) and its text without the anchor line.
pub fn last_session(memory_dir: &Path) -> Option<(String, String)> {
    let dir = memory_dir.join("sessions");
    let mut days: Vec<_> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    days.sort();
    for path in days.iter().rev() {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let day = path
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().into_owned());
        if let Some((_, last)) = text.rsplit_once("\n### ") {
            let (time, body) = last.split_once('\n').unwrap_or((last, ""));
            let body: Vec<&str> = body
                .lines()
                .filter(|l| !l.trim_start().starts_with("<!--"))
                .collect();
            let body = body.join("\n").trim().to_string();
            if !body.is_empty() {
                return Some((format!("{day} {}", time.trim()), body));
            }
        }
    }
    None
}

/// The words a session digest recalls by: the project folder's name, the
/// branch's words (`feature/redis-ttl` → `redis ttl`) and each changed
/// file's name and domain words. Common branch names say nothing.
pub fn session_query(project: &str, branch: Option<&str>, changed: &[String]) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut add = |w: &str| {
        let w = w.trim().to_lowercase();
        if w.len() > 1 && !words.contains(&w) {
            words.push(w);
        }
    };
    project.split(['-', '_', '.', ' ']).for_each(&mut add);
    const PLAIN_BRANCHES: [&str; 9] = [
        "main", "master", "develop", "dev", "trunk", "head", "feature", "fix", "bugfix",
    ];
    if let Some(b) = branch {
        b.split(['/', '-', '_', '.'])
            .filter(|w| !PLAIN_BRANCHES.contains(&w.to_lowercase().as_str()))
            .for_each(&mut add);
    }
    for f in changed.iter().take(20) {
        let name = f.rsplit('/').next().unwrap_or(f);
        add(name.split('.').next().unwrap_or(name));
        cairn_search::domain_words(f).iter().for_each(|w| add(w));
    }
    words.join(" ")
}

/// Whether a recalled memory is a daily session log (`session-YYYY-MM-DD`).
fn is_session_log(id: &str) -> bool {
    let Some(id) = id.strip_prefix(crate::vault::SESSION_ID_PREFIX) else {
        return false;
    };
    id.len() == 10
        && id.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// One memory as a line of an injected block: type, importance, id and
/// its text on one line, cut to `max_tokens` at a word.
fn memory_line(r: &Recalled, max_tokens: usize) -> String {
    let m = &r.memory.memory;
    let mine = if r.personal { ", personal" } else { "" };
    let head = format!("- [{} {}, imp {}{mine}] ", m.id, m.kind, m.importance);
    let room = max_tokens.saturating_sub(estimate_tokens(&head)).max(8);
    let mut text = String::new();
    // A session log's anchors and heading marks are not for the agent.
    let words = r
        .memory
        .text
        .lines()
        .filter(|l| !l.trim_start().starts_with("<!--"))
        .flat_map(str::split_whitespace)
        .filter(|w| !w.chars().all(|c| c == '#'));
    for w in words {
        if estimate_tokens(&text) + estimate_tokens(w) + 1 > room {
            text.push('…');
            break;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(w);
    }
    let stale = if r.source_changed {
        " (its source changed since)"
    } else {
        ""
    };
    format!("{head}{text}{stale}")
}

/// Lines added to `out` while they fit `budget` tokens in all.
fn fill(out: &mut Injection, lines: impl IntoIterator<Item = (String, String)>, budget: usize) {
    for (id, line) in lines {
        let c = estimate_tokens(&line) + 1;
        if out.tokens + c > budget {
            continue;
        }
        out.text.push_str(&line);
        out.text.push('\n');
        out.tokens += c;
        out.memories += 1;
        out.ids.push(id);
    }
}

/// The block a session starts with: the last session's summary (at most a
/// third of the budget), then memories best first, each at most 120 tokens,
/// within `budget` tokens. Empty when there is nothing to say.
/// `memories`: the recall's hits and the standing memories it did not
/// reach ([`session_recall`] asks for them); they are ordered by
/// [`type_priority`], importance and score before the budget is filled.
pub fn session_block(
    last: Option<(String, String)>,
    memories: &[Recalled],
    budget: usize,
) -> Injection {
    let title = "# Cairn: this project's memory (search and memory_recall have more)\n";
    let mut out = Injection {
        text: title.to_string(),
        tokens: estimate_tokens(title) + 1,
        ..Injection::default()
    };
    if let Some((when, summary)) = last {
        let room = budget / 3;
        let head = format!("\n## Last session ({when})\n");
        let mut body = String::new();
        for line in summary.lines() {
            if estimate_tokens(&head) + estimate_tokens(&body) + estimate_tokens(line) + 1 > room {
                body.push_str("…\n");
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        if !body.trim().is_empty() && body.trim() != "…" {
            let block = head + &body;
            out.tokens += estimate_tokens(&block) + 1;
            out.text.push_str(&block);
            out.last_session = true;
        }
    }
    if memories
        .iter()
        .any(|r| !is_session_log(&r.memory.memory.id))
    {
        let head = "\n## Memories\n";
        out.text.push_str(head);
        out.tokens += estimate_tokens(head) + 1;
        // Session logs are the last session's business, above.
        let ordered = session_order(memories);
        let lines = ordered
            .iter()
            .filter(|(r, _)| !is_session_log(&r.memory.memory.id))
            .map(|(r, _)| (r.memory.memory.id.clone(), memory_line(r, 120)));
        fill(&mut out, lines, budget);
        out.reasons = ordered
            .into_iter()
            .filter(|(r, _)| out.ids.contains(&r.memory.memory.id))
            .map(|(_, why)| why)
            .collect();
    }
    if out.memories == 0 && !out.last_session {
        return Injection::default();
    }
    out
}

/// The memories a prompt brings: those at least `min_similarity` close to
/// it (cosine), best first, each at most 200 tokens, within `budget` tokens;
/// empty when none is that close or no similarity is known.
pub fn prompt_block(memories: &[Recalled], min_similarity: f64, budget: usize) -> Injection {
    let close: Vec<&Recalled> = memories
        .iter()
        .filter(|r| r.similarity.is_some_and(|s| s >= min_similarity))
        .collect();
    if close.is_empty() {
        return Injection::default();
    }
    let title = "# Cairn: memories that may bear on this prompt\n";
    let mut out = Injection {
        text: title.to_string(),
        tokens: estimate_tokens(title) + 1,
        ..Injection::default()
    };
    let lines = close
        .iter()
        .map(|r| (r.memory.memory.id.clone(), memory_line(r, 200)));
    fill(&mut out, lines, budget);
    if out.memories == 0 {
        return Injection::default();
    }
    out.reasons = close
        .iter()
        .filter(|r| out.ids.contains(&r.memory.memory.id))
        .map(|r| {
            let m = &r.memory.memory;
            format!(
                "{}: {}, importance {}, similarity {:.2} (floor {min_similarity:.2})",
                m.id,
                m.kind,
                m.importance,
                r.similarity.unwrap_or_default()
            )
        })
        .collect();
    out
}

/// The recall a prompt's injection makes (no access counted: being shown
/// a memory unasked is not using it).
pub fn prompt_recall(cfg: &InjectConfig) -> RecallOptions {
    RecallOptions {
        limit: cfg.prompt_memories.clamp(1, 20),
        no_touch: true,
        ..RecallOptions::default()
    }
}

/// The recall a session digest makes.
pub fn session_recall(cfg: &InjectConfig) -> RecallOptions {
    RecallOptions {
        limit: cfg.session_memories.clamp(1, 50),
        no_touch: true,
        standing: true,
        ..RecallOptions::default()
    }
}

impl Engine {
    /// What a prompt brings (see the module documentation).
    pub fn prompt_injection(&self, prompt: &str) -> Result<Injection> {
        let cfg = &self.config().inject;
        if prompt.trim().is_empty() || self.embedder().is_none() {
            return Ok(Injection::default());
        }
        let hits = self.recall(prompt, &prompt_recall(cfg))?;
        Ok(prompt_block(
            &hits,
            cfg.prompt_min_similarity,
            cfg.prompt_tokens,
        ))
    }

    /// What a session starts with, for a branch and recently changed files.
    pub fn session_injection(&self, branch: Option<&str>, changed: &[String]) -> Result<Injection> {
        let cfg = &self.config().inject;
        let project = self
            .root()
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let query = session_query(&project, branch, changed);
        let hits = if query.trim().is_empty() {
            Vec::new()
        } else {
            self.recall(&query, &session_recall(cfg))?
        };
        Ok(session_block(
            last_session(&self.memory_dir()),
            &hits,
            cfg.session_tokens,
        ))
    }
}
