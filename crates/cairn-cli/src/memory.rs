//! `cairn remember | recall | forget | undo | log`.

use cairn::{Engine, MemoryInput, RecallOptions};
use clap::Args;

use crate::print;

#[derive(Args)]
pub struct RememberArgs {
    /// What to remember.
    text: String,
    /// Type: fact, decision, preference, convention, entity, relationship, event, note (others are kept).
    #[arg(long = "type", default_value = "note")]
    kind: String,
    /// 1 (trivia) to 10 (never forget).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(1..=10))]
    importance: u8,
    /// A tag (repeatable).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// An entity besides those found in the text (repeatable).
    #[arg(long = "entity")]
    entities: Vec<String>,
    /// Forget after this long: 30d, 12h, 2w, 1y.
    #[arg(long)]
    ttl: Option<String>,
    /// Forget at this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    expires: Option<String>,
    /// A file it was learned from: path, path#Heading or path:line (repeatable).
    #[arg(long = "source")]
    sources: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct RecallArgs {
    /// What to recall, in plain words.
    query: String,
    /// Memories to return.
    #[arg(short = 'n', long, default_value_t = 5)]
    limit: usize,
    /// Skip this many first.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Only this type (repeatable).
    #[arg(long = "type")]
    types: Vec<String>,
    /// Only with this tag (repeatable: any of them).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Only naming this entity (repeatable: any of them).
    #[arg(long = "entity")]
    entities: Vec<String>,
    /// Only this important or more.
    #[arg(long)]
    min_importance: Option<u8>,
    /// Only created at or after (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    since: Option<String>,
    /// Only created at or before.
    #[arg(long)]
    until: Option<String>,
    /// Include expired memories.
    #[arg(long)]
    include_expired: bool,
    /// Show each term of the score.
    #[arg(long)]
    explain: bool,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

pub fn remember(engine: &Engine, a: &RememberArgs) -> anyhow::Result<()> {
    let stored = engine.remember(&MemoryInput {
        text: a.text.clone(),
        kind: Some(a.kind.clone()),
        importance: Some(a.importance),
        tags: a.tags.clone(),
        entities: a.entities.clone(),
        ttl: a.ttl.clone(),
        expires: a.expires.clone(),
        sources: a.sources.clone(),
        client: "cli".into(),
        created: None,
    })?;
    if a.json {
        return print::json(&stored);
    }
    let m = &stored.memory.memory;
    match stored.similarity {
        Some(s) => println!(
            "updated {} (near-duplicate, similarity {s:.3}): {}",
            m.id, stored.memory.text
        ),
        None => println!("stored {} ({}, importance {})", m.id, m.kind, m.importance),
    }
    if !m.entities.is_empty() {
        println!("entities: {}", m.entities.join(", "));
    }
    Ok(())
}

pub fn recall(engine: &Engine, a: &RecallArgs) -> anyhow::Result<()> {
    let hits = engine.recall(
        &a.query,
        &RecallOptions {
            limit: a.limit,
            offset: a.offset,
            types: a.types.clone(),
            tags: a.tags.clone(),
            entities: a.entities.clone(),
            min_importance: a.min_importance,
            since: a.since.clone(),
            until: a.until.clone(),
            include_expired: a.include_expired,
            no_touch: false,
        },
    )?;
    if a.json {
        return print::json(&hits);
    }
    if hits.is_empty() {
        println!("no memories match");
    }
    for (i, h) in hits.iter().enumerate() {
        let m = &h.memory.memory;
        let mut flags = Vec::new();
        if h.source_changed {
            flags.push("source changed");
        }
        if h.expired {
            flags.push("expired");
        }
        let flags = if flags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", flags.join(", "))
        };
        println!(
            "{:>2}. {:.3}  {}  {} · importance {}{}",
            i + 1,
            h.score,
            m.id,
            m.kind,
            m.importance,
            flags
        );
        println!("    {}", h.memory.text.replace('\n', "\n    "));
        if a.explain {
            let terms: Vec<String> = h
                .terms
                .iter()
                .map(|t| format!("{} {:.3} → {:+.3}", t.name, t.value, t.contribution))
                .collect();
            println!("    [{}]", terms.join("; "));
        }
    }
    Ok(())
}

#[derive(Args)]
pub struct ForgetArgs {
    /// The memory id (or use the filters below for a bulk forget).
    id: Option<String>,
    /// Every memory of this type (repeatable).
    #[arg(long = "type")]
    types: Vec<String>,
    /// Every memory with this tag (repeatable).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Every memory created before this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    before: Option<String>,
    /// Every expired memory (alone: the expiry sweep).
    #[arg(long)]
    expired: bool,
    /// Show what would be forgotten; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Confirm a bulk forget.
    #[arg(long)]
    yes: bool,
}

pub fn forget(engine: &Engine, a: &ForgetArgs) -> anyhow::Result<()> {
    let verb = if a.dry_run { "would forget" } else { "forgot" };
    if let Some(id) = &a.id {
        if !a.types.is_empty() || !a.tags.is_empty() || a.before.is_some() || a.expired {
            anyhow::bail!("give a memory id or filters, not both");
        }
        let m = engine.forget(id, a.dry_run, "cli")?;
        println!("{verb} {}: {}", m.memory.id, m.text);
        return Ok(());
    }
    // A bulk forget changes nothing without --yes: it shows what it would do.
    let dry = a.dry_run || !a.yes;
    let filter = cairn::ForgetFilter {
        types: a.types.clone(),
        tags: a.tags.clone(),
        before: a.before.clone(),
        expired: a.expired,
    };
    let gone = engine.forget_where(&filter, dry, "cli")?;
    let verb = if dry { "would forget" } else { "forgot" };
    for m in &gone {
        println!("{verb} {}: {}", m.memory.id, m.text);
    }
    println!("{verb} {} memories", gone.len());
    if dry && !a.dry_run && !gone.is_empty() {
        println!("nothing changed: add --yes to forget them");
    }
    Ok(())
}

pub fn undo(engine: &Engine, id: Option<&str>) -> anyhow::Result<()> {
    let e = engine.undo(id, "cli")?;
    let state = if e.after.is_some() {
        "restored"
    } else {
        "removed"
    };
    println!("undone: memory {} {state}", e.id);
    Ok(())
}

pub fn log(engine: &Engine, limit: usize, json: bool) -> anyhow::Result<()> {
    let entries = engine.vault().entries()?;
    let start = entries.len().saturating_sub(limit);
    for e in &entries[start..] {
        if json {
            println!("{}", serde_json::to_string(e)?);
        } else {
            println!("{}  {:<7} {}  ({})", e.time, e.action, e.id, e.client);
        }
    }
    Ok(())
}
