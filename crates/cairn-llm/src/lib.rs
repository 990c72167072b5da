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
    /// POSTs a JSON body with this provider's key headers; the parsed
    /// answer and its text (for error messages).
    fn post_json(&self, url: &str, body: &Value) -> Result<(Value, String), Error> {
        let agent = ureq::AgentBuilder::new()
            .timeout(self.timeout)
            .timeout_connect(self.timeout.min(Duration::from_secs(5)))
            .build();
        let mut req = agent.post(url).set("content-type", "application/json");
        req = match self.api {
            Api::OpenAi if !self.api_key.is_empty() => {
                req.set("authorization", &format!("Bearer {}", self.api_key))
            }
            Api::OpenAi => req,
            Api::Anthropic => req
                .set("x-api-key", &self.api_key)
                .set("anthropic-version", "2023-06-01"),
        };
        let transport = |message: String| Error::Transport {
            url: url.to_string(),
            message,
        };
        let answer = match req.send_string(&body.to_string()) {
            Ok(r) => r.into_string().map_err(|e| transport(e.to_string()))?,
            Err(ureq::Error::Status(status, r)) => {
                return Err(Error::Status {
                    url: url.to_string(),
                    status,
                    body: clip(&r.into_string().unwrap_or_default()),
                });
            }
            Err(e) => return Err(transport(e.to_string())),
        };
        let v = serde_json::from_str(&answer).map_err(|_| Error::Answer {
            url: url.to_string(),
            body: clip(&answer),
        })?;
        Ok((v, answer))
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
            .ok_or(Error::Answer {
                url,
                body: clip(&answer),
            })
    }
}

/// Embeddings from an OpenAI-compatible `POST {base_url}/embeddings`
/// endpoint. Its vectors live in their own space (model id
/// `openai:<model>`), so switching models re-embeds rather than mixing.
pub struct RemoteEmbedder {
    provider: Provider,
    id: String,
    dimension: usize,
}

impl RemoteEmbedder {
    /// Connects and learns the vector length from one probe request.
    pub fn connect(provider: Provider) -> Result<RemoteEmbedder, Error> {
        let mut e = RemoteEmbedder {
            id: format!("openai:{}", provider.model),
            provider,
            dimension: 0,
        };
        let probe = e.request(&["dimension probe"])?;
        e.dimension = probe.first().map_or(0, Vec::len);
        if e.dimension == 0 {
            return Err(Error::Answer {
                url: e.provider.base_url.clone(),
                body: "empty embedding".into(),
            });
        }
        Ok(e)
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
        let url = format!(
            "{}/embeddings",
            self.provider.base_url.trim_end_matches('/')
        );
        let body = json!({"model": self.provider.model, "input": texts});
        let (v, _) = self.provider.post_json(&url, &body)?;
        let mut rows: Vec<(usize, Vec<f32>)> = v["data"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, d)| {
                let index = d["index"].as_u64().map_or(i, |x| x as usize);
                let mut vec: Vec<f32> = d["embedding"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_f64().map(|f| f as f32))
                    .collect();
                // Search ranks by dot product: make every vector unit length.
                let norm = vec.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    vec.iter_mut().for_each(|x| *x /= norm);
                }
                (index, vec)
            })
            .collect();
        rows.sort_by_key(|(i, _)| *i);
        if rows.len() != texts.len() {
            return Err(Error::Answer {
                url,
                body: format!("{} vectors for {} texts", rows.len(), texts.len()),
            });
        }
        Ok(rows.into_iter().map(|(_, v)| v).collect())
    }
}

impl cairn_core::Embedder for RemoteEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, cairn_core::EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(64) {
            out.extend(
                self.request(batch)
                    .map_err(|e| cairn_core::EmbedError::new(e.to_string()))?,
            );
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    /// Reads one HTTP request: its head and its body.
    fn read_request(s: &std::net::TcpStream) -> (String, Vec<u8>) {
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
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        (head, body)
    }

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
            let (head, req) = read_request(&s);
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
    fn remote_embeddings_are_unit_vectors_in_their_own_space() {
        use cairn_core::Embedder;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten().take(2) {
                let mut s = stream;
                let (_, req) = read_request(&s);
                let v: Value = serde_json::from_slice(&req).unwrap();
                let n = v["input"].as_array().unwrap().len();
                // Answer out of order, with vectors of length 5.
                let data: Vec<Value> = (0..n)
                    .rev()
                    .map(|i| json!({"index": i, "embedding": [3.0, 4.0, 0.0, 0.0, i as f64]}))
                    .collect();
                let body = json!({"data": data}).to_string();
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        let e =
            RemoteEmbedder::connect(provider(Api::OpenAi, url, Duration::from_secs(5))).unwrap();
        assert_eq!((e.model_id(), e.dimension()), ("openai:m1", 5));
        let v = e.embed(&["a", "b"]).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0][4], 0.0);
        assert!(v[1][4] > 0.0, "order follows `index`");
        for x in &v {
            let norm: f32 = x.iter().map(|a| a * a).sum();
            assert!((norm - 1.0).abs() < 1e-5);
        }
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
