//! `cairn remember | recall | forget | undo | log`.

use cairn::{Engine, MemoryInput, RecallOptions};
use cairn_mcp::daemon::{RecallRequest, config_fingerprint, recall_via_daemon};

use crate::args::{Cli, CompactArgs, ForgetArgs, RecallArgs, RememberArgs};
use crate::print;
use crate::progress::Bars;
use crate::project::{daemon_or_here, load_config, project_root};

/// The engine a memory command works on: the project's, or with
/// `personal` the personal memories' (created on first store when
/// `create`), opened without touching the project's folder.
pub(crate) fn memory_engine(
    cli: &Cli,
    bars: &Bars,
    personal: bool,
    create: bool,
    must_exist: bool,
) -> anyhow::Result<Engine> {
    if !personal {
        return crate::project::open_engine(cli, bars, must_exist);
    }
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    let embedder = cairn::load_embedder(&config, bars);
    cairn::open_personal(&config, embedder, create)?.ok_or_else(|| {
        anyhow::anyhow!(
            "no personal memories ([memory] personal is none, or nothing was stored with `cairn remember --personal` yet)"
        )
    })
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
        supersedes: a.supersedes.clone(),
        by_person: true,
    })?;
    if let Some(w) = &stored.warning {
        tell!("cairn: warning: {w}");
    }
    if let Some(why) = &stored.slowed {
        tell!("cairn: {why}");
    }
    if a.json {
        return print::json(&stored);
    }
    let m = &stored.memory.memory;
    match stored.similarity {
        Some(s) => say!(
            "updated {} (near-duplicate, similarity {s:.3}): {}",
            m.id,
            stored.memory.text
        ),
        None => say!("stored {} ({}, importance {})", m.id, m.kind, m.importance),
    }
    if !m.supersedes.is_empty() {
        say!("replaces: {}", m.supersedes.join(", "));
    }
    if a.personal {
        say!("personal: kept in {}", engine.memory_dir().display());
    }
    if !m.entities.is_empty() {
        say!("entities: {}", m.entities.join(", "));
    }
    Ok(())
}

/// `cairn recall`: answered by the project's daemon when one runs with this
/// configuration (its model is loaded), else here. `CAIRN_NO_DAEMON=1`
/// always recalls here.
pub fn recall(cli: &Cli, a: &RecallArgs, bars: &Bars) -> anyhow::Result<()> {
    let options = RecallOptions {
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
        min_score: a.min_score,
        relative_floor: a.relative_floor,
        raw_fts: a.fts,
        standing: false,
        show_replaced: a.replaced,
    };
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    let hits = daemon_or_here(
        || {
            recall_via_daemon(
                &root,
                RecallRequest {
                    query: a.query.clone(),
                    options: options.clone(),
                    config: config_fingerprint(&config),
                },
            )
        },
        // A read never creates an index: with none, say so.
        || {
            let engine = crate::project::open_index(&root, &config, bars, true)?;
            if config.store.uri.trim().is_empty() && engine.index_unbuilt()? {
                // One never built (a zero-length file) answered "no memories
                // match" until `cairn index`. Memories are files: a pass over
                // the memory folder alone, what every memory write ends
                // with, makes them found now.
                let report = engine.index(&[], &cairn::NoProgress)?;
                if !bars.quiet() {
                    tell!(
                        "cairn: the index at {} was empty (never built): indexed the memory folder first ({} files); `cairn index` adds the docs and code",
                        engine.index_path().display(),
                        report.files_seen
                    );
                }
            }
            Ok(engine.recall(&a.query, &options)?)
        },
    )?;
    // Whether any memory is close in meaning: on stderr, the list stays on stdout.
    let vectors_ran = config.embed.model != "none" && !a.fts;
    print::confidence_note(
        hits.iter().map(|h| h.similarity),
        vectors_ran && !hits.is_empty(),
        config.search.confident_similarity,
        "memory",
        bars.quiet(),
    );
    if a.json {
        return print::json(&hits);
    }
    if hits.is_empty() {
        say!("no memories match");
    }
    for (i, h) in hits.iter().enumerate() {
        let m = &h.memory.memory;
        let mut flags = Vec::new();
        if h.source_changed {
            flags.push("source changed".to_string());
        }
        if h.expired {
            flags.push("expired".to_string());
        }
        if let Some(by) = &h.superseded_by {
            flags.push(format!("replaced by {by}"));
        }
        if h.personal {
            flags.push("personal".to_string());
        }
        let flags = if flags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", flags.join(", "))
        };
        say!(
            "{:>2}. {:.3}  {}  {} · importance {}{}",
            i + 1,
            h.score,
            m.id,
            m.kind,
            m.importance,
            flags
        );
        say!("    {}", h.memory.text.replace('\n', "\n    "));
        for (i, id) in h.replaces.iter().enumerate() {
            match h.replaced_lines.get(i) {
                Some(line) if !line.is_empty() => say!("    replaces {id}: {line}"),
                _ => say!("    replaces {id}"),
            }
        }
        if a.explain {
            let terms: Vec<String> = h
                .terms
                .iter()
                .map(|t| format!("{} {:.3} → {:+.3}", t.name, t.value, t.contribution))
                .collect();
            say!("    [{}]", terms.join("; "));
        }
    }
    Ok(())
}

pub fn forget(engine: &Engine, a: &ForgetArgs) -> anyhow::Result<()> {
    let verb = if a.dry_run { "would forget" } else { "forgot" };
    if let Some(id) = &a.id {
        if !a.types.is_empty() || !a.tags.is_empty() || a.before.is_some() || a.expired {
            anyhow::bail!("give a memory id or filters, not both");
        }
        if a.purge {
            if a.dry_run {
                anyhow::bail!("--purge cannot be a dry run: it removes every copy");
            }
            // The text is not printed: it may be the secret being purged.
            let removed = engine.purge_memory(id, "cli")?;
            say!(
                "purged {id}: {} files removed (memory, trash, history), index rows dropped, index vacuumed",
                removed.len()
            );
            return Ok(());
        }
        let m = engine.forget(id, a.dry_run, "cli")?;
        say!("{verb} {}: {}", m.memory.id, m.text);
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
        say!("{verb} {}: {}", m.memory.id, m.text);
    }
    say!("{verb} {} memories", gone.len());
    if dry && !a.dry_run && !gone.is_empty() {
        say!("nothing changed: add --yes to forget them");
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
    say!("undone: memory {} {state}", e.id);
    Ok(())
}

pub fn log(engine: &Engine, limit: usize, json: bool) -> anyhow::Result<()> {
    let entries = engine.vault().entries()?;
    let start = entries.len().saturating_sub(limit);
    // Where each memory stands in the chains of what replaced what, as the
    // index has them now (a forgotten memory replaces nothing).
    let chains = cairn::chain_links(&*engine.supersessions()?);
    for e in &entries[start..] {
        let links = chains.get(&e.id).filter(|_| e.after.is_some());
        if json {
            let mut v = serde_json::to_value(e)?;
            if let Some(l) = links {
                v["chain"] = serde_json::to_value(l)?;
            }
            crate::print::out_line(format_args!("{v}"));
        } else {
            let mut chain = String::new();
            if let Some(l) = links {
                if !l.replaces.is_empty() {
                    chain.push_str(&format!("  replaces {}", l.replaces.join(", ")));
                }
                if let Some(by) = &l.replaced_by {
                    chain.push_str(&format!("  replaced by {by}"));
                }
            }
            say!(
                "{}  {:<7} {}  ({}){chain}",
                e.time,
                e.action,
                e.id,
                e.client
            );
        }
    }
    Ok(())
}

/// `cairn compact`: recent memories summarised into today's session log.
pub(crate) fn compact(engine: &Engine, a: &CompactArgs) -> anyhow::Result<()> {
    let c = engine.compact(&cairn::CompactOptions {
        since: a.since.clone(),
        types: a.types.clone(),
        tags: a.tags.clone(),
        dry_run: a.dry_run,
    })?;
    say!("{}", c.summary);
    match &c.log {
        Some(log) => tell!("compacted {} memories into {}", c.memories, log.display()),
        None => tell!("dry run: {} memories, nothing written", c.memories),
    }
    Ok(())
}

/// `cairn update ID`: changes a memory (or shows the change, `--dry-run`).
pub fn update(engine: &Engine, a: &crate::args::UpdateArgs) -> anyhow::Result<()> {
    let patch = cairn::MemoryPatch {
        text: a.text.clone(),
        kind: a.kind.clone(),
        importance: a.importance,
        tags: (!a.tags.is_empty()).then(|| a.tags.clone()),
        ttl: a.ttl.clone(),
        expires: a.expires.clone(),
        client: "cli".into(),
    };
    if patch.text.is_none()
        && patch.kind.is_none()
        && patch.importance.is_none()
        && patch.tags.is_none()
        && patch.ttl.is_none()
        && patch.expires.is_none()
    {
        anyhow::bail!(
            "nothing to change: give --text, --type, --importance, --tag, --ttl or --expires"
        );
    }
    let view = engine.update_memory(&a.id, &patch, a.dry_run)?;
    if a.json {
        return print::json(&view);
    }
    let m = &view.memory;
    say!(
        "{} {} ({}, importance {}): {}",
        if a.dry_run { "would update" } else { "updated" },
        m.id,
        m.kind,
        m.importance,
        view.text
    );
    Ok(())
}
