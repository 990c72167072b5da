//! `cairn doctor`: is everything this project needs in order?

use std::path::Path;

use cairn::Engine;
use cairn_embed::{ModelSpec, locate_model, verify_model};
use serde_json::{Value, json};

use crate::args::Cli;
use crate::print;
use crate::project::{load_config, project_root};

/// One line of the report.
struct Check {
    name: &'static str,
    /// `ok`, `warn`, `fail` or `info`.
    state: &'static str,
    detail: String,
}

fn mb(bytes: u64) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

fn model_check(model: &str) -> Check {
    if model == "none" {
        return Check {
            name: "model",
            state: "info",
            detail: "none configured: BM25 only".into(),
        };
    }
    let Some(spec) = ModelSpec::named(model).filter(|m| m.kind == cairn_embed::ModelKind::Embedder)
    else {
        return Check {
            name: "model",
            state: "warn",
            detail: format!("{model:?} is no local model: searching with BM25 only"),
        };
    };
    match locate_model(&spec) {
        Ok(None) => Check {
            name: "model",
            state: "warn",
            detail: format!("{} not downloaded: `cairn model fetch`", spec.name),
        },
        Err(e) => Check {
            name: "model",
            state: "fail",
            detail: e.to_string(),
        },
        Ok(Some(loc)) => {
            let bad: Vec<String> = verify_model(&spec, &loc)
                .into_iter()
                .filter_map(|(f, r)| r.err().map(|e| format!("{f}: {e}")))
                .collect();
            if bad.is_empty() {
                Check {
                    name: "model",
                    state: "ok",
                    detail: format!(
                        "{} in {} ({} files, SHA-256 match)",
                        spec.name,
                        loc.dir.display(),
                        spec.files.len()
                    ),
                }
            } else {
                Check {
                    name: "model",
                    state: "fail",
                    detail: format!(
                        "{} (`rm -r` the folder and `cairn model fetch`)",
                        bad.join("; ")
                    ),
                }
            }
        }
    }
}

fn index_check(engine: &Engine) -> anyhow::Result<Check> {
    let h = engine.check_index()?;
    let s = engine.status()?;
    let mut problems = Vec::new();
    if h.schema.0 != h.schema.1 {
        problems.push(format!(
            "schema {} (this build writes {})",
            h.schema.0, h.schema.1
        ));
    }
    problems.extend(h.integrity.iter().take(5).cloned());
    if let Some(f) = &h.fts {
        problems.push(format!(
            "FTS: {f} (`cairn index` after deleting the index rebuilds it)"
        ));
    }
    Ok(if problems.is_empty() {
        Check {
            name: "index",
            state: "ok",
            detail: format!(
                "schema {}, integrity ok, FTS consistent; {} files, {} chunks, {}",
                h.schema.0,
                s.files,
                s.chunks,
                mb(s.index_bytes)
            ),
        }
    } else {
        Check {
            name: "index",
            state: "fail",
            detail: problems.join("; "),
        }
    })
}

#[cfg(unix)]
fn daemon_check(root: &Path) -> Check {
    let sock = cairn_mcp::daemon::socket_path(root);
    let pid = std::fs::read_to_string(cairn_mcp::daemon::lock_path(root))
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    match std::os::unix::net::UnixStream::connect(&sock) {
        Ok(_) => Check {
            name: "daemon",
            state: "ok",
            detail: format!(
                "running{} on {}",
                pid.map(|p| format!(" (pid {p})")).unwrap_or_default(),
                sock.display()
            ),
        },
        Err(_) if sock.exists() => Check {
            name: "daemon",
            state: "warn",
            detail: format!(
                "stale socket {} (the next `cairn serve` replaces it)",
                sock.display()
            ),
        },
        Err(_) => Check {
            name: "daemon",
            state: "info",
            detail: "not running (`cairn serve` starts it on demand)".into(),
        },
    }
}

#[cfg(not(unix))]
fn daemon_check(_root: &Path) -> Check {
    Check {
        name: "daemon",
        state: "info",
        detail: "no shared daemon on this platform".into(),
    }
}

/// The capture hooks' health: last success and last error per client.
fn hooks_check(root: &Path) -> Check {
    let path = cairn::paths::hooks_health(root);
    let Some(mut health) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return Check {
            name: "hooks",
            state: "info",
            detail: "no capture hook has run (`cairn hooks install claude-code|codex|opencode|openclaw`)".into(),
        };
    };
    // A file of an older version may hold nanoseconds.
    cairn::whole_seconds(&mut health);
    let mut parts = Vec::new();
    let mut state = "ok";
    for (client, h) in health.as_object().into_iter().flatten() {
        let ok = h["last_success"].as_str().unwrap_or("never");
        let mut part = format!("{client}: last success {ok}");
        if let Some(err) = h["last_error"].as_object() {
            let when = err.get("time").and_then(Value::as_str).unwrap_or("");
            let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
            part.push_str(&format!("; last error {when}: {msg}"));
            // An error newer than the last success needs a look.
            if when > ok {
                state = "warn";
            }
        }
        parts.push(part);
    }
    Check {
        name: "hooks",
        state,
        detail: parts.join(" | "),
    }
}

/// The memories that replace more than one other, and the replacements
/// the bound refused (a memory naming too many, another type, a more
/// important one): one memory must not quietly hide others.
fn replaces_check(engine: &Engine) -> anyhow::Result<Check> {
    let bound = engine.supersession_bound()?;
    let mut wide: Vec<String> = bound
        .naming
        .iter()
        .filter(|(_, n)| *n > 1)
        .map(|(id, n)| format!("{id} names {n}"))
        .collect();
    let mut refused: Vec<String> = Vec::new();
    for (new, old, why) in &bound.refused {
        // A memory naming too many replaces none: one line for it.
        let line = match why {
            cairn::Refusal::TooMany => format!("{new} replaces none of those it names"),
            _ => format!("{new} → {old} refused: {}", why.reason()),
        };
        if !refused.contains(&line) {
            refused.push(line);
        }
    }
    let state = if refused.is_empty() && wide.is_empty() {
        "ok"
    } else {
        "warn"
    };
    let held = bound.chains.len();
    let mut detail = format!("{held} memories replaced by newer ones");
    if !wide.is_empty() {
        let n = wide.len();
        wide.truncate(10);
        detail.push_str(&format!(
            "; {n} memories replace more than one: {}",
            wide.join(", ")
        ));
    }
    if !refused.is_empty() {
        // Every refused link counts, though a memory naming too many takes
        // one line.
        let n = bound.refused.len();
        refused.truncate(10);
        detail.push_str(&format!(
            "; {n} replacements refused (a memory replaces at most {} of its own type, none more important): {}",
            cairn::MAX_REPLACED,
            refused.join(", ")
        ));
    }
    Ok(Check {
        name: "replaces",
        state,
        detail,
    })
}

/// Runs every check; `Ok(false)` when one failed.
pub fn run(cli: &Cli, vacuum: bool, json: bool) -> anyhow::Result<bool> {
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    let mut checks = vec![model_check(&config.embed.model)];
    let index = cairn::paths::index_file(&root);
    let mut sizes: Option<(u64, u64)> = None;
    let on_server = !config.store.uri.trim().is_empty();
    // A damaged file (header, `PRAGMA quick_check`, or SQLite's own word on
    // open) is named with the one command that fixes it.
    let damaged = |what: &str| Check {
        name: "index",
        state: "fail",
        detail: format!(
            "damaged: {what}. Fix: `cairn index` sets it aside ({}.damaged-<time>) and rebuilds it from the files; no memory is lost (they are files)",
            index.display()
        ),
    };
    let problems = cairn::index_problems(&root, &config)?;
    let opened = if problems.is_empty() && (on_server || index.exists()) {
        // The checks read the index only: no model is loaded for them.
        match cairn::Open::new(&root, &config).embedder(None).engine() {
            Ok(engine) => Some(engine),
            Err(e) if e.is_damaged_index() => {
                checks.push(damaged(&e.to_string()));
                None
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        None
    };
    if !problems.is_empty() {
        let shown: Vec<&str> = problems.iter().take(3).map(String::as_str).collect();
        checks.push(damaged(&shown.join("; ")));
    } else if let Some(engine) = opened {
        if !on_server && engine.index_unbuilt()? {
            // A zero-length file (SQLite reads it as an empty database):
            // every read answered nothing, search and recall included.
            checks.push(Check {
                name: "index",
                state: "warn",
                detail: format!(
                    "empty at {}: never built (no pass finished, no file in it); `cairn index` builds it",
                    index.display()
                ),
            });
        } else {
            checks.push(index_check(&engine)?);
        }
        let o = engine.orphans();
        checks.push(Check {
            name: "temp",
            state: if o.restored + o.removed == 0 { "ok" } else { "info" },
            detail: format!(
                "{} memories restored and {} temp files removed that killed writers left (cleared on every open)",
                o.restored, o.removed
            ),
        });
        checks.push(replaces_check(&engine)?);
        if vacuum {
            let (before, after) = engine.vacuum()?;
            sizes = Some((before, after));
            checks.push(Check {
                name: "vacuum",
                state: "ok",
                detail: format!("{} → {}", mb(before), mb(after)),
            });
        }
    } else if !(on_server || index.exists()) {
        checks.push(Check {
            name: "index",
            state: "info",
            detail: format!("none yet at {} (`cairn index`)", index.display()),
        });
    }
    checks.push(daemon_check(&root));
    checks.push(hooks_check(&root));
    let ok = checks.iter().all(|c| c.state != "fail");
    if json {
        let rows: Vec<Value> = checks
            .iter()
            .map(|c| json!({"check": c.name, "state": c.state, "detail": c.detail}))
            .collect();
        print::json(&json!({
            "ok": ok,
            "checks": rows,
            "vacuum_bytes": sizes.map(|(b, a)| json!({"before": b, "after": a})),
        }))?;
    } else {
        for c in &checks {
            say!("{:<7} {:<4}  {}", c.name, c.state, c.detail);
        }
    }
    Ok(ok)
}
