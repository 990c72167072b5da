//! Language-model providers over plain HTTP, for session summaries and
//! `cairn compact`: any OpenAI-compatible chat endpoint (OpenAI, Ollama,
//! vLLM, LM Studio) and Anthropic's Messages API. Keys come only from an
//! environment variable named in the settings; they are never written
//! anywhere, and errors never include them.
#![deny(missing_docs)]

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

impl Provider {
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
        let agent = ureq::AgentBuilder::new()
            .timeout(self.timeout)
            .timeout_connect(self.timeout.min(Duration::from_secs(5)))
            .build();
        let mut req = agent.post(&url).set("content-type", "application/json");
        req = match self.api {
            Api::OpenAi if !self.api_key.is_empty() => {
                req.set("authorization", &format!("Bearer {}", self.api_key))
            }
            Api::OpenAi => req,
            Api::Anthropic => req
                .set("x-api-key", &self.api_key)
                .set("anthropic-version", "2023-06-01"),
        };
        let answer = match req.send_string(&body.to_string()) {
            Ok(r) => r.into_string().map_err(|e| Error::Transport {
                url: url.clone(),
                message: e.to_string(),
            })?,
            Err(ureq::Error::Status(status, r)) => {
                return Err(Error::Status {
                    url,
                    status,
                    body: clip(&r.into_string().unwrap_or_default()),
                });
            }
            Err(e) => {
                return Err(Error::Transport {
                    url,
                    message: e.to_string(),
                });
            }
        };
        let v: Value = serde_json::from_str(&answer).map_err(|_| Error::Answer {
            url: url.clone(),
            body: clip(&answer),
        })?;
        let text = match self.api {
            Api::OpenAi => v
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str),
            Api::Anthropic => v.pointer("/content/0/text").and_then(Value::as_str),
        };
        text.map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .ok_or(Error::Answer {
                url,
                body: clip(&answer),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    /// A one-request HTTP server on loopback answering `body` after `delay`;
    /// returns its base URL and a handle giving the request it saw.
    fn serve_once(
        body: &'static str,
        delay: Duration,
    ) -> (String, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(s.try_clone().unwrap());
            let mut head = String::new();
            let mut len = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut req = vec![0; len];
            reader.read_exact(&mut req).unwrap();
            std::thread::sleep(delay);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            head + &String::from_utf8_lossy(&req)
        });
        (url, handle)
    }

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
