//! Language-model providers over plain HTTP, for session summaries and
//! `cairn compact`: any OpenAI-compatible chat endpoint (OpenAI, Ollama,
//! vLLM, LM Studio) and Anthropic's Messages API; and embedding models
//! ([`RemoteEmbedder`]: OpenAI-compatible, Ollama's native API, Gemini,
//! Voyage, Jina, Mistral). Keys come only from an environment variable named
//! in the settings; they are never written anywhere, and errors never
//! include them.
#![deny(missing_docs)]

mod embed;
#[cfg(test)]
mod test_server;

pub use embed::{EmbedApi, EmbedOptions, RemoteEmbedder};

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Which API a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// `POST {base_url}/chat/completions` with a bearer key.
    OpenAi,
    /// `POST {base_url}/v1/messages` with `x-api-key`.
    Anthropic,
}

/// A configured provider.
#[derive(Clone, Debug)]
pub struct Provider {
    /// The API.
    pub api: Api,
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// The key (read from the environment by the caller; may be empty for local servers).
    pub api_key: String,
    /// Whole-request timeout.
    pub timeout: Duration,
}

/// What can go wrong asking a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The endpoint could not be reached or did not answer in time.
    #[error("{url}: {message}")]
    Transport {
        /// The endpoint.
        url: String,
        /// What happened.
        message: String,
    },
    /// The endpoint answered with an error status.
    #[error("{url}: HTTP {status}: {body}")]
    Status {
        /// The endpoint.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the answer.
        body: String,
    },
    /// The answer had no text where the API puts it.
    #[error("{url}: unexpected answer: {body}")]
    Answer {
        /// The endpoint.
        url: String,
        /// The start of the answer.
        body: String,
    },
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}

/// `text` with every occurrence of `secret` (a key) cut out: what an error
/// may carry of an answer that echoes the key.
fn scrub(text: &str, secret: &str) -> String {
    if secret.len() < 4 {
        return text.to_string();
    }
    text.replace(secret, "[redacted]")
}

/// POSTs `body` as JSON with `headers`; the parsed answer and its text (for
/// error messages). Errors name the endpoint without any password in it and
/// never carry `secret`.
fn post_json(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
    secret: &str,
) -> Result<(Value, String), Error> {
    let shown = || cairn_core::redact_uri(url);
    let mut req = agent.post(url).set("content-type", "application/json");
    for (name, value) in headers {
        req = req.set(name, value);
    }
    let transport = |message: String| Error::Transport {
        url: shown(),
        message: scrub(&message, secret).replace(url, &shown()),
    };
    let answer = match req.send_string(&body.to_string()) {
        Ok(r) => r.into_string().map_err(|e| transport(e.to_string()))?,
        Err(ureq::Error::Status(status, r)) => {
            return Err(Error::Status {
                url: shown(),
                status,
                body: clip(&scrub(&r.into_string().unwrap_or_default(), secret)),
            });
        }
        Err(e) => return Err(transport(e.to_string())),
    };
    let v = serde_json::from_str(&answer).map_err(|_| Error::Answer {
        url: shown(),
        body: clip(&scrub(&answer, secret)),
    })?;
    Ok((v, answer))
}

/// An agent whose every request ends within `timeout` (connecting within 5 s).
fn agent(timeout: Duration) -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(timeout)
        .timeout_connect(timeout.min(Duration::from_secs(5)))
        .build()
}

impl Provider {
    /// POSTs a JSON body with this provider's key headers; the parsed
    /// answer and its text (for error messages).
    fn post_json(&self, url: &str, body: &Value) -> Result<(Value, String), Error> {
        let headers = match self.api {
            Api::OpenAi if !self.api_key.is_empty() => {
                vec![("authorization", format!("Bearer {}", self.api_key))]
            }
            Api::OpenAi => vec![],
            Api::Anthropic => vec![
                ("x-api-key", self.api_key.clone()),
                ("anthropic-version", "2023-06-01".to_string()),
            ],
        };
        post_json(&agent(self.timeout), url, &headers, body, &self.api_key)
    }

    /// Asks for a completion of `prompt` under `system` instructions.
    pub fn complete(&self, system: &str, prompt: &str, max_tokens: u32) -> Result<String, Error> {
        let base = self.base_url.trim_end_matches('/');
        let (url, body) = match self.api {
            Api::OpenAi => (
                format!("{base}/chat/completions"),
                json!({
                    "model": self.model,
                    "max_tokens": max_tokens,
                    "messages": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": prompt},
                    ],
                }),
            ),
            Api::Anthropic => (
                format!("{base}/v1/messages"),
                json!({
                    "model": self.model,
                    "max_tokens": max_tokens,
                    "system": system,
                    "messages": [{"role": "user", "content": prompt}],
                }),
            ),
        };
        let (v, answer) = self.post_json(&url, &body)?;
        let text = match self.api {
            Api::OpenAi => v
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str),
            Api::Anthropic => v.pointer("/content/0/text").and_then(Value::as_str),
        };
        text.map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| Error::Answer {
                url: cairn_core::redact_uri(&url),
                body: clip(&scrub(&answer, &self.api_key)),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::serve_once;

    fn provider(api: Api, url: String, timeout: Duration) -> Provider {
        Provider {
            api,
            base_url: url,
            model: "m1".into(),
            api_key: "k-123".into(),
            timeout,
        }
    }

    #[test]
    fn openai_compatible_and_anthropic_round_trips() {
        let (url, seen) = serve_once(
            r#"{"choices":[{"message":{"role":"assistant","content":" Summary A "}}]}"#,
            Duration::ZERO,
        );
        let p = provider(Api::OpenAi, format!("{url}/v1"), Duration::from_secs(5));
        assert_eq!(p.complete("sys", "hello", 100).unwrap(), "Summary A");
        let req = seen.join().unwrap();
        assert!(req.starts_with("POST /v1/chat/completions"), "{req}");
        assert!(
            req.to_ascii_lowercase()
                .contains("authorization: bearer k-123")
        );
        assert!(req.contains("\"model\":\"m1\"") && req.contains("hello"));

        let (url, seen) = serve_once(
            r#"{"content":[{"type":"text","text":"Summary B"}]}"#,
            Duration::ZERO,
        );
        let p = provider(Api::Anthropic, url, Duration::from_secs(5));
        assert_eq!(p.complete("sys", "hi", 100).unwrap(), "Summary B");
        let req = seen.join().unwrap().to_ascii_lowercase();
        assert!(req.starts_with("post /v1/messages") && req.contains("x-api-key: k-123"));
    }

    #[test]
    fn a_slow_or_absent_endpoint_fails_within_the_timeout() {
        let (url, _seen) = serve_once(r#"{"choices":[]}"#, Duration::from_secs(3));
        let p = provider(Api::OpenAi, url, Duration::from_millis(300));
        let t = std::time::Instant::now();
        let err = p.complete("s", "p", 10).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(matches!(err, Error::Transport { .. }), "{err}");
        assert!(!err.to_string().contains("k-123"));
        let p = provider(
            Api::OpenAi,
            "http://127.0.0.1:9".into(),
            Duration::from_millis(300),
        );
        assert!(p.complete("s", "p", 10).is_err());
    }
}
