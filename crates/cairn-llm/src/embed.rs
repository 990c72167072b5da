//! Embedding models over HTTP: [`RemoteEmbedder`] speaks one [`EmbedApi`]
//! and implements the core `Embedder` trait.
//!
//! Each API's request and answer follow its public reference (named on each
//! variant); the batch limits are the APIs' own, met with room to spare.
//! Every vector is scaled to unit length, and a model's vectors live in their
//! own space (model id `<api>:<model>`), so switching re-embeds rather than
//! mixing.
//!
//! No request is made until there is text to embed: the vector length is
//! learned from the first answer and kept in a small cache file (one entry
//! per API, endpoint and model), so opening a project whose vectors are all
//! there costs nothing, and the endpoint may even be down.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::{Error, agent, post_json};

/// Which embedding API a remote model speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbedApi {
    /// Any OpenAI-compatible `POST {base_url}/embeddings` (OpenAI, vLLM, LM
    /// Studio, Ollama's `/v1`): `{model, input: [..]}` → `data[].embedding`
    /// (OpenAI API reference, "Create embeddings").
    OpenAi,
    /// Ollama's native `POST {base_url}/api/embed`: `{model, input: [..]}` →
    /// `{embeddings: [[..]]}` (ollama `docs/api.md`, "Generate Embeddings").
    Ollama,
    /// Google's Gemini API: `POST {base_url}/v1beta/models/{model}:batchEmbedContents`
    /// with the key in `x-goog-api-key`; `{requests: [{model: "models/…",
    /// content: {parts: [{text}]}, taskType}]}` → `{embeddings: [{values}]}`;
    /// at most 100 requests in one batch (ai.google.dev/api/embeddings, and
    /// the API's own "at most 100 requests can be in one batch").
    Gemini,
    /// Voyage AI: `POST {base_url}/embeddings`, bearer key; `{model, input,
    /// input_type: "document" | "query"}` → `data[].embedding`; at most 1,000
    /// texts and 120K tokens (the largest models) a request
    /// (docs.voyageai.com/reference/embeddings-api).
    Voyage,
    /// Jina AI: `POST {base_url}/embeddings`, bearer key; `{model, input,
    /// task: "retrieval.passage" | "retrieval.query"}` (the task only for
    /// jina-embeddings-v3 and later) → `data[].embedding`; at most 512 texts a
    /// request (api.jina.ai/openapi.json, and the API's "Each input list can
    /// contain at most 512 items").
    Jina,
    /// Mistral AI: `POST {base_url}/embeddings`, bearer key; `{model, input}`
    /// (the SDKs call it `inputs`; the wire field is `input`) →
    /// `data[].embedding`; at most 512 texts and 16,384 tokens a request
    /// (docs.mistral.ai/api/endpoint/embeddings, and the API's "Too many
    /// tokens in batch. Max is 16384").
    Mistral,
}

/// How much one request may carry.
struct Limits {
    /// Texts.
    texts: usize,
    /// Characters, all texts together: a stand-in for the APIs' token
    /// limits (a token is 3 to 4 characters of prose, fewer of code; a
    /// single text longer than this still goes, alone).
    chars: usize,
}

impl EmbedApi {
    /// Every API, in the order the settings list them.
    pub const ALL: [EmbedApi; 6] = [
        EmbedApi::OpenAi,
        EmbedApi::Ollama,
        EmbedApi::Gemini,
        EmbedApi::Voyage,
        EmbedApi::Jina,
        EmbedApi::Mistral,
    ];

    /// The name in `[embed] provider` and in model ids.
    pub fn name(self) -> &'static str {
        match self {
            EmbedApi::OpenAi => "openai",
            EmbedApi::Ollama => "ollama",
            EmbedApi::Gemini => "gemini",
            EmbedApi::Voyage => "voyage",
            EmbedApi::Jina => "jina",
            EmbedApi::Mistral => "mistral",
        }
    }

    /// The API named `name`, if any.
    pub fn from_name(name: &str) -> Option<EmbedApi> {
        EmbedApi::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Where the API is served when no base URL is set.
    pub fn default_base_url(self) -> &'static str {
        match self {
            EmbedApi::OpenAi => "https://api.openai.com/v1",
            EmbedApi::Ollama => "http://localhost:11434",
            EmbedApi::Gemini => "https://generativelanguage.googleapis.com",
            EmbedApi::Voyage => "https://api.voyageai.com/v1",
            EmbedApi::Jina => "https://api.jina.ai/v1",
            EmbedApi::Mistral => "https://api.mistral.ai/v1",
        }
    }

    /// The environment variable the key is read from when the settings
    /// name none (a local Ollama needs no key).
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            EmbedApi::OpenAi => Some("OPENAI_API_KEY"),
            EmbedApi::Ollama => None,
            EmbedApi::Gemini => Some("GEMINI_API_KEY"),
            EmbedApi::Voyage => Some("VOYAGE_API_KEY"),
            EmbedApi::Jina => Some("JINA_API_KEY"),
            EmbedApi::Mistral => Some("MISTRAL_API_KEY"),
        }
    }

    /// The model used when the settings name none.
    pub fn default_model(self) -> &'static str {
        match self {
            EmbedApi::OpenAi => "text-embedding-3-small",
            EmbedApi::Ollama => "nomic-embed-text",
            EmbedApi::Gemini => "gemini-embedding-001",
            EmbedApi::Voyage => "voyage-3.5",
            EmbedApi::Jina => "jina-embeddings-v3",
            EmbedApi::Mistral => "mistral-embed",
        }
    }

    fn limits(self) -> Limits {
        match self {
            // OpenAI takes 2,048 inputs and 300K tokens.
            EmbedApi::OpenAi => Limits {
                texts: 64,
                chars: 400_000,
            },
            // A local server: small requests keep each within the timeout.
            EmbedApi::Ollama => Limits {
                texts: 16,
                chars: 64_000,
            },
            EmbedApi::Gemini => Limits {
                texts: 100,
                chars: 400_000,
            },
            EmbedApi::Voyage | EmbedApi::Jina => Limits {
                texts: 128,
                chars: 240_000,
            },
            // 16,384 tokens: two characters a token at worst.
            EmbedApi::Mistral => Limits {
                texts: 64,
                chars: 32_000,
            },
        }
    }

    /// Whether the request carries the key as a bearer token (else Gemini's
    /// `x-goog-api-key`).
    fn bearer(self) -> bool {
        self != EmbedApi::Gemini
    }
}

/// What a text is embedded as: retrieval models embed a query differently
/// from the passages it should find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Document,
    Query,
}

/// How to reach a remote embedding model.
#[derive(Clone, Debug)]
pub struct EmbedOptions {
    /// The API.
    pub api: EmbedApi,
    /// Base URL; empty for the API's public one ([`EmbedApi::default_base_url`]).
    pub base_url: String,
    /// Model name (for Gemini with or without its `models/` prefix).
    pub model: String,
    /// The key (read from the environment by the caller; empty for none).
    pub api_key: String,
    /// Whole-request timeout.
    pub timeout: Duration,
    /// The file that remembers each model's vector length across
    /// processes (no key or text is written to it); `None` to learn it
    /// anew in each process.
    pub dimension_cache: Option<PathBuf>,
}

/// Embeddings from a remote model; see the module docs.
pub struct RemoteEmbedder {
    api: EmbedApi,
    /// The endpoint.
    url: String,
    model: String,
    api_key: String,
    agent: ureq::Agent,
    id: String,
    /// 0 until known.
    dimension: AtomicUsize,
    /// The cache file and this model's key in it.
    cache: Option<(PathBuf, String)>,
}

impl RemoteEmbedder {
    /// An embedder for `options`. No request is made: the vector length
    /// comes from the cache file, else from the first answer.
    pub fn new(options: EmbedOptions) -> RemoteEmbedder {
        let api = options.api;
        let base = match options.base_url.trim() {
            "" => api.default_base_url(),
            b => b,
        }
        .trim_end_matches('/')
        .to_string();
        let model = match api {
            EmbedApi::Gemini => options.model.trim_start_matches("models/"),
            _ => options.model.as_str(),
        }
        .to_string();
        let url = match api {
            EmbedApi::Ollama => format!("{base}/api/embed"),
            EmbedApi::Gemini => format!("{base}/v1beta/models/{model}:batchEmbedContents"),
            _ => format!("{base}/embeddings"),
        };
        let id = format!("{}:{model}", api.name());
        let cache = options
            .dimension_cache
            .map(|path| (path, format!("{id} {}", cairn_core::redact_uri(&base))));
        let known = cache
            .as_ref()
            .and_then(|(path, key)| read_cache(path).get(key)?.as_u64())
            .map_or(0, |d| d as usize);
        RemoteEmbedder {
            api,
            url,
            model,
            api_key: options.api_key,
            agent: agent(options.timeout),
            id,
            dimension: AtomicUsize::new(known),
            cache,
        }
    }

    /// The vector length, if known yet (from the cache or an answer).
    pub fn known_dimension(&self) -> Option<usize> {
        match self.dimension.load(Ordering::Relaxed) {
            0 => None,
            d => Some(d),
        }
    }

    /// The request body for `texts`.
    fn body(&self, texts: &[&str], purpose: Purpose) -> Value {
        let model = &self.model;
        let query = purpose == Purpose::Query;
        match self.api {
            EmbedApi::OpenAi | EmbedApi::Ollama | EmbedApi::Mistral => {
                json!({"model": model, "input": texts})
            }
            EmbedApi::Voyage => json!({
                "model": model,
                "input": texts,
                "input_type": if query { "query" } else { "document" },
            }),
            EmbedApi::Jina => {
                let mut body = json!({"model": model, "input": texts});
                if jina_has_tasks(model) {
                    body["task"] = json!(if query {
                        "retrieval.query"
                    } else {
                        "retrieval.passage"
                    });
                }
                body
            }
            EmbedApi::Gemini => {
                let task = if query {
                    "RETRIEVAL_QUERY"
                } else {
                    "RETRIEVAL_DOCUMENT"
                };
                let requests: Vec<Value> = texts
                    .iter()
                    .map(|t| {
                        json!({
                            "model": format!("models/{model}"),
                            "content": {"parts": [{"text": t}]},
                            "taskType": task,
                        })
                    })
                    .collect();
                json!({ "requests": requests })
            }
        }
    }

    /// One request: the unit-length vectors of `texts`, in order.
    fn request(&self, texts: &[&str], purpose: Purpose) -> Result<Vec<Vec<f32>>, Error> {
        let mut headers = Vec::new();
        if !self.api_key.is_empty() {
            headers.push(if self.api.bearer() {
                ("authorization", format!("Bearer {}", self.api_key))
            } else {
                ("x-goog-api-key", self.api_key.clone())
            });
        }
        let body = self.body(texts, purpose);
        let (v, _) = post_json(&self.agent, &self.url, &headers, &body, &self.api_key)?;
        let wrong = |what: String| Error::Answer {
            url: cairn_core::redact_uri(&self.url),
            body: what,
        };
        let rows: Vec<Option<Vec<f32>>> = match self.api {
            EmbedApi::Ollama => list(&v["embeddings"]).iter().map(floats).collect(),
            EmbedApi::Gemini => list(&v["embeddings"])
                .iter()
                .map(|e| floats(&e["values"]))
                .collect(),
            _ => {
                // `data[]`, each with its `index` (answers may come out of order).
                let mut data: Vec<(usize, Option<Vec<f32>>)> = list(&v["data"])
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let at = d["index"].as_u64().map_or(i, |x| x as usize);
                        (at, floats(&d["embedding"]))
                    })
                    .collect();
                data.sort_by_key(|(i, _)| *i);
                data.into_iter().map(|(_, e)| e).collect()
            }
        };
        if rows.len() != texts.len() {
            return Err(wrong(format!(
                "{} vectors for {} texts",
                rows.len(),
                texts.len()
            )));
        }
        let mut out = Vec::with_capacity(rows.len());
        for (i, row) in rows.into_iter().enumerate() {
            let mut vec = row
                .filter(|v| !v.is_empty())
                .ok_or_else(|| wrong(format!("no vector of numbers for text {i}")))?;
            if let Some(first) = out.first().map(Vec::len)
                && vec.len() != first
            {
                return Err(wrong(format!(
                    "vectors of {first} and {} numbers in one answer",
                    vec.len()
                )));
            }
            // Search ranks by dot product: make every vector unit length.
            let norm = vec.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                vec.iter_mut().for_each(|x| *x /= norm);
            }
            out.push(vec);
        }
        if let Some(v) = out.first() {
            self.learn(v.len());
        }
        Ok(out)
    }

    /// Every text's vector, in batches the API accepts.
    fn embed_all(&self, texts: &[&str], purpose: Purpose) -> Result<Vec<Vec<f32>>, Error> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in batches(texts, &self.api.limits()) {
            out.extend(self.request(batch, purpose)?);
        }
        Ok(out)
    }

    /// Remembers the vector length: in memory, and in the cache file when
    /// it is new there.
    fn learn(&self, dim: usize) {
        if self.dimension.swap(dim, Ordering::Relaxed) == dim {
            return;
        }
        if let Some((path, key)) = &self.cache {
            // A cache: failing to write it costs one request in a later
            // process, nothing more.
            let _ = write_cache(path, key, dim);
        }
    }
}

/// The array at `v`, or none.
fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// The numbers of an array, `None` when it is not an array of numbers.
fn floats(v: &Value) -> Option<Vec<f32>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32))
        .collect()
}

/// Whether a Jina model takes a `task` (jina-embeddings-v3 and later).
fn jina_has_tasks(model: &str) -> bool {
    model
        .strip_prefix("jina-embeddings-v")
        .and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        })
        .is_some_and(|v| v >= 3)
}

/// `texts` cut into runs that keep within `limits`, in order.
fn batches<'a, 'b>(texts: &'b [&'a str], limits: &Limits) -> Vec<&'b [&'a str]> {
    let mut out = Vec::new();
    let (mut start, mut chars) = (0, 0);
    for (i, t) in texts.iter().enumerate() {
        let len = t.chars().count();
        if i > start && (i - start == limits.texts || chars + len > limits.chars) {
            out.push(&texts[start..i]);
            (start, chars) = (i, 0);
        }
        chars += len;
    }
    if start < texts.len() {
        out.push(&texts[start..]);
    }
    out
}

/// The cache file's entries (none when it is missing or unreadable).
fn read_cache(path: &std::path::Path) -> Map<String, Value> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default()
}

/// Sets `key` to `dim` in the cache file, replacing it whole (a reader
/// never sees half a file).
fn write_cache(path: &std::path::Path, key: &str, dim: usize) -> std::io::Result<()> {
    let mut entries = read_cache(path);
    entries.insert(key.to_string(), json!(dim));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let text = serde_json::to_string_pretty(&Value::Object(entries))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, path)
}

impl cairn_core::Embedder for RemoteEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    /// The vector length: known from the cache or an earlier answer, else
    /// asked for with one short request (0 if that fails; the next
    /// embedding reports the error).
    fn dimension(&self) -> usize {
        if let Some(d) = self.known_dimension() {
            return d;
        }
        self.request(&["dimension probe"], Purpose::Document)
            .ok()
            .and_then(|v| v.first().map(Vec::len))
            .unwrap_or(0)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, cairn_core::EmbedError> {
        self.embed_all(texts, Purpose::Document)
            .map_err(|e| cairn_core::EmbedError::new(e.to_string()))
    }

    fn embed_query(&self, query: &str) -> Result<Vec<f32>, cairn_core::EmbedError> {
        self.embed_all(&[query], Purpose::Query)
            .map_err(|e| cairn_core::EmbedError::new(e.to_string()))?
            .pop()
            .ok_or_else(|| cairn_core::EmbedError::new(format!("{} returned no vector", self.id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::{Fake, Seen};
    use cairn_core::Embedder;

    const KEY: &str = "k-secret-123";

    fn embedder(api: EmbedApi, base: String, model: &str, key: &str) -> RemoteEmbedder {
        RemoteEmbedder::new(EmbedOptions {
            api,
            base_url: base,
            model: model.into(),
            api_key: key.into(),
            timeout: Duration::from_secs(5),
            dimension_cache: None,
        })
    }

    /// A `data[]` answer (OpenAI, Voyage, Jina, Mistral) to a body with
    /// `input`: vectors `[3, 4, i]` (so unit length means `[0.6, 0.8, …]`
    /// for the first), listed in reverse order with their `index`.
    fn data_answer(body: &Value) -> (u16, String) {
        let n = list(&body["input"]).len();
        let data: Vec<Value> = (0..n)
            .rev()
            .map(|i| json!({"object": "embedding", "index": i, "embedding": [3.0, 4.0, i as f64]}))
            .collect();
        (200, json!({"object": "list", "data": data}).to_string())
    }

    fn unit(v: &[f32]) -> bool {
        (v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5
    }

    /// The two vectors of `["a", "b"]` from a [`data_answer`] server: in
    /// input order, unit length.
    fn assert_data_vectors(v: &[Vec<f32>]) {
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|x| unit(x)));
        assert_eq!(v[0], vec![0.6, 0.8, 0.0]);
        assert!(v[1][2] > 0.0, "order follows `index`");
    }

    fn only(fake: &Fake) -> Seen {
        let seen = fake.seen();
        assert_eq!(seen.len(), 1, "{seen:?}");
        seen[0].clone()
    }

    #[test]
    fn openai_compatible_posts_model_and_input_with_a_bearer_key() {
        let fake = Fake::new(data_answer);
        let e = embedder(EmbedApi::OpenAi, format!("{}/v1", fake.url), "m1", KEY);
        assert_eq!(e.model_id(), "openai:m1");
        assert_data_vectors(&e.embed(&["a", "b"]).unwrap());
        let req = only(&fake);
        assert_eq!(req.line(), "POST /v1/embeddings HTTP/1.1");
        assert_eq!(req.header("authorization"), Some(format!("Bearer {KEY}")));
        assert_eq!(req.body, json!({"model": "m1", "input": ["a", "b"]}));
        assert_eq!(e.dimension(), 3, "learned from the answer");
        assert_eq!(fake.seen().len(), 1, "no probe");
    }

    #[test]
    fn ollama_native_api_posts_to_api_embed_without_a_key() {
        let fake = Fake::new(|body| {
            let all = [json!([3.0, 4.0]), json!([0.0, 2.0])];
            let n = list(&body["input"]).len();
            (
                200,
                json!({"model": "nomic-embed-text", "embeddings": all[..n]}).to_string(),
            )
        });
        let e = embedder(EmbedApi::Ollama, fake.url.clone(), "nomic-embed-text", "");
        assert_eq!(e.model_id(), "ollama:nomic-embed-text");
        let v = e.embed(&["a", "b"]).unwrap();
        assert_eq!(v, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        let req = fake.seen()[0].clone();
        assert_eq!(req.line(), "POST /api/embed HTTP/1.1");
        assert_eq!(req.header("authorization"), None);
        assert_eq!(
            req.body,
            json!({"model": "nomic-embed-text", "input": ["a", "b"]})
        );
        // A query is embedded the same way (the native API has no input type).
        assert_eq!(e.embed_query("q").unwrap(), vec![0.6, 0.8]);
    }

    #[test]
    fn gemini_batch_embeds_with_the_key_in_x_goog_api_key_and_task_types() {
        let fake = Fake::new(|body| {
            let embeddings: Vec<Value> = list(&body["requests"])
                .iter()
                .enumerate()
                .map(|(i, _)| json!({"values": [0.0, 5.0, i as f64]}))
                .collect();
            (200, json!({ "embeddings": embeddings }).to_string())
        });
        let e = embedder(
            EmbedApi::Gemini,
            fake.url.clone(),
            "models/gemini-embedding-001",
            KEY,
        );
        assert_eq!(e.model_id(), "gemini:gemini-embedding-001");
        let v = e.embed(&["a", "b"]).unwrap();
        assert_eq!(v[0], vec![0.0, 1.0, 0.0]);
        assert!(v.iter().all(|x| unit(x)) && v[1][2] > 0.0);
        e.embed_query("where").unwrap();
        let seen = fake.seen();
        assert_eq!(
            seen[0].line(),
            "POST /v1beta/models/gemini-embedding-001:batchEmbedContents HTTP/1.1"
        );
        assert_eq!(seen[0].header("x-goog-api-key").as_deref(), Some(KEY));
        assert_eq!(seen[0].header("authorization"), None);
        let doc = |text: &str, task: &str| {
            json!({
                "model": "models/gemini-embedding-001",
                "content": {"parts": [{"text": text}]},
                "taskType": task,
            })
        };
        assert_eq!(
            seen[0].body,
            json!({"requests": [doc("a", "RETRIEVAL_DOCUMENT"), doc("b", "RETRIEVAL_DOCUMENT")]})
        );
        assert_eq!(
            seen[1].body,
            json!({"requests": [doc("where", "RETRIEVAL_QUERY")]})
        );
    }

    #[test]
    fn voyage_sends_input_type_document_or_query() {
        let fake = Fake::new(data_answer);
        let e = embedder(
            EmbedApi::Voyage,
            format!("{}/v1", fake.url),
            "voyage-3.5",
            KEY,
        );
        assert_eq!(e.model_id(), "voyage:voyage-3.5");
        assert_data_vectors(&e.embed(&["a", "b"]).unwrap());
        assert!(unit(&e.embed_query("q").unwrap()));
        let seen = fake.seen();
        assert_eq!(seen[0].line(), "POST /v1/embeddings HTTP/1.1");
        assert_eq!(
            seen[0].header("authorization"),
            Some(format!("Bearer {KEY}"))
        );
        assert_eq!(
            seen[0].body,
            json!({"model": "voyage-3.5", "input": ["a", "b"], "input_type": "document"})
        );
        assert_eq!(seen[1].body["input_type"], "query");
    }

    #[test]
    fn jina_sends_a_retrieval_task_to_models_that_take_one() {
        let fake = Fake::new(data_answer);
        let e = embedder(
            EmbedApi::Jina,
            format!("{}/v1", fake.url),
            "jina-embeddings-v3",
            KEY,
        );
        assert_eq!(e.model_id(), "jina:jina-embeddings-v3");
        assert_data_vectors(&e.embed(&["a", "b"]).unwrap());
        e.embed_query("q").unwrap();
        let old = embedder(
            EmbedApi::Jina,
            format!("{}/v1", fake.url),
            "jina-embeddings-v2-base-en",
            KEY,
        );
        old.embed(&["a"]).unwrap();
        let seen = fake.seen();
        assert_eq!(seen[0].line(), "POST /v1/embeddings HTTP/1.1");
        assert_eq!(
            seen[0].header("authorization"),
            Some(format!("Bearer {KEY}"))
        );
        assert_eq!(
            seen[0].body,
            json!({"model": "jina-embeddings-v3", "input": ["a", "b"], "task": "retrieval.passage"})
        );
        assert_eq!(seen[1].body["task"], "retrieval.query");
        assert_eq!(
            seen[2].body,
            json!({"model": "jina-embeddings-v2-base-en", "input": ["a"]})
        );
        assert!(jina_has_tasks("jina-embeddings-v4") && !jina_has_tasks("jina-clip-v2"));
    }

    #[test]
    fn mistral_posts_input_not_inputs() {
        let fake = Fake::new(data_answer);
        let e = embedder(
            EmbedApi::Mistral,
            format!("{}/v1", fake.url),
            "mistral-embed",
            KEY,
        );
        assert_eq!(e.model_id(), "mistral:mistral-embed");
        assert_data_vectors(&e.embed(&["a", "b"]).unwrap());
        let req = only(&fake);
        assert_eq!(req.line(), "POST /v1/embeddings HTTP/1.1");
        assert_eq!(req.header("authorization"), Some(format!("Bearer {KEY}")));
        assert_eq!(
            req.body,
            json!({"model": "mistral-embed", "input": ["a", "b"]})
        );
    }

    #[test]
    fn an_error_status_is_a_clear_error_without_the_key() {
        for api in EmbedApi::ALL {
            // The answer echoes the key, as some APIs do.
            let fake = Fake::new(|_| {
                (
                    401,
                    json!({"error": {"message": format!("invalid api key {KEY}")}}).to_string(),
                )
            });
            let e = embedder(api, fake.url.clone(), "m", KEY);
            let err = e.embed(&["a"]).unwrap_err().to_string();
            assert!(err.contains("HTTP 401"), "{api:?}: {err}");
            assert!(err.contains("invalid api key"), "{api:?}: {err}");
            assert!(!err.contains(KEY), "{api:?}: {err}");
            assert_eq!(fake.seen().len(), 1);
        }
    }

    #[test]
    fn a_malformed_or_short_answer_is_an_error() {
        let fake = Fake::new(|_| {
            (
                200,
                json!({"data": [{"index": 0, "embedding": "AAAA"}]}).to_string(),
            )
        });
        let e = embedder(EmbedApi::OpenAi, fake.url.clone(), "m", "");
        let err = e.embed(&["a"]).unwrap_err().to_string();
        assert!(err.contains("no vector of numbers for text 0"), "{err}");
        let err = e.embed(&["a", "b"]).unwrap_err().to_string();
        assert!(err.contains("1 vectors for 2 texts"), "{err}");
        let fake = Fake::new(|_| (200, "not json".into()));
        let e = embedder(EmbedApi::Ollama, fake.url.clone(), "m", "");
        assert!(
            e.embed(&["a"])
                .unwrap_err()
                .to_string()
                .contains("not json")
        );
        assert_eq!(e.dimension(), 0, "a failed probe says 0");
    }

    #[test]
    fn batches_keep_within_each_apis_limits() {
        let sizes = |fake: &Fake, field: &str| -> Vec<usize> {
            fake.seen()
                .iter()
                .map(|s| list(&s.body[field]).len())
                .collect()
        };
        // Gemini: at most 100 requests a batch.
        let fake = Fake::new(|body| {
            let n = list(&body["requests"]).len();
            let e: Vec<Value> = (0..n).map(|_| json!({"values": [1.0]})).collect();
            (200, json!({ "embeddings": e }).to_string())
        });
        let texts = vec!["t"; 250];
        let e = embedder(EmbedApi::Gemini, fake.url.clone(), "g", KEY);
        assert_eq!(e.embed(&texts).unwrap().len(), 250);
        assert_eq!(sizes(&fake, "requests"), vec![100, 100, 50]);
        // Mistral: 16,384 tokens a request, kept to 32,000 characters.
        let fake = Fake::new(data_answer);
        let long = "x".repeat(10_000);
        let texts = vec![long.as_str(); 7];
        let e = embedder(EmbedApi::Mistral, fake.url.clone(), "m", KEY);
        assert_eq!(e.embed(&texts).unwrap().len(), 7);
        assert_eq!(sizes(&fake, "input"), vec![3, 3, 1]);
        // One text over the limit still goes, alone.
        let huge = "y".repeat(40_000);
        assert_eq!(
            batches(&["a", &huge, "b"], &EmbedApi::Mistral.limits())
                .iter()
                .map(|b| b.len())
                .collect::<Vec<_>>(),
            vec![1, 1, 1]
        );
        assert!(batches(&[], &EmbedApi::Voyage.limits()).is_empty());
    }

    #[test]
    fn the_dimension_is_cached_so_a_new_process_makes_no_request() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("state").join("embed-dimensions.json");
        let fake = Fake::new(data_answer);
        let open = |model: &str| {
            RemoteEmbedder::new(EmbedOptions {
                api: EmbedApi::Voyage,
                base_url: fake.url.clone(),
                model: model.into(),
                api_key: KEY.into(),
                timeout: Duration::from_secs(5),
                dimension_cache: Some(cache.clone()),
            })
        };
        let first = open("voyage-3.5");
        assert_eq!(first.known_dimension(), None);
        assert_eq!(fake.seen().len(), 0, "opening asks nothing");
        first.embed(&["a"]).unwrap();
        assert_eq!((first.dimension(), fake.seen().len()), (3, 1));
        let text = std::fs::read_to_string(&cache).unwrap();
        assert!(
            text.contains("voyage:voyage-3.5") && !text.contains(KEY),
            "{text}"
        );

        // A later process: known at once, no request.
        let again = open("voyage-3.5");
        assert_eq!(again.dimension(), 3);
        assert_eq!(fake.seen().len(), 1);

        // Another model is not: one probe, then cached beside the first.
        let other = open("voyage-3.5-lite");
        assert_eq!(other.known_dimension(), None);
        assert_eq!(other.dimension(), 3);
        assert_eq!(fake.seen().len(), 2);
        assert_eq!(read_cache(&cache).len(), 2);
    }
}
