//! OpenClaw fixtures: a session transcript and the agent database's
//! schema, shared by the engine's and the CLI's capture tests.

/// The id of the session in [`TRANSCRIPT`].
pub const SESSION: &str = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

/// An OpenClaw transcript (the pi agent's JSONL, version 3).
pub const TRANSCRIPT: &str = r#"{"type":"session","version":3,"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/home/u/.openclaw/workspace"}
{"type":"model_change","id":"a1b2c3d4","parentId":null,"timestamp":"2026-03-02T09:00:00.010Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}
{"type":"message","id":"e0000001","parentId":"a1b2c3d4","timestamp":"2026-03-02T09:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"Why did the backup upload to the bucket fail last night?"}],"timestamp":1772442005000}}
{"type":"message","id":"e0000002","parentId":"e0000001","timestamp":"2026-03-02T09:00:07.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"toolu_1","name":"exec","arguments":{"command":"GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz rclone check backups remote:nightly"}}],"stopReason":"toolUse","timestamp":1772442007000}}
{"type":"message","id":"e0000003","parentId":"e0000002","timestamp":"2026-03-02T09:00:08.000Z","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"exec","content":[{"type":"text","text":"ERROR: AccessDenied on remote:nightly"}],"isError":true,"timestamp":1772442008000}}
{"type":"message","id":"e0000004","parentId":"e0000003","timestamp":"2026-03-02T09:00:09.000Z","message":{"role":"assistant","content":[{"type":"text","text":"The bucket policy lost the write grant after the key rotation."}],"stopReason":"stop","timestamp":1772442009000}}
"#;

/// OpenClaw's agent database (v2026.8 on): `transcript_events` as its
/// `src/state/openclaw-agent-schema.sql` defines it (2026.9.6), the session
/// tables it refers to with only their key columns.
pub const SCHEMA: &str = r#"
CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  FOREIGN KEY (session_key) REFERENCES session_nodes(session_key) ON DELETE CASCADE) STRICT;
CREATE TABLE transcript_events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_json TEXT,
  created_at INTEGER NOT NULL,
  event_zstd BLOB,
  event_utf8_bytes INTEGER CHECK (event_utf8_bytes IS NULL OR event_utf8_bytes >= 0),
  navigation_json TEXT,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES "session_windows"(session_id) ON DELETE CASCADE,
  CHECK (
    (event_json IS NOT NULL AND event_zstd IS NULL)
    OR (
      event_json IS NULL AND event_zstd IS NOT NULL
      AND event_utf8_bytes IS NOT NULL
      AND event_utf8_bytes BETWEEN 1 AND 4194304
      AND length(event_zstd) BETWEEN 1 AND 4194304
      AND navigation_json IS NOT NULL
    )
  )
) STRICT;
"#;
