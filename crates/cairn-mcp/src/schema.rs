//! The tools' input schemas as clients see them, and the check that holds
//! every call to them.
//!
//! schemars writes what a Rust type accepts: `"type": ["integer", "null"]`
//! for an `Option`, a `format` (`uint32`) for every number, `$defs` and
//! `$ref` for nested types, a `$schema` key on each tool. [`tidy`] keeps
//! what a model needs to call the tool right — types, ranges, enums,
//! descriptions — and drops the rest: a field left out is what `null` would
//! say, and the JSON Schema dialect of MCP tools is fixed by the protocol.
//!
//! [`check`] then holds each call's arguments to that schema before they
//! reach the tool: a number outside its `minimum`/`maximum` or a string
//! outside its `enum` is refused with a tool error that names the field and
//! what it may be, instead of being clamped in silence.

use serde_json::{Map, Value};

/// The schema as sent to clients: no `$schema`, `format`, `default` or
/// `title`, no `null` in types, nested types written in place, and a
/// `oneOf` of constants (an enum with documented variants) as an `enum`.
pub(crate) fn tidy(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut out = schema.clone();
    out.remove("$schema");
    let defs = match out.remove("$defs") {
        Some(Value::Object(d)) => d,
        _ => Map::new(),
    };
    let mut v = Value::Object(out);
    inline_refs(&mut v, &defs, 0);
    tidy_node(&mut v);
    match v {
        Value::Object(o) => o,
        _ => Map::new(),
    }
}

/// Replaces each `{"$ref": "#/$defs/X", …}` by the definition of `X` (its
/// own description dropped: the field's says what it is for), merged under
/// the keys the referring object has. Recursive definitions stop at a depth.
fn inline_refs(v: &mut Value, defs: &Map<String, Value>, depth: usize) {
    match v {
        Value::Object(o) => {
            if depth < 8
                && let Some(Value::String(r)) = o.get("$ref")
                && let Some(Value::Object(def)) =
                    r.strip_prefix("#/$defs/").and_then(|n| defs.get(n))
            {
                let mut def = def.clone();
                def.remove("description");
                o.remove("$ref");
                for (k, val) in def {
                    o.entry(k).or_insert(val);
                }
            }
            for child in o.values_mut() {
                inline_refs(child, defs, depth + 1);
            }
        }
        Value::Array(a) => {
            for child in a {
                inline_refs(child, defs, depth + 1);
            }
        }
        _ => {}
    }
}

/// One schema node, then the schemas below it.
fn tidy_node(v: &mut Value) {
    let Value::Object(o) = v else { return };
    for key in ["format", "default", "title"] {
        o.remove(key);
    }
    // A whole bound is written whole: `"minimum": 0`, not `0.0`.
    for key in ["minimum", "maximum"] {
        if let Some(Value::Number(n)) = o.get(key)
            && n.is_f64()
            && let Some(f) = n.as_f64()
            && f.fract() == 0.0
            && f.abs() < 9.0e15
        {
            o.insert(key.into(), Value::from(f as i64));
        }
    }
    // `"type": ["integer", "null"]` → `"type": "integer"`.
    if let Some(Value::Array(types)) = o.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        let ty = match <[Value; 1]>::try_from(kept) {
            Ok([one]) => one,
            Err(many) => Value::Array(many),
        };
        o.insert("type".into(), ty);
    }
    // `"anyOf": [X, {"type": "null"}]` → X.
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alts)) = o.get(key) else {
            continue;
        };
        let kept: Vec<Value> = alts
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .cloned()
            .collect();
        if kept.len() == 1
            && let Some(Value::Object(only)) = kept.into_iter().next()
        {
            o.remove(key);
            for (k, val) in only {
                o.entry(k).or_insert(val);
            }
        }
    }
    // A `oneOf` of documented constants is an enum to a caller.
    if let Some(Value::Array(alts)) = o.get("oneOf")
        && let Some(consts) = alts
            .iter()
            .map(|a| a.get("const").cloned())
            .collect::<Option<Vec<Value>>>()
    {
        let ty = if consts.iter().all(Value::is_string) {
            Some(Value::String("string".into()))
        } else {
            None
        };
        o.remove("oneOf");
        o.insert("enum".into(), Value::Array(consts));
        if let Some(ty) = ty {
            o.entry("type").or_insert(ty);
        }
    }
    if let Some(Value::Object(props)) = o.get_mut("properties") {
        for p in props.values_mut() {
            tidy_node(p);
        }
    }
    if let Some(items) = o.get_mut("items") {
        tidy_node(items);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(alts)) = o.get_mut(key) {
            for a in alts {
                tidy_node(a);
            }
        }
    }
}

/// Holds `args` to the top-level properties of a tidied `schema`: integers
/// within `minimum`/`maximum`, values of an `enum` (also each item of an
/// array whose items have one). A `null` counts as absent; other type errors
/// are left to deserialization.
pub(crate) fn check(schema: &Map<String, Value>, args: &Map<String, Value>) -> Result<(), String> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    for (name, value) in args {
        if let Some(Value::Object(prop)) = props.get(name) {
            check_value(name, prop, value)?;
        }
    }
    Ok(())
}

fn check_value(name: &str, prop: &Map<String, Value>, value: &Value) -> Result<(), String> {
    if value.is_null() {
        return Ok(());
    }
    if let Some(Value::Array(allowed)) = prop.get("enum")
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!(
            "{name} must be one of {} (got {value})",
            list.join(", ")
        ));
    }
    let ty = prop.get("type").and_then(Value::as_str);
    if ty == Some("integer") {
        let min = prop.get("minimum").and_then(Value::as_i64);
        let max = prop.get("maximum").and_then(Value::as_i64);
        let range = match (min, max) {
            (Some(a), Some(b)) => format!(" from {a} to {b}"),
            (Some(a), None) => format!(" of at least {a}"),
            (None, Some(b)) => format!(" of at most {b}"),
            (None, None) => String::new(),
        };
        // Integers past i64 (u64 or beyond) are out of every range here.
        let n = match value {
            Value::Number(n) if n.is_i64() || n.is_u64() => n.as_i64(),
            _ => return Err(format!("{name} must be an integer{range} (got {value})")),
        };
        let out = match n {
            Some(n) => min.is_some_and(|a| n < a) || max.is_some_and(|b| n > b),
            None => max.is_some(),
        };
        if out {
            return Err(format!("{name} must be an integer{range} (got {value})"));
        }
    }
    if ty == Some("array")
        && let (Some(Value::Object(items)), Value::Array(values)) = (prop.get("items"), value)
    {
        for v in values {
            check_value(name, items, v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn tidy_drops_noise_and_inlines_definitions() {
        let raw = obj(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "Op": {"description": "An op.", "oneOf": [
                    {"const": "a", "description": "A.", "type": "string"},
                    {"const": "b", "description": "B.", "type": "string"}
                ]},
                "Item": {"description": "An item.", "type": "object",
                         "properties": {"n": {"type": "integer", "format": "uint8"}}}
            },
            "type": "object",
            "properties": {
                "limit": {"description": "How many.", "type": ["integer", "null"],
                          "format": "uint32", "minimum": 1, "maximum": 20},
                "op": {"description": "Which.", "$ref": "#/$defs/Op"},
                "maybe_op": {"anyOf": [{"$ref": "#/$defs/Op"}, {"type": "null"}]},
                "items": {"type": "array", "default": [], "items": {"$ref": "#/$defs/Item"}}
            },
            "required": ["op"]
        }));
        let t = Value::Object(tidy(&raw));
        assert_eq!(
            t,
            json!({
                "type": "object",
                "properties": {
                    "limit": {"description": "How many.", "type": "integer", "minimum": 1, "maximum": 20},
                    "op": {"description": "Which.", "type": "string", "enum": ["a", "b"]},
                    "maybe_op": {"type": "string", "enum": ["a", "b"]},
                    "items": {"type": "array", "items": {"type": "object",
                              "properties": {"n": {"type": "integer"}}}}
                },
                "required": ["op"]
            })
        );
    }

    #[test]
    fn check_refuses_what_the_schema_does_not_allow() {
        let schema = obj(json!({"type": "object", "properties": {
            "importance": {"type": "integer", "minimum": 1, "maximum": 10},
            "offset": {"type": "integer", "minimum": 0},
            "op": {"type": "string", "enum": ["neighbors", "path"]},
            "kind": {"type": "array", "items": {"type": "string", "enum": ["doc", "code"]}}
        }}));
        let run = |args: Value| check(&schema, &obj(args));
        assert_eq!(
            run(json!({"importance": 10, "offset": 0, "op": "path"})),
            Ok(())
        );
        assert_eq!(run(json!({"importance": null, "other": "x"})), Ok(()));
        assert_eq!(
            run(json!({"importance": 50})),
            Err("importance must be an integer from 1 to 10 (got 50)".into())
        );
        assert!(run(json!({"importance": 0})).is_err());
        assert!(run(json!({"importance": 2.5})).is_err());
        assert!(run(json!({"importance": "5"})).is_err());
        assert!(run(json!({"importance": u64::MAX})).is_err());
        assert_eq!(
            run(json!({"offset": -1})),
            Err("offset must be an integer of at least 0 (got -1)".into())
        );
        assert_eq!(
            run(json!({"op": "nope"})),
            Err(r#"op must be one of "neighbors", "path" (got "nope")"#.into())
        );
        assert_eq!(
            run(json!({"kind": ["doc", "pictures"]})),
            Err(r#"kind must be one of "doc", "code" (got "pictures")"#.into())
        );
    }
}
