//! `cairn status`: files, chunks, embedded chunks, model, index size, last
//! pass. When the project's daemon runs (with this configuration), it
//! answers: only it knows whether it is computing vectors right now.
//! `CAIRN_NO_DAEMON=1` always reads here.

use cairn_mcp::daemon::{StatusRequest, config_fingerprint, status_via_daemon};

use crate::args::{Cli, StatusArgs};
use crate::print;
use crate::progress::Bars;
use crate::project::{daemon_or_here, load_config, open_engine_with, project_root};

pub(crate) fn run(cli: &Cli, a: &StatusArgs, bars: &Bars) -> anyhow::Result<()> {
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    let (status, daemon) = daemon_or_here(
        || {
            status_via_daemon(
                &root,
                StatusRequest {
                    config: config_fingerprint(&config),
                },
            )
            .map(|(status, pid)| (status, Some(pid)))
        },
        || {
            Ok((
                open_engine_with(&root, &config, bars, true)?.status()?,
                None,
            ))
        },
    )?;
    if a.json {
        let mut v = serde_json::to_value(&status)?;
        if let (Some(pid), Some(o)) = (daemon, v.as_object_mut()) {
            o.insert("daemon_pid".into(), pid.into());
        }
        print::json(&v)
    } else {
        print::status(&status, daemon);
        Ok(())
    }
}
