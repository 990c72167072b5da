//! `cairn bench writers`: many machines writing memories into one
//! PostgreSQL project at once. Each writer is a separate `cairn` process with
//! its own project folder (its own machine, as far as cairn can tell), all
//! under one `[store] project`; afterwards the store is audited for lost and
//! doubled memories, and every folder's next pass must hold all of them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use cairn::{Engine, MemoryInput, NoProgress};
use serde::{Deserialize, Serialize};

/// One writer's account of what it stored.
#[derive(Debug, Serialize, Deserialize)]
pub struct WriterReport {
    pub writer: usize,
    pub created: Vec<String>,
    pub updated: usize,
    pub seconds: f64,
}

/// Figures of one run.
#[derive(Debug, Serialize)]
pub struct WritersBench {
    pub processes: usize,
    pub memories_each: usize,
    pub seconds: f64,
    pub created: usize,
    pub merged_as_duplicates: usize,
    pub stored: u64,
    pub lost: usize,
    pub duplicate_paths: u64,
    pub duplicate_chunks: u64,
    pub duplicate_memory_texts: u64,
    /// Memory files in each writer's folder after one more pass.
    pub files_per_folder: Vec<usize>,
    pub remembers_per_second: f64,
}

/// The text of writer `w`'s memory `i`: distinct words per writer, so no two
/// are near-duplicates of each other.
fn text(w: usize, prose: &str, i: usize) -> String {
    format!("Writer {w} records fact {i}: {prose}")
}

/// The child: `remember` `n` memories in the current project, print a report.
pub fn child(engine: &Engine, writer: usize, n: usize) -> anyhow::Result<()> {
    let started = Instant::now();
    let prose = cairn_embed::synthetic_prose(n, 120, 1_000 + writer as u64);
    let mut report = WriterReport {
        writer,
        created: Vec::with_capacity(n),
        updated: 0,
        seconds: 0.0,
    };
    for (i, p) in prose.iter().enumerate() {
        let s = engine.remember(&MemoryInput {
            text: text(writer, p, i),
            kind: Some("fact".into()),
            client: format!("writer-{writer}"),
            ..MemoryInput::default()
        })?;
        if s.action == "created" {
            report.created.push(s.memory.memory.id);
        } else {
            report.updated += 1;
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    crate::print::out_line(format_args!("{}", serde_json::to_string(&report)?));
    Ok(())
}

fn memory_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.filter_map(|f| f.ok())
            .filter(|f| f.path().extension().is_some_and(|x| x == "md"))
            .count()
    })
}

/// The parent: start the writers, wait, audit.
pub fn run(
    uri: &str,
    processes: usize,
    memories: usize,
    sets: &[String],
    open: &dyn Fn(&Path, &str) -> anyhow::Result<Engine>,
) -> anyhow::Result<WritersBench> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let project = format!("bench-writers-{stamp}-{}", std::process::id());
    let base = std::env::temp_dir().join(&project);
    let folders: Vec<PathBuf> = (0..processes)
        .map(|w| {
            let d = base.join(format!("machine-{w}"));
            std::fs::create_dir_all(&d)?;
            std::fs::write(cairn::paths::config_file(&d), "")?;
            Ok(d)
        })
        .collect::<std::io::Result<_>>()
        .context("writer folders")?;
    let exe = std::env::current_exe().context("this program's path")?;
    tell!("{processes} writers × {memories} memories into project {project}");
    let started = Instant::now();
    let children = folders
        .iter()
        .enumerate()
        .map(|(w, dir)| {
            Command::new(&exe)
                .arg("-q")
                .arg("--store")
                .arg(uri)
                .arg("-C")
                .arg(dir)
                .args(sets.iter().flat_map(|s| ["--set", s.as_str()]))
                .arg("--set")
                .arg(format!("store.project={project}"))
                .args(["bench", "writer", "--writer"])
                .arg(w.to_string())
                .arg("--memories")
                .arg(memories.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .with_context(|| format!("starting writer {w}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut reports = Vec::with_capacity(processes);
    for (w, c) in children.into_iter().enumerate() {
        let out = c
            .wait_with_output()
            .with_context(|| format!("writer {w}"))?;
        if !out.status.success() {
            bail!("writer {w} failed: {}", out.status);
        }
        let line = String::from_utf8_lossy(&out.stdout);
        let r: WriterReport = serde_json::from_str(line.trim())
            .with_context(|| format!("writer {w}'s report: {line}"))?;
        reports.push(r);
    }
    let seconds = started.elapsed().as_secs_f64();

    // Audit the store, then let every machine catch up.
    let engine = open(&folders[0], &project)?;
    let prefix = engine.memory_prefix();
    let store = cairn_postgres::PgStore::connect(uri, &project)?;
    let audit = store.audit(&prefix)?;
    let manifest = cairn_core::IndexWriter::manifest(&store)?;
    let created: Vec<&String> = reports.iter().flat_map(|r| &r.created).collect();
    let lost = created
        .iter()
        .filter(|id| !manifest.contains_key(&format!("{prefix}{id}.md")))
        .count();
    drop(engine);
    let mut files_per_folder = Vec::with_capacity(processes);
    for dir in &folders {
        let e = open(dir, &project)?;
        e.index(&[], &NoProgress)?;
        files_per_folder.push(memory_files(&e.memory_dir()));
    }
    // The folders were scratch; the audit is in the figures.
    let _ = std::fs::remove_dir_all(&base);
    Ok(WritersBench {
        processes,
        memories_each: memories,
        seconds,
        created: created.len(),
        merged_as_duplicates: reports.iter().map(|r| r.updated).sum(),
        stored: audit.memories,
        lost,
        duplicate_paths: audit.duplicate_paths,
        duplicate_chunks: audit.duplicate_chunks,
        duplicate_memory_texts: audit.duplicate_memory_texts,
        files_per_folder,
        remembers_per_second: (processes * memories) as f64 / seconds.max(1e-9),
    })
}

/// The figures of `bench writers`, for people.
pub(crate) fn print(b: &WritersBench) {
    say!(
        "{} writers × {} memories in {:.1} s ({:.1} remembers/s)",
        b.processes,
        b.memories_each,
        b.seconds,
        b.remembers_per_second
    );
    say!(
        "created {}   merged as near-duplicates {}",
        b.created,
        b.merged_as_duplicates
    );
    say!("stored  {}   lost {}", b.stored, b.lost);
    say!(
        "doubled: paths {}   chunks {}   memory texts {}",
        b.duplicate_paths,
        b.duplicate_chunks,
        b.duplicate_memory_texts
    );
    say!(
        "memory files per folder after a pass: {:?}",
        b.files_per_folder
    );
}
