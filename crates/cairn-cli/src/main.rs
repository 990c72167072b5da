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
    quiet_on_closed_stdout();
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
        Err(e) => {
            tell!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `cairn search … | head -1`: when the reader goes away, `println!` panics
/// with "failed printing to stdout: Broken pipe". That is the reader's
/// choice, not a failure: exit at once and quietly, as `cat` would. Every
/// other panic still reports as usual.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
