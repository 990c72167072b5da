//! `cairn config show`: every setting's effective value and its layer.

use cairn::Config;

use crate::args::Cli;
use crate::print;
use crate::project::{flag_sets, project_root};

/// A setting as `config show` prints it: a store URI without its password.
fn shown_value(key: &str, value: &toml::Value) -> toml::Value {
    match (key, value) {
        ("store.uri", toml::Value::String(uri)) => toml::Value::String(cairn_core::redact_uri(uri)),
        _ => value.clone(),
    }
}

pub(crate) fn show(cli: &Cli, json: bool) -> anyhow::Result<()> {
    let root = project_root(cli)?;
    let (_, sources) = Config::load_layers(&root, &cairn::Layers::from_env(flag_sets(cli)))?;
    if json {
        let rows: Vec<serde_json::Value> = sources
            .iter()
            .map(|(k, v, s)| serde_json::json!({"key": k, "value": shown_value(k, v), "source": s.to_string()}))
            .collect();
        return print::json(&rows);
    }
    let width = sources
        .iter()
        .map(|(k, v, _)| k.len() + shown_value(k, v).to_string().len())
        .max()
        .unwrap_or(0);
    for (k, v, s) in &sources {
        let kv = format!("{k} = {}", shown_value(k, v));
        say!("{kv:<w$}   # {s}", w = width + 3);
    }
    Ok(())
}
