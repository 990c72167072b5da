//! Secret redaction: the one rule set every stored or printed field goes
//! through (memory text, tags, entities, relation names, observations,
//! session summaries, transcript turns, health and log lines).
//!
//! The rules follow the families of gitleaks' rule set (cloud keys, VCS
//! tokens, chat and payment webhooks, OAuth client secrets, private key
//! blocks, named env values, connection strings, command-line passwords,
//! SAS signatures, JWTs, bot tokens). They are written here rather than
//! taken from a crate: no maintained Rust crate ships that rule set (the
//! ones that port it are parts of other products), and a rule here is one
//! line with its test in `cairn-test-support`'s shape fixture.

use std::sync::LazyLock;

use regex::Regex;

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";

/// One rule: the family it belongs to, its pattern and what replaces a match
/// (`$1`… keep names and users; the secret goes).
struct Rule {
    family: &'static str,
    pattern: Regex,
    with: &'static str,
}

/// Provider keys and tokens with a known shape, each replaced whole by
/// [`REDACTED`]: (family, pattern).
const SHAPES: &[(&str, &str)] = &[
    (
        "openai/anthropic key",
        r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}",
    ),
    (
        "aws access key id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    ),
    ("github token", r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    ("github token", r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    (
        "gitlab token",
        r"\bgl(?:pat|ptt|dt|rt|soat|cbt|imt|agent)-[A-Za-z0-9_\-]{20,}",
    ),
    ("stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("stripe webhook secret", r"\bwhsec_[A-Za-z0-9+/=]{20,}"),
    ("slack token", r"\bxox[a-z]-[A-Za-z0-9\-]{10,}"),
    ("slack app token", r"\bxapp-\d-[A-Za-z0-9\-]{10,}"),
    (
        "slack webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+",
    ),
    (
        "discord webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]+",
    ),
    (
        "discord bot token",
        r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}\b",
    ),
    (
        "telegram bot token",
        r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b",
    ),
    ("google api key", r"\bAIza[0-9A-Za-z_\-]{30,}"),
    ("google oauth token", r"\bya29\.[A-Za-z0-9_\-]{20,}"),
    (
        "google oauth client secret",
        r"\bGOCSPX-[A-Za-z0-9_\-]{20,}",
    ),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi token", r"\bpypi-[A-Za-z0-9_\-]{50,}"),
    ("hugging face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    (
        "sendgrid key",
        r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
    ),
    ("digitalocean token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("square token", r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}"),
    ("databricks token", r"\bdapi[a-f0-9]{32}\b"),
    ("linear key", r"\blin_api_[A-Za-z0-9]{40}\b"),
    ("twilio key", r"\bSK[0-9a-fA-F]{32}\b"),
    ("age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    ("docker hub token", r"\bdckr_pat_[A-Za-z0-9_\-]{20,}"),
    ("mailgun key", r"\bkey-[0-9a-f]{32}\b"),
    ("groq key", r"\bgsk_[A-Za-z0-9]{40,}"),
    ("hashicorp vault token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("postman key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    (
        "doppler token",
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
    ),
    ("grafana token", r"\b(?:glc|glsa)_[A-Za-z0-9_+/]{32,}={0,2}"),
    ("sentry token", r"\bsntr[ysu]_[A-Za-z0-9+/=_]{40,}"),
    ("new relic key", r"\bNRA[KI]-[A-Z0-9]{27}\b"),
    ("supabase token", r"\bsbp_[a-f0-9]{40}\b"),
    ("pulumi token", r"\bpul-[a-f0-9]{40}\b"),
    ("replicate token", r"\br8_[A-Za-z0-9]{37}\b"),
    ("perplexity key", r"\bpplx-[A-Za-z0-9]{40,}"),
    ("xai key", r"\bxai-[A-Za-z0-9]{60,}"),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
    ),
];

/// The rules, in the order they run: whole blocks first, then shapes with a
/// known prefix, then names that say a value is secret.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    [
        // <private>…</private> spans, across lines.
        ("private span", r"(?s)<private>.*?</private>", REDACTED),
        // Private key blocks (PEM, OpenSSH, PGP, encrypted), of any length;
        // a block whose END line is missing (a text cut short) is redacted
        // to the end of the text.
        (
            "private key block",
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            REDACTED,
        ),
    ]
    .into_iter()
    // Provider keys and tokens with a known shape.
    .chain(SHAPES.iter().map(|&(family, p)| (family, p, REDACTED)))
    .chain([
        // Names that say the value is secret (the name stays).
        ("named secret", KEY_VALUE, "$1$2[redacted]"),
        ("named env secret", ENV_LINE, "$1$2[redacted]"),
        // Authorization: Bearer … / Basic …
        ("bearer token", r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{12,}", REDACTED),
        ("basic auth", BASIC_AUTH, "$1[redacted]"),
        // The password of a URL's userinfo (postgres://user:pw@host, redis://:pw@host).
        ("url password", URL_USERINFO, "$1:[redacted]@"),
        // Azure (and S3 presigned) URL signatures.
        ("sas signature", r"(?i)(\b(?:sig|x-amz-signature)=)[A-Za-z0-9%/+=]{16,}", "$1[redacted]"),
        // Passwords on a command line: curl -u user:pass, mysql -pPASS, sshpass -p PASS.
        ("command-line password", CLI_USER_PASS, "$1$2:[redacted]"),
        ("command-line password", MYSQL_P, "$1[redacted]"),
        ("command-line password", r"(\bsshpass\s+-p\s*)\S+", "$1[redacted]"),
    ])
    .map(|(family, p, with)| Rule {
        family,
        pattern: Regex::new(p).unwrap_or_else(|e| panic!("redaction rule {family}: {e}")),
        with,
    })
    .collect()
});

/// `NAME=value`, `name: value` or JSON's `"name": "value"` where the name
/// says key, secret, token or password. A value already `[redacted]` is
/// taken as it is (redacting twice changes nothing more).
const KEY_VALUE: &str = r#"(?i)\b([A-Za-z0-9_]*(?:api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key|client[_-]?secret|encryption[_-]?key|signing[_-]?key|master[_-]?key|secret|token|password|passwd|passphrase|credentials?)[A-Za-z0-9_]*"?)(\s*[:=]\s*)(\[redacted\]|"[^"]*"|'[^']*'|[^\s,;]+)"#;

/// An environment line whose upper-case name has a `KEY`, `PASS`, `PWD` or
/// `AUTH` part (`DB_PASS=…`, `ENCRYPTION_KEY=…`, `SMTP_PWD=…`). Case
/// matters: `primary_key: id` in prose is not an env line.
const ENV_LINE: &str = r#"\b([A-Z][A-Z0-9_]*?(?:_KEY|_PASS|_PWD|_AUTH|PASS_|KEY_)[A-Z0-9_]*"?)(\s*[:=]\s*)(\[redacted\]|"[^"]*"|'[^']*'|[^\s,;]+)"#;

/// `Authorization: Basic <base64>` (only after the header's name: "basic"
/// alone is a common word).
const BASIC_AUTH: &str =
    r"(?i)(authorization[\x22']?\s*[:=]\s*[\x22']?basic\s+)[A-Za-z0-9+/]{8,}={0,2}";

/// `scheme://user:password@` (the user may be empty): the user stays, the
/// password goes.
const URL_USERINFO: &str = r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@]*):[^@\s/]+@";

/// `-u user:pass` / `--user user:pass` (curl, wget, httpie): the user stays.
const CLI_USER_PASS: &str = r#"((?:^|\s)(?:-u\s*|--user[\s=]+)['"]?)([^\s:'"@/]+):([^\s'"]+)"#;

/// `mysql … -pPASSWORD` (the password glued to `-p`; `-p` alone prompts).
const MYSQL_P: &str = r#"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p)(?:'[^']*'|"[^"]*"|[^\s'"]+)"#;

/// `text` with secrets replaced by `[redacted]`; idempotent. Names and users
/// around a secret stay (`DB_PASS=[redacted]`, `postgres://cairn:[redacted]@db`).
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for rule in RULES.iter() {
        if rule.pattern.is_match(&out) {
            out = rule.pattern.replace_all(&out, rule.with).into_owned();
        }
    }
    bare_aws_secrets(&out)
}

/// The family of the first secret in `text` (`"github token"`), if any: for
/// an error that names what was refused without repeating it.
pub fn secret_family(text: &str) -> Option<&'static str> {
    if let Some(rule) = RULES.iter().find(|r| r.pattern.is_match(text)) {
        return Some(rule.family);
    }
    (bare_aws_secrets(text) != text).then_some("aws secret key")
}

/// Whether `text` holds nothing but secrets: after redaction, no letter or
/// digit is left besides the `[redacted]` marks. An empty text is not.
pub fn only_secrets(text: &str) -> bool {
    let r = redact(text);
    r != text && !r.replace(REDACTED, "").chars().any(char::is_alphanumeric)
}

/// Whether one word looks like a random credential the rules do not name:
/// 20 characters or more holding upper case, lower case and digits, that
/// change class at least every 2.5 characters on average (hex hashes and
/// UUIDs have one case, so they stay names). Random base62
/// changes class at ~62 % of positions; identifiers such as
/// `PolicyControllerV2Handler` (28 %) or `snake_case_name` far less often.
pub fn looks_like_secret(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric());
    if w.len() < 20 || w.contains(|c: char| c.is_whitespace()) {
        return false;
    }
    let class = |c: char| match c {
        'A'..='Z' => 1,
        'a'..='z' => 2,
        '0'..='9' => 3,
        _ => 0,
    };
    let chars: Vec<u8> = w.chars().map(class).collect();
    let changes = chars
        .windows(2)
        .filter(|p| p[0] != p[1] && p[0] != 0 && p[1] != 0)
        .count();
    let has = |k: u8| chars.contains(&k);
    has(1) && has(2) && has(3) && changes * 10 >= chars.len() * 4
}

/// A bare AWS secret access key: 40 characters of base64 with upper and
/// lower case, a digit and a `/` or `+`, standing alone. Git hashes and
/// other hex strings have no `/` or `+`, so they stay.
fn bare_aws_secrets(text: &str) -> String {
    static RUN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[A-Za-z0-9/+]{40}").expect("the bare-key pattern compiles"));
    let is_b64 = |c: char| c.is_ascii_alphanumeric() || c == '/' || c == '+' || c == '=';
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in RUN.find_iter(text) {
        let k = m.as_str();
        let alone = !text[..m.start()].chars().next_back().is_some_and(is_b64)
            && !text[m.end()..].chars().next().is_some_and(is_b64);
        let mixed = k.contains(|c: char| c.is_ascii_uppercase())
            && k.contains(|c: char| c.is_ascii_lowercase())
            && k.contains(|c: char| c.is_ascii_digit())
            && k.contains(['/', '+']);
        if alone && mixed {
            out.push_str(&text[last..m.start()]);
            out.push_str(REDACTED);
            last = m.end();
        }
    }
    out.push_str(&text[last..]);
    out
}

/// The shape fixture every channel's test shares (plain Rust, no dependency).
#[cfg(test)]
#[path = "../../cairn-test-support/src/secrets.rs"]
#[allow(dead_code)]
mod secrets_fixture;

#[cfg(test)]
mod tests {
    use super::*;

    use super::secrets_fixture as secrets;

    #[test]
    fn every_shape_of_the_fixture_is_removed_and_prose_stays() {
        let shapes = secrets::shapes();
        assert!(shapes.len() >= 45, "{} shapes", shapes.len());
        let mut leaked = Vec::new();
        for s in &shapes {
            let r = redact(&format!("Before it, {} and after it.", s.line));
            if r.contains(&s.secret) {
                leaked.push(format!("{}: {r}", s.name));
            }
            // The rule that names it is found too, and a line of it alone is only a secret.
            assert!(secret_family(&s.line).is_some(), "{}: no family", s.name);
            assert!(
                r.starts_with("Before it,") && r.ends_with("after it."),
                "{}: {r}",
                s.name
            );
            assert_eq!(redact(&r), r, "{}: not idempotent", s.name);
        }
        assert!(
            leaked.is_empty(),
            "{} leaked:\n{}",
            leaked.len(),
            leaked.join("\n")
        );
    }

    #[test]
    fn prose_code_and_hashes_stay() {
        for plain in [
            "The basic configuration works; commit 3c20f27a9b1e4d5f60718293a4b5c6d7e8f90123 fixed it.",
            "git push -u origin main and mysql -p to be asked for the password",
            "primary_key: id, sort_key: name; the keyboard: qwerty",
            "PolicyControllerV2Handler calls snake_case_function_name in src/auth/jwt.rs",
            "nothing to hide here",
        ] {
            assert_eq!(redact(plain), plain);
            assert_eq!(secret_family(plain), None, "{plain}");
        }
    }

    #[test]
    fn a_key_block_cut_before_its_end_is_redacted_to_the_end() {
        let cut =
            "ok -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ";
        assert_eq!(redact(cut), "ok [redacted]");
    }

    #[test]
    fn secrets_of_every_shape_are_removed_in_one_text() {
        let text = "key sk-ant-api03-abcdefghijklmnopqrstuv, aws AKIAABCDEFGHIJKLMNOP, \
                    gh ghp_abcdefghijklmnopqrstuvwxyz0123456789, password: hunter2secret, \
                    DB_PASSWORD=\"p@ss word\", Authorization: Bearer abcdefghijklmnop123, \
                    <private>my home address\nline two</private> done";
        let r = redact(text);
        for secret in [
            "sk-ant",
            "AKIAABCD",
            "ghp_",
            "hunter2",
            "p@ss",
            "abcdefghijklmnop123",
            "home address",
        ] {
            assert!(!r.contains(secret), "{secret} left in {r}");
        }
        assert!(
            r.contains("password: [redacted]") && r.ends_with("done"),
            "{r}"
        );
    }

    #[test]
    fn only_secrets_and_random_words_are_told_apart() {
        assert!(only_secrets("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
        assert!(only_secrets(" xapp-1-A0123456789-1234567890123-abcdef "));
        assert!(!only_secrets(
            "deploy key ghp_abcdefghijklmnopqrstuvwxyz0123456789"
        ));
        assert!(!only_secrets("caching"));
        assert!(!only_secrets(""));
        assert!(looks_like_secret("q8Zr3LmX0pT7vN2kW9yB4cJ6"));
        assert!(looks_like_secret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
        for name in [
            "PolicyControllerV2Handler",
            "Table._calculate_column_widths",
            "snake_case_function_name",
            "3c20f27a9b1e4d5f60718293a4b5c6d7e8f90123",
            "HTTPServerConfiguration",
        ] {
            assert!(!looks_like_secret(name), "{name}");
        }
    }
}
