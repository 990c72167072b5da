//! The knowledge graph's views, computed in one place for every door: the
//! `graph` tool, the page's graph API, the daemon's answer to `cairn graph`
//! and the CLI's own when no daemon runs.

use serde::{Deserialize, Serialize};

/// Smallest community a communities view shows when not told otherwise.
pub const MIN_COMMUNITY_SIZE: usize = 3;

/// Which graph view ([`cairn::Engine`]'s `graph_*`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "view", rename_all = "lowercase")]
pub enum GraphView {
    /// `graph_neighbors(name, limit)`.
    Neighbors {
        /// The entity.
        name: String,
        /// Most neighbours (0: all).
        limit: usize,
    },
    /// `graph_path(from, to)`.
    Path {
        /// Start entity.
        from: String,
        /// End entity.
        to: String,
    },
    /// `graph_communities(min_size)`, the largest `limit` of them.
    Communities {
        /// Smallest community.
        min_size: usize,
        /// Most communities (0: all).
        #[serde(default)]
        limit: usize,
    },
}

/// A graph view's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "view", rename_all = "lowercase")]
pub enum GraphAnswer {
    /// An entity and its neighbours.
    Neighbors {
        /// As `graph_neighbors` returns it.
        neighborhood: cairn::Neighborhood,
    },
    /// The chain of links, each node with the relation to the next.
    Path {
        /// As `graph_path` returns it.
        path: Vec<(cairn::GraphNode, String)>,
    },
    /// The communities.
    Communities {
        /// As `graph_communities` returns them, cut to the view's limit.
        communities: cairn::Communities,
    },
}

/// One graph view from an engine.
pub fn graph_view(engine: &cairn::Engine, view: &GraphView) -> cairn::Result<GraphAnswer> {
    Ok(match view {
        GraphView::Neighbors { name, limit } => GraphAnswer::Neighbors {
            neighborhood: engine.graph_neighbors(name, *limit)?,
        },
        GraphView::Path { from, to } => GraphAnswer::Path {
            path: engine.graph_path(from, to)?,
        },
        GraphView::Communities { min_size, limit } => {
            let mut communities = engine.graph_communities(*min_size)?;
            if *limit > 0 {
                communities.communities.truncate(*limit);
            }
            GraphAnswer::Communities { communities }
        }
    })
}

impl GraphAnswer {
    /// The answer as the `graph` tool and the page's API send it: the
    /// neighbourhood or the communities as they are, a path as
    /// `{"path": [{"node", "rel_to_next"}, …]}`.
    pub fn into_value(self) -> serde_json::Value {
        use serde_json::json;
        match self {
            GraphAnswer::Neighbors { neighborhood } => json!(neighborhood),
            GraphAnswer::Path { path } => json!({"path": path
                .into_iter()
                .map(|(node, rel)| json!({"node": node, "rel_to_next": rel}))
                .collect::<Vec<_>>()}),
            GraphAnswer::Communities { communities } => json!(communities),
        }
    }
}
