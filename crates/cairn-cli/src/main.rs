//! `cairn`: index a project's docs, code and memories and search them — from
//! the command line, or over MCP for AI assistants.
//!
//! `args.rs` is the command line, `commands/` one module per command,
//! `project.rs` how a command opens its project, `print.rs` the human
//! printers, `progress.rs` the bars on stderr.

// First: the `say!` and `tell!` macros it defines are used by the others.
#[macro_use]
mod print;
mod args;
mod commands;
mod progress;
mod project;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let level = if cli.quiet {
        "error"
    } else {
        match cli.verbose {
            0 => "warn",
            1 => "info",
            _ => "debug",
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    // Colours only on a terminal: a log piped to a file or another
    // program gets no escape sequences at all. Either way every log line
    // goes through the sanitizer of the human output (a file name in a
    // message can hold ESC or CR).
    let colours = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colours)
        .with_writer(print::LogWriter { colours })
        .with_target(false)
        .init();
    match commands::run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        // A reader gone away (`cairn export | head`) is not a failure; the
        // lines printed with `say!` end the same way (`print::out_line`).
        Err(e) if reader_went_away(&e) => ExitCode::SUCCESS,
        Err(e) => {
            tell!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the error (or one it was caused by) is a write to a pipe whose
/// reader has gone away.
fn reader_went_away(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(print::is_broken_pipe)
}
