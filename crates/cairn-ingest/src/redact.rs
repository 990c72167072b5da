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
    ("hugging face token", r"\bapi_org_[A-Za-z0-9]{30,}\b"),
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
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,}",
    ),
    ("grafana token", r"\b(?:glc|glsa)_[A-Za-z0-9_+/]{32,}={0,2}"),
    ("sentry token", r"\bsntr[ysu]_[A-Za-z0-9+/=_]{40,}"),
    ("new relic key", r"\bNRA[KI]-[A-Z0-9]{27}\b"),
    ("supabase token", r"\bsbp_[a-f0-9]{40}\b"),
    ("pulumi token", r"\bpul-[a-f0-9]{40}\b"),
    ("replicate token", r"\br8_[A-Za-z0-9]{37}\b"),
    ("perplexity key", r"\bpplx-[A-Za-z0-9]{40,}"),
    ("xai key", r"\bxai-[A-Za-z0-9]{60,}"),
    ("atlassian token", r"\bATATT3[A-Za-z0-9_\-=]{50,}"),
    (
        "1password service account token",
        r"\bops_eyJ[A-Za-z0-9+/_\-]{40,}={0,3}",
    ),
    (
        "planetscale token",
        r"\bpscale_(?:tkn|pw|oauth|otkn)_[A-Za-z0-9_\-\.=]{32,}",
    ),
    ("alibaba access key id", r"\bLTAI[A-Za-z0-9]{12,20}\b"),
    (
        "firebase cloud messaging key",
        r"\bAAAA[A-Za-z0-9_\-]{7}:(?:APA91b[A-Za-z0-9_\-]{20,}|[A-Za-z0-9_\-]{100,})",
    ),
    ("google oauth refresh token", r"\b1//0[A-Za-z0-9_\-]{20,}"),
    ("heroku token", r"\bHRKU-[A-Za-z0-9_\-]{20,}"),
    // Password hashes of htpasswd and crypt(3) lines: an offline guess
    // away from the password.
    (
        "password hash",
        r"\$(?:apr1|1|5|6)\$[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{20,}",
    ),
    ("password hash", r"\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}"),
    ("password hash", r"\{SHA\}[A-Za-z0-9+/]{27}="),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
    ),
];

/// The rules, in the order they run: whole blocks first, then shapes with a
/// known prefix, then the context around a secret (a header, a command
/// line). The passes of [`PASSES`] run after them: URL passwords, then
/// names that say a value is secret. Context runs before names so that
/// `token: Bearer <tok>` and `password: mysql -p<pw>` are seen whole by the
/// rule that knows them; the name rule then takes what is left of the value.
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
        // Authorization: Bearer … / Basic … / token …
        ("bearer token", r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{12,}", REDACTED),
        ("authorization header", AUTH_HEADER, "$1[redacted]"),
        ("basic auth", BASIC_AUTH, "$1[redacted]"),
        // docker's config.json: "auth": "<base64 of user:password>".
        (
            "docker config auth",
            r#"(?i)(\\?"auth\\?"\s*:\s*\\?")[A-Za-z0-9+/]{8,}={0,2}(\\?")"#,
            "$1[redacted]$2",
        ),
        // Azure (and S3 presigned) URL signatures.
        ("sas signature", r"(?i)(\b(?:sig|x-amz-signature)=)[A-Za-z0-9%/+=]{16,}", "$1[redacted]"),
        ("azure ad client secret", AZURE_AD_SECRET, "$1[redacted]$2"),
        // Passwords on a command line: curl -u user:pass, mysql -pPASS,
        // sshpass -p PASS, docker login -p PASS, --password PASS.
        ("command-line password", CLI_USER_PASS, "$1$2:[redacted]"),
        ("command-line password", MYSQL_P, "$1[redacted]"),
        ("command-line password", r"(\bsshpass\s+-p\s*)[^\s;|&]+", "$1[redacted]"),
        ("command-line password", LOGIN_P, "$1[redacted]"),
        ("command-line password", SECRET_FLAG, "$1[redacted]"),
        ("command-line password", JAVA_STOREPASS, "$1[redacted]"),
        ("command-line password", r"(\s-pass(?:in|out)?[ \t]+(?:pass|env):)[^\s;|&]+", "$1[redacted]"),
    ])
    .map(|(family, p, with)| Rule {
        family,
        pattern: Regex::new(p).unwrap_or_else(|e| panic!("redaction rule {family}: {e}")),
        with,
    })
    .collect()
});

/// A pass: the text in, the text with what it found redacted out.
type Pass = fn(&str) -> String;

/// The passes that are more than one pattern, in the order they run after
/// [`RULES`]: (family, pass).
const PASSES: &[(&str, Pass)] = &[
    ("url password", url_passwords),
    ("named secret", named_secrets),
    ("named env secret", named_env_secrets),
    ("base64-encoded secret", encoded_secrets),
    ("aws secret key", bare_aws_secrets),
];

/// A name that says its value is secret (key, secret, token, password,
/// credentials), then `:`, `=`, `=>` or `:=`. Its value is found by
/// [`value_spans`].
const KEY_NAME: &str = r#"(?i)\b([A-Za-z0-9_]*(?:api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key|client[_-]?secret|encryption[_-]?key|signing[_-]?key|master[_-]?key|key[_-]data|certificate[_-]data|secret|token|password|passwd|passphrase|credentials?)[A-Za-z0-9_]*(?:\\?")?)([ \t]*(?::=|=>|==|[:=])[ \t]*)"#;

/// An environment name with a `KEY`, `PASS`, `PWD` or `AUTH` part
/// (`DB_PASS=…`, `ENCRYPTION_KEY=…`, `SMTP_PWD=…`). Case matters:
/// `primary_key: id` in prose is not an env line.
const ENV_NAME: &str = r#"\b([A-Z][A-Z0-9_]*?(?:_KEY|_PASS|_PWD|_AUTH|PASS_|KEY_)[A-Z0-9_]*(?:\\?")?)([ \t]*(?::=|=>|==|[:=])[ \t]*)"#;

/// `Authorization: <scheme> <credential>` for any scheme word, short
/// credentials included (the header's name says what follows).
const AUTH_HEADER: &str = r#"(?i)(\bauthorization["']?[ \t]*[:=][ \t]*["']?(?:bearer|basic|token|bot|digest|apikey|api-key|sso-key|ssws|negotiate)[ \t]+)[A-Za-z0-9_\-.=+/~:%]{4,}"#;

/// `Authorization: Basic <base64>` (only after the header's name: "basic"
/// alone is a common word).
const BASIC_AUTH: &str =
    r"(?i)(authorization[\x22']?\s*[:=]\s*[\x22']?basic\s+)[A-Za-z0-9+/]{8,}={0,2}";

/// An Azure AD client secret: 3 characters, a digit, `Q~`, then 31 to 34
/// (gitleaks' `azure-ad-client-secret`), standing alone.
const AZURE_AD_SECRET: &str =
    r"(^|[^A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}($|[^A-Za-z0-9_~.\-])";

/// `-u user:pass` / `--user user:pass` (curl, wget, httpie): the user stays.
const CLI_USER_PASS: &str = r#"((?:^|\s)(?:-u\s*|--user[\s=]+)['"]?)([^\s:'"@/]+):([^\s'"]+)"#;

/// `mysql … -pPASSWORD` (the password glued to `-p`; `-p` alone prompts).
const MYSQL_P: &str = r#"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p)(?:'[^']*'|"[^"]*"|[^\s'";|&]+)"#;

/// `docker login … -p PASSWORD` and the other registry clients' `login`
/// (`-p` is a port or a path elsewhere, so only after `login`).
const LOGIN_P: &str = r#"(\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|finch)\b[^\n|;&]*?\blogin\b[^\n|;&]*?\s-p(?:[ \t]+|=)?)(?:'[^'\n]*'|"[^"\n]*"|[^\s'";|&]+)"#;

/// `--password PASS`, `--password=PASS`, `--token …`, `--api-key …`,
/// `--client-secret …` of any command (`--password-stdin`, `--token-file`
/// name no secret: the flag must end there). A short lower-case word after
/// the flag is prose (`--token or --token-file`), not its value.
const SECRET_FLAG: &str = r#"(?i)(\s--(?:[a-z0-9]+-)*(?:password|passwd|token|api-?key|secret)(?:[ \t]+|=))(?-i:'[^'\n]*'|"[^"\n]*"|[^\s'";|&\-<$a-z][^\s'";|&]*|[a-z]+[^\s'";|&a-z][^\s'";|&]*|[a-z]{9,})"#;

/// keytool's and jarsigner's `-storepass PASS` / `-keypass PASS`.
const JAVA_STOREPASS: &str =
    r"(\s-(?:src|dest)?(?:store|key)pass[ \t]+)(?:'[^'\n]*'|\x22[^\x22\n]*\x22|[^\s'\x22;|&]+)";

/// `scheme://user:password@host`: the user stays, the password goes, up
/// to the last `@` of the address (a password may hold `/`, `:` or `@`).
const URL_USERINFO: &str = r#"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@'"<>]*):([^\s'"<>]*)@"#;

/// Passwords in URLs' userinfo (`postgres://cairn:pa/ss@w0rd@db`), not a
/// port before a path that holds an `@` (`http://host:4873/@scope/pkg`).
fn url_passwords(text: &str) -> String {
    static URL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(URL_USERINFO).expect("the URL pattern compiles"));
    if !URL.is_match(text) {
        return text.to_string();
    }
    URL.replace_all(text, |c: &regex::Captures<'_>| {
        let pw = &c[2];
        let digits = pw.bytes().take_while(u8::is_ascii_digit).count();
        let port_then_path = (1..=5).contains(&digits) && pw[digits..].starts_with('/');
        if pw.is_empty() || port_then_path {
            c[0].to_string()
        } else {
            format!("{}:{REDACTED}@", &c[1])
        }
    })
    .into_owned()
}

fn named_secrets(text: &str) -> String {
    static NAME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(KEY_NAME).expect("the name pattern compiles"));
    named_values(text, &NAME)
}

fn named_env_secrets(text: &str) -> String {
    static NAME: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(ENV_NAME).expect("the env pattern compiles"));
    named_values(text, &NAME)
}

/// Every value after a name `name` matches (group 1 the name, the match's
/// end the value's start) replaced by [`REDACTED`]; the name stays.
fn named_values(text: &str, name: &Regex) -> String {
    if !name.is_match(text) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut from) = (0, 0);
    // The line of the last match, found once per line (a long line with
    // many names costs its length once, not once per name).
    let mut line: Option<std::ops::Range<usize>> = None;
    while let Some(c) = name.captures_at(text, from) {
        let (whole, key) = (c.get(0).expect("a match"), c.get(1).expect("a name"));
        from = whole.end();
        if !secret_name(key.as_str()) {
            continue;
        }
        let k = key.start();
        let line = match &mut line {
            Some(l) if k <= l.end => l.clone(),
            l => {
                // The previous line's end (its newline) or the text's start.
                let from = l.as_ref().map_or(0, |l| l.end);
                let start = text[from..k].rfind('\n').map_or(from, |i| from + i + 1);
                let end = text[k..].find('\n').map_or(text.len(), |i| k + i);
                l.insert(start..end).clone()
            }
        };
        let sep = c.get(2).map_or("", |m| m.as_str());
        for span in value_spans(text, line, k, sep, whole.end()) {
            if span.start < copied {
                continue;
            }
            out.push_str(&text[copied..span.start]);
            out.push_str(REDACTED);
            copied = span.end;
            from = from.max(span.end);
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether a name the pattern matched says its value is secret: not a
/// count, a limit, a type, an address or a file that says where one is
/// (`max_tokens`, `token_type`, `token_url`, `password_file`, `secretName`).
fn secret_name(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const NOT_SECRET_ENDS: &[&str] = &[
        "count",
        "len",
        "length",
        "limit",
        "size",
        "type",
        "types",
        "url",
        "uri",
        "endpoint",
        "file",
        "path",
        "dir",
        "env",
        "name",
        "expiry",
        "expires",
        "expiresin",
        "ttl",
        "header",
        "prefix",
        "field",
        "budget",
        "policy",
        "format",
        "method",
        "kind",
    ];
    // Tokens in the plural are counted (`max_tokens`, `mean_tokens`)
    // unless the name says what they open.
    const OPENING: &[&str] = &[
        "auth", "access", "refresh", "api", "bearer", "session", "secret", "deploy", "personal",
    ];
    !(n.contains("tokeniz")
        || NOT_SECRET_ENDS.iter().any(|e| n.ends_with(e))
        || (n.ends_with("tokens") && !OPENING.iter().any(|o| n.contains(o))))
}

/// Where the value after a secret name lies: a quoted string (to its
/// closing quote), a JSON or YAML flow value (`{…}`, `[…]`, to its closing
/// bracket), a YAML block under the name (its more-indented lines), or
/// an unquoted value: the rest of the line when the name opens a YAML or
/// INI line (`password: correct horse battery`), else one word with what composes
/// it (`Bearer <tok>`, `Authorization: Basic <b64>`, a command's flags). A
/// value already redacted, a reference (`$VAR`, `<your token>`) or a
/// literal (`none`, `true`) is no secret: no span.
fn value_spans(
    text: &str,
    line: std::ops::Range<usize>,
    key_start: usize,
    sep: &str,
    v: usize,
) -> Vec<std::ops::Range<usize>> {
    let (line_start, line_end) = (line.start, line.end);
    let rest = text[v..line_end].trim_end();
    if starts_redacted(rest) || rest.starts_with(':') {
        return Vec::new();
    }
    if rest.is_empty() || is_block_indicator(rest) {
        return yaml_block(text, line_start, v, line_end, !rest.is_empty());
    }
    let first = rest.as_bytes()[0];
    match first {
        b'"' | b'\'' => {
            let close = quote_end(&text[v..line_end], first).map_or(v + rest.len(), |e| v + e);
            if text[v + 1..close]
                .trim_end_matches(['"', '\''])
                .eq_ignore_ascii_case(REDACTED)
            {
                return Vec::new();
            }
            span(v..close)
        }
        // JSON inside a string, its quotes escaped (`{\"password\": \"…\"}`:
        // a Debug-printed error, a JSON literal in code).
        b'\\' if rest.starts_with("\\\"") => {
            let close = rest[2..]
                .find("\\\"")
                .map_or(v + rest.len(), |i| v + 2 + i + 2);
            if text[v + 2..close]
                .trim_end_matches(['\\', '"'])
                .eq_ignore_ascii_case(REDACTED)
            {
                return Vec::new();
            }
            span(v..close)
        }
        b'{' | b'[' => span(v..balanced_end(text, v).unwrap_or(text.len())),
        b'$' | b'<' => Vec::new(),
        // Markdown: `password:` then a closing backtick is a name in code;
        // `password: `hunter2`` a value in code.
        b'`' if !sep.ends_with([' ', '\t']) => Vec::new(),
        b'`' => span(v..quote_end(&text[v..line_end], b'`').map_or(v + rest.len(), |e| v + e)),
        _ => {
            const LITERALS: &[&str] = &["none", "null", "nil", "true", "false", "yes", "no"];
            let word = rest.split([' ', '\t', ',', ';']).next().unwrap_or_default();
            if LITERALS.contains(&word.to_ascii_lowercase().as_str()) {
                return Vec::new();
            }
            let before = &text[line_start..key_start];
            // `NAME=value cmd` is the shell's: one word, the command stays.
            let shell = sep == "=";
            let end = if opens_line(before) && !shell {
                v + line_value_len(rest)
            } else {
                composed_end(text, v, line_end)
            };
            span(v..trim_closer(text, v, end))
        }
    }
}

/// One span (a function, where `vec![a..b]` reads as a range's items).
fn span(r: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    vec![r]
}

/// A YAML block scalar's indicator (`|`, `>-`, `|+2`).
fn is_block_indicator(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b[0], b'|' | b'>')
        && b.len() <= 3
        && b[1..]
            .iter()
            .all(|c| matches!(c, b'+' | b'-' | b'0'..=b'9'))
}

/// The lines under a name with no value on its own line that are indented
/// more than it: after a block indicator all of them, one span; otherwise
/// (a nested mapping or list, like JSON's nested object) each line's
/// value, its keys and dashes kept. A blank line ends a block without
/// indicator (prose after a heading is no YAML).
fn yaml_block(
    text: &str,
    line_start: usize,
    v: usize,
    line_end: usize,
    indicator: bool,
) -> Vec<std::ops::Range<usize>> {
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let key_indent = indent(&text[line_start..v]);
    let mut spans = Vec::new();
    let mut at = line_end;
    let mut block_end = None;
    while at < text.len() {
        let start = at + 1;
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = text[start..end].trim_end();
        if line.trim().is_empty() {
            if !indicator {
                break;
            }
            at = end;
            continue;
        }
        if indent(line) <= key_indent {
            break;
        }
        let content = start + indent(line);
        if indicator {
            block_end = Some(start + line.len());
        } else if let Some(s) = nested_value(text, content, start + line.len()) {
            spans.push(s);
        }
        at = end;
    }
    if indicator {
        // The indicator alone (nothing under it) goes too.
        return span(v..block_end.unwrap_or(v + text[v..line_end].trim_end().len()));
    }
    spans
}

/// The value part of one line under a secret YAML name: `- item`, `key:
/// value` or a plain scalar; none for a nested name, a comment or a value
/// already redacted.
fn nested_value(text: &str, from: usize, to: usize) -> Option<std::ops::Range<usize>> {
    let mut s = from;
    if text[s..to].starts_with("- ") {
        s += 2;
        s += text[s..to].len() - text[s..to].trim_start().len();
    }
    let line = &text[s..to];
    if line.starts_with('#') {
        return None;
    }
    if let Some(colon) = line
        .find(": ")
        .or_else(|| line.ends_with(':').then(|| line.len() - 1))
        && !line[..colon].contains([' ', '"', '\''])
    {
        s += colon + 1;
        s += text[s..to].len() - text[s..to].trim_start().len();
    }
    let value = text[s..to].trim_end();
    (!value.is_empty() && !starts_redacted(value)).then(|| s..s + value.len())
}

/// Whether `s` opens with a `[redacted]` mark (any case).
fn starts_redacted(s: &str) -> bool {
    s.get(..REDACTED.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(REDACTED))
}

/// Whether the text before a name on its line makes the name open a
/// `key: value` line (YAML, an env file, a list item, `export`).
fn opens_line(before: &str) -> bool {
    if before.len() > 40 {
        return false;
    }
    let b = before.trim_start_matches([' ', '\t']);
    let b = b
        .strip_prefix("- ")
        .or_else(|| b.strip_prefix("* "))
        .unwrap_or(b);
    let b = b
        .strip_prefix("export ")
        .or_else(|| b.strip_prefix("set "))
        .unwrap_or(b);
    b.is_empty() || b == "\"" || b == "'"
}

/// The length of the value of a `key: value` line: the rest of the line
/// without a trailing comment (` # …`) or a trailing comma.
fn line_value_len(rest: &str) -> usize {
    let v = rest.find(" #").map_or(rest, |i| &rest[..i]);
    let v = v.trim_end().trim_end_matches(',').trim_end();
    if v.is_empty() { rest.len() } else { v.len() }
}

/// The end of an unquoted value in running text: one word, and the words
/// that compose it: after a scheme (`Bearer`, `Basic`, `token`) or a
/// header's name (`Authorization:`) the next word; before a flag (`mysql
/// -p…`, `login -u ci -p …`) the command to its end (`;`, `|`, `&&` or the
/// line's end).
fn composed_end(text: &str, v: usize, line_end: usize) -> usize {
    const SCHEMES: &[&str] = &[
        "bearer",
        "basic",
        "token",
        "bot",
        "digest",
        "apikey",
        "api-key",
        "sso-key",
        "ssws",
        "negotiate",
        "oauth",
    ];
    let word_end = |from: usize| {
        text[from..line_end]
            .find(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .map_or(line_end, |i| from + i)
    };
    let (mut start, mut end) = (v, word_end(v));
    loop {
        let next = end
            + (text[end..line_end].len()
                - text[end..line_end].trim_start_matches([' ', '\t']).len());
        if next >= line_end || next == end {
            return end;
        }
        let word = &text[start..end];
        let after = &text[next..line_end];
        if is_flag(after) {
            return flags_end(text, next, line_end);
        }
        let bare = word.trim_end_matches(':').to_ascii_lowercase();
        let header = word.len() > 1
            && word.ends_with(':')
            && word[..word.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        let next_end = word_end(next);
        // A credential has letters or digits (`…` and `<tok>` are no value).
        let credential = text[next..next_end]
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .count()
            >= 4;
        if (SCHEMES.contains(&bare.as_str()) || header) && credential {
            (start, end) = (next, next_end);
        } else {
            return end;
        }
    }
}

/// Whether a word is a command-line flag (`-u`, `-pS3cret`, `--user`).
fn is_flag(word: &str) -> bool {
    let w = word.strip_prefix("--").or_else(|| word.strip_prefix('-'));
    w.is_some_and(|w| w.starts_with(|c: char| c.is_ascii_alphabetic()))
}

/// The end of a command's flags from `at`: each flag, and the word after a
/// flag that takes one (`-u root`, `--user root`; not `-pS3cret` nor
/// `--user=root`), up to the first other word, `;`, `|` or `&`: the prose
/// after a command in running text stays.
fn flags_end(text: &str, mut at: usize, line_end: usize) -> usize {
    let mut end = at;
    let mut takes_value = false;
    while at < line_end {
        let word_len = text[at..line_end]
            .find(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&'))
            .unwrap_or(line_end - at);
        let word = &text[at..at + word_len];
        if word.is_empty() {
            break;
        }
        if is_flag(word) {
            takes_value = !word.contains('=')
                && (word.len() == 2 || (word.starts_with("--") && word.len() > 3));
        } else if takes_value {
            takes_value = false;
        } else {
            break;
        }
        end = at + word_len;
        at = end
            + (text[end..line_end].len()
                - text[end..line_end].trim_start_matches([' ', '\t']).len());
        if at == end {
            break;
        }
    }
    end
}

/// `end`, less a closing quote, backtick or bracket that ends the value
/// and opens nowhere in it (`'token: abc'`, `(password: x)`).
fn trim_closer(text: &str, v: usize, end: usize) -> usize {
    let value = &text[v..end];
    let Some(last) = value.chars().next_back() else {
        return end;
    };
    let opener = match last {
        '\'' | '"' | '`' => last,
        ')' => '(',
        ']' => '[',
        '}' => '{',
        _ => return end,
    };
    let inner = &value[..value.len() - 1];
    if value.len() > 1 && !inner.contains(opener) {
        end - 1
    } else {
        end
    }
}

/// The end (past the closing quote) of a string opening `s`, backslash
/// escapes in double quotes skipped.
fn quote_end(s: &str, quote: u8) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        if b[i] == b'\\' && quote == b'"' {
            i += 2;
            continue;
        }
        if b[i] == quote {
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// The end (past the closing bracket) of the JSON or YAML flow value
/// opening at `at`, strings skipped (their quotes escaped too, `\"`, for
/// JSON inside a string); none when it is not closed.
fn balanced_end(text: &str, at: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    // Inside a string: whether its quotes are escaped ones.
    let mut string: Option<bool> = None;
    let mut i = at;
    while i < b.len() {
        let escaped_quote = b[i] == b'\\' && b.get(i + 1) == Some(&b'"');
        match string {
            Some(true) if escaped_quote => {
                string = None;
                i += 2;
                continue;
            }
            Some(_) if b[i] == b'\\' => {
                i += 2;
                continue;
            }
            Some(false) if b[i] == b'"' => string = None,
            Some(_) => {}
            None if escaped_quote => {
                string = Some(true);
                i += 2;
                continue;
            }
            None => match b[i] {
                b'"' => string = Some(false),
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// Base64 blobs that decode to text holding a secret (a `.env` file, a
/// kubeconfig's `client-key-data`, a PEM key) are redacted whole.
fn encoded_secrets(text: &str) -> String {
    static RUN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"[A-Za-z0-9+/_\-]{24,}={0,2}").expect("the base64 pattern compiles")
    });
    let mut out = String::new();
    let mut last = 0;
    for m in RUN.find_iter(text) {
        let Some(decoded) = decode_base64(m.as_str()) else {
            continue;
        };
        let Ok(decoded) = String::from_utf8(decoded) else {
            continue;
        };
        let printable = decoded
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'));
        if printable && decoded.trim().len() >= 8 && redact(&decoded) != decoded {
            out.push_str(&text[last..m.start()]);
            out.push_str(REDACTED);
            last = m.end();
        }
    }
    if last == 0 {
        return text.to_string();
    }
    out.push_str(&text[last..]);
    out
}

/// Standard or URL-safe base64, padding optional; none when `s` is not.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `text` with secrets replaced by `[redacted]`; idempotent. Names and users
/// around a secret stay (`DB_PASS=[redacted]`, `postgres://cairn:[redacted]@db`).
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for rule in RULES.iter() {
        if rule.pattern.is_match(&out) {
            out = rule.pattern.replace_all(&out, rule.with).into_owned();
        }
    }
    for (_, pass) in PASSES {
        out = pass(&out);
    }
    out
}

/// The family of the first secret in `text` (`"github token"`), if any: for
/// an error that names what was refused without repeating it.
pub fn secret_family(text: &str) -> Option<&'static str> {
    if let Some(rule) = RULES.iter().find(|r| r.pattern.is_match(text)) {
        return Some(rule.family);
    }
    PASSES
        .iter()
        .find(|(_, pass)| pass(text) != text)
        .map(|&(family, _)| family)
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
        assert!(shapes.len() >= 95, "{} shapes", shapes.len());
        let mut leaked = Vec::new();
        for s in &shapes {
            let r = redact(&format!("Before it, {} and after it.", s.line));
            if r.contains(&s.secret) {
                leaked.push(format!("{}: {r}", s.name));
            }
            // As an error quotes it (`{:?}`, serde's "invalid type: string
            // \"…\""): quotes escaped, newlines as `\n`.
            let quoted = redact(&format!("no memory {:?} here", s.line));
            if quoted.contains(&s.secret) {
                leaked.push(format!("{}, quoted: {quoted}", s.name));
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
    fn the_whole_value_after_a_key_name_goes() {
        // Issue 60: the key rule took the next word only.
        for (text, want) in [
            ("auth_token: Bearer abc123", "auth_token: [redacted]"),
            ("x token=Bearer abc123 y", "x token=[redacted] y"),
            (
                "see credentials: Authorization: Basic YWRtaW46cHc= now",
                "see credentials: [redacted] now",
            ),
            (
                r#"{"credentials": {"password": "pw-1", "user": "u"}, "n": 1}"#,
                r#"{"credentials": [redacted], "n": 1}"#,
            ),
            (
                "so password: mysql -u root -pS3cr3t; echo ok",
                "so password: [redacted]; echo ok",
            ),
            (
                "a password: mysql -u root -pS3cr3t and more",
                "a password: [redacted] and more",
            ),
            (
                "password: correct horse battery staple # old",
                "password: [redacted] # old",
            ),
            ("  - token = one two three", "  - token = [redacted]"),
            (
                "DB_PASS=hunter22 ./migrate --all",
                "DB_PASS=[redacted] ./migrate --all",
            ),
            (
                "private_key: |\n  line one\n  line two\nnext: 1",
                "private_key: [redacted]\nnext: 1",
            ),
            (
                "credentials:\n  user: ci\n  pw: s3cret\n  - tok-1\nname: app",
                "credentials:\n  user: [redacted]\n  pw: [redacted]\n  - [redacted]\nname: app",
            ),
            (
                "docker login -u ci -p Dock3rPw reg",
                "docker login -u ci -p [redacted] reg",
            ),
            (
                "podman login --password Pw-123 reg",
                "podman login --password [redacted] reg",
            ),
            (
                "keytool -storepass chang3it -list",
                "keytool -storepass [redacted] -list",
            ),
            (
                "openssl enc -pass pass:Pw-123 -in f",
                "openssl enc -pass pass:[redacted] -in f",
            ),
            (
                "postgres://u:pa/ss@w0rd@db/x ok",
                "postgres://u:[redacted]@db/x ok",
            ),
            // JSON inside a string (an error's Debug print, a literal in code).
            (
                r#"body "{\"password\": \"pw-1\", \"n\": 1}""#,
                r#"body "{\"password\": [redacted], \"n\": 1}""#,
            ),
            (
                r#"id "{\"credentials\": {\"pw\": \"pw-2\"}}" x"#,
                r#"id "{\"credentials\": [redacted]}" x"#,
            ),
            (
                r#"{\"auths\": {\"r\": {\"auth\": \"YWRtaW46cHc=\"}}}"#,
                r#"{\"auths\": {\"r\": {\"auth\": \"[redacted]\"}}}"#,
            ),
        ] {
            assert_eq!(redact(text), want, "{text}");
            assert_eq!(redact(want), want, "{want}: not idempotent");
        }
    }

    #[test]
    fn names_that_count_or_point_and_prose_around_flags_stay() {
        for plain in [
            "max_tokens: 512, token_type: bearer, token_url: https://oauth2.example/token",
            "password_file: /run/secrets/db and secretName: db-creds",
            "give the token with --token or --token-file, not both; --password-stdin reads it",
            "http://localhost:4873/@scope/pkg and https://example.com/@user",
            "password: none, token: $GITHUB_TOKEN, secret: <your secret>",
            "docker run -p 8080:80 app; ssh -p 22 host",
            "Token::new() and let t = Tokenizer::from_file(p)",
            // Base64 of ordinary text is no secret.
            "aGVsbG8gd29ybGQsIHRoaXMgaXMgb3JkaW5hcnkgdGV4dA==",
        ] {
            assert_eq!(redact(plain), plain);
            assert_eq!(secret_family(plain), None, "{plain}");
        }
        // A value's closing quote or bracket stays with the text.
        assert_eq!(redact("run 'token: abc123'"), "run 'token: [redacted]'");
        assert_eq!(redact("(password: abc123)"), "(password: [redacted])");
        assert_eq!(
            redact("CAIRN_HTTP_TOKEN=abc cairn serve"),
            "CAIRN_HTTP_TOKEN=[redacted] cairn serve"
        );
    }

    #[test]
    fn a_long_line_of_names_costs_its_length_once() {
        // Each name finds its line once per line, not once per name.
        let line = "x token: abc ".repeat(20_000);
        let r = redact(&line);
        assert_eq!(r.matches("token: [redacted]").count(), 20_000);
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
