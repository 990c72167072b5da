//! `cairn graph neighbors | path | communities`: the knowledge graph. When
//! the project's daemon runs (with this configuration), it answers from its
//! warm graph; otherwise the view is built here. `CAIRN_NO_DAEMON=1` always
//! builds it here.

use cairn_mcp::daemon::{
    GraphAnswer, GraphRequest, GraphView, config_fingerprint, graph_via_daemon, graph_view,
};

use crate::args::{Cli, GraphAction};
use crate::print;
use crate::progress::Bars;
use crate::project::{daemon_or_here, load_config, open_engine_with, project_root};

pub(crate) fn run(cli: &Cli, action: &GraphAction, bars: &Bars) -> anyhow::Result<()> {
    let (view, json) = match action {
        GraphAction::Neighbors { name, limit, json } => (
            GraphView::Neighbors {
                name: name.clone(),
                limit: *limit,
            },
            *json,
        ),
        GraphAction::Path { from, to, json } => (
            GraphView::Path {
                from: from.clone(),
                to: to.clone(),
            },
            *json,
        ),
        GraphAction::Communities {
            min_size,
            limit,
            json,
        } => (
            GraphView::Communities {
                min_size: *min_size,
                limit: *limit,
            },
            *json,
        ),
    };
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    let answer = daemon_or_here(
        || {
            graph_via_daemon(
                &root,
                GraphRequest {
                    view: view.clone(),
                    config: config_fingerprint(&config),
                },
            )
        },
        || {
            Ok(graph_view(
                &open_engine_with(&root, &config, bars, true)?,
                &view,
            )?)
        },
    )?;
    match answer {
        GraphAnswer::Neighbors { neighborhood } => {
            if json {
                return print::json(&neighborhood);
            }
            print::neighborhood(&neighborhood);
        }
        GraphAnswer::Path { path } => {
            if json {
                return print::json(&path);
            }
            print::graph_path(&path);
        }
        GraphAnswer::Communities { communities } => {
            if json {
                return print::json(&communities);
            }
            print::communities(&communities);
        }
    }
    Ok(())
}
