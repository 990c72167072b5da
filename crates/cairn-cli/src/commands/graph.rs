//! `cairn graph neighbors | path | communities`: the knowledge graph.

use cairn::Engine;

use crate::args::GraphAction;
use crate::print;

pub(crate) fn run(engine: &Engine, action: &GraphAction) -> anyhow::Result<()> {
    match action {
        GraphAction::Neighbors { name, limit, json } => {
            let n = engine.graph_neighbors(name, *limit)?;
            if *json {
                return print::json(&n);
            }
            print::neighborhood(&n);
        }
        GraphAction::Path { from, to, json } => {
            let p = engine.graph_path(from, to)?;
            if *json {
                return print::json(&p);
            }
            print::graph_path(&p);
        }
        GraphAction::Communities {
            min_size,
            limit,
            json,
        } => {
            let mut c = engine.graph_communities(*min_size)?;
            if *limit > 0 {
                c.communities.truncate(*limit);
            }
            if *json {
                return print::json(&c);
            }
            print::communities(&c);
        }
    }
    Ok(())
}
