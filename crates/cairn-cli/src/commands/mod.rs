//! One module per command; [`run`] sends the parsed command line to it.

mod bench;
mod capture;
mod config;
mod doctor;
mod eval;
mod graph;
mod index;
mod inject;
mod install;
mod jsontext;
mod memory;
mod model;
mod search;
mod serve;
mod setup;
mod status;
mod transfer;
mod userfile;

use anyhow::bail;

use crate::args::{
    Cli, Command, ConfigAction, HookClient, HooksAction, McpAction, McpClient, SetupClient,
};
use crate::progress::Bars;
use crate::project::{open_engine, project_root};

/// Runs the command `cli` names.
pub(crate) fn run(cli: &Cli) -> anyhow::Result<()> {
    let bars = Bars::new(cli.quiet);
    match &cli.command {
        Command::Index(a) => index::run(cli, &index::open_recovering(cli, &bars)?, a, &bars),
        Command::Search(a) => search::run(cli, a, &bars),
        Command::Export(a) => transfer::export(&open_engine(cli, &bars, true)?, a),
        Command::Import(a) => transfer::import(&open_engine(cli, &bars, false)?, a),
        Command::Graph { action } => graph::run(cli, action, &bars),
        Command::Status(a) => status::run(cli, a, &bars),
        Command::Eval(a) => eval::run(cli, a, &bars),
        Command::Remember(a) => memory::remember(
            &memory::memory_engine(cli, &bars, a.personal, true, false)?,
            a,
        ),
        Command::Recall(a) => memory::recall(cli, a, &bars),
        Command::Forget(a) => memory::forget(
            &memory::memory_engine(cli, &bars, a.personal, false, false)?,
            a,
        ),
        // A memory file is the truth, the index derived: an update needs no
        // index (none yet, or the daemon's first pass still making it), as
        // `forget` and `remember` need none.
        Command::Update(a) => memory::update(&open_engine(cli, &bars, false)?, a),
        Command::Undo(a) => memory::undo(
            &memory::memory_engine(cli, &bars, a.personal, false, false)?,
            a.id.as_deref(),
        ),
        Command::Expand(a) => expand(&open_engine(cli, &bars, true)?, a),
        Command::Why(a) => why(&open_engine(cli, &bars, true)?, a),
        Command::Watch(a) => serve::watch(cli, a, &bars),
        Command::Log(a) => memory::log(
            &memory::memory_engine(cli, &bars, a.personal, false, true)?,
            a.limit,
            a.json,
        ),
        Command::Projects(a) => search::projects(a),
        Command::Compact(a) => memory::compact(&open_engine(cli, &bars, false)?, a),
        Command::Hook(a) => {
            if matches!(a.client, crate::args::HookClient::ClaudeCode) && inject::injects(&a.event)
            {
                inject::hook(cli, &a.event);
            } else {
                capture::hook(cli, a.client, &a.event);
            }
            Ok(())
        }
        Command::Hooks {
            action:
                HooksAction::Install {
                    client,
                    print,
                    shared,
                },
        } => match client {
            // One default, local, everywhere: the hooks `cairn setup` writes,
            // into the same files.
            HookClient::ClaudeCode | HookClient::Opencode => setup::run_part(
                &project_root(cli)?,
                if matches!(client, HookClient::ClaudeCode) {
                    SetupClient::ClaudeCode
                } else {
                    SetupClient::Opencode
                },
                *shared,
                *print,
                false,
                setup::Part::Hooks,
            ),
            // Per-user files (~/.codex, ~/.openclaw): nothing local or shared.
            HookClient::Codex | HookClient::Openclaw => {
                capture::install(&project_root(cli)?, *client, *print)
            }
        },
        Command::Transcript(a) => capture::transcript(&open_engine(cli, &bars, false)?, a),
        Command::Serve(a) => serve::serve(cli, a, &bars),
        Command::Ui(a) => serve::ui(cli, a, &bars),
        Command::Daemon(a) => serve::daemon(cli, a, &bars),
        Command::Setup(a) => setup::run(&project_root(cli)?, a.client, a.shared, a.print, a.undo),
        Command::Mcp {
            action:
                McpAction::Install {
                    client,
                    print,
                    name,
                    shared,
                },
        } => {
            let setup_client = match client {
                McpClient::ClaudeCode => Some(SetupClient::ClaudeCode),
                McpClient::Cursor => Some(SetupClient::Cursor),
                McpClient::Vscode => Some(SetupClient::Vscode),
                // ~/.codex/config.toml is the user's own file either way.
                McpClient::Codex => None,
            };
            match setup_client {
                // One default, local, everywhere: the server entry `cairn
                // setup` writes, into the same file. An entry of another name
                // is written where it was before (the shared file).
                Some(c) if name == "cairn" => setup::run_part(
                    &project_root(cli)?,
                    c,
                    *shared,
                    *print,
                    false,
                    setup::Part::Mcp,
                ),
                _ => install::install(&project_root(cli)?, *client, *print, name),
            }
        }
        Command::Doctor(a) => {
            if !doctor::run(cli, a.vacuum, a.json)? {
                bail!("doctor found problems (see above)");
            }
            Ok(())
        }
        Command::Config {
            action: ConfigAction::Show { json },
        } => config::show(cli, *json),
        Command::Model { action } => model::run(cli, action, &bars),
        Command::Bench { what } => bench::run(cli, what, &bars),
    }
}

/// `cairn expand CHUNK_ID`: the section or definition around a hit.
fn expand(engine: &cairn::Engine, a: &crate::args::ExpandArgs) -> anyhow::Result<()> {
    let section = engine.expand(&a.chunk_id, a.context, a.max_tokens)?;
    if a.json {
        return crate::print::json(&section);
    }
    crate::print::section(&section);
    Ok(())
}

/// `cairn why TARGET`: the commits behind a symbol or a file.
fn why(engine: &cairn::Engine, a: &crate::args::WhyArgs) -> anyhow::Result<()> {
    let why = engine.why(
        &a.target,
        &cairn::WhyOptions {
            limit: a.limit,
            max_tokens: a.max_tokens,
        },
    )?;
    if a.json {
        return crate::print::json(&why);
    }
    crate::print::why(&why);
    Ok(())
}
