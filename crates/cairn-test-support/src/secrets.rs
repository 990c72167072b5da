//! Credential shapes every channel must redact: one line per shape, in the
//! rule families of gitleaks (cloud keys, VCS tokens, chat and payment
//! webhooks, OAuth client secrets, private key blocks of any length, env
//! lines whose name says secret/pass/key/token, connection strings,
//! `-u user:pass`, `-p<pass>`, SAS signatures, JWTs, bot tokens).
//!
//! Each value is made up: the shape is real, the secret is not. The file is
//! plain Rust with no dependency so that `cairn-ingest`'s tests can include
//! it by path (`#[path]`) as well as every crate that has this one as a
//! dev-dependency.

/// One credential shape: its family, a line holding it and the part of the
/// line that must not survive anywhere.
#[derive(Clone, Debug)]
pub struct Shape {
    /// The rule family (gitleaks' naming where it has one).
    pub name: &'static str,
    /// A line as an agent or a person would write it, secret inside.
    pub line: String,
    /// What must be gone after redaction: the secret's distinctive part.
    pub secret: String,
}

fn shape(name: &'static str, line: &str, secret: &str) -> Shape {
    assert!(
        line.contains(secret),
        "{name}: the secret is not in its line"
    );
    Shape {
        name,
        line: line.to_string(),
        secret: secret.to_string(),
    }
}

/// A base64 body of `n` characters for a key block (64 per line).
fn key_body(n: usize) -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x: u32 = 2_463_534_242;
    let mut out = String::with_capacity(n + n / 64);
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out.push(alphabet[(x % 64) as usize] as char);
        if i % 64 == 63 {
            out.push('\n');
        }
    }
    out
}

/// `n` characters of `alphabet`, made up from `seed` (xorshift): a token's
/// body that no other shape shares.
fn chars_of(alphabet: &[u8], n: usize, seed: u32) -> String {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            alphabet[(x % alphabet.len() as u32) as usize] as char
        })
        .collect()
}

/// `n` letters and digits made up from `seed`.
fn alnum(n: usize, seed: u32) -> String {
    chars_of(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        n,
        seed,
    )
}

/// Standard base64 with padding (the fixture has no dependency).
fn base64(bytes: &[u8]) -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The middle third of `s`: a part of an encoded secret that no prefix
/// (`LS0tLS1CRUdJTi`, the base64 of `-----BEGIN`) shares with another.
fn middle(s: &str) -> &str {
    &s[s.len() / 3..2 * s.len() / 3]
}

/// Shapes issue 60 found unrecognised, and values composed after a key
/// name (`auth_token: Bearer <tok>`, a nested JSON object, a command line):
/// the key rule used to take the next word only.
fn newer_shapes() -> Vec<Shape> {
    let doppler = alnum(44, 11);
    let doppler_ct = alnum(44, 12);
    let hf_org = alnum(34, 13);
    let atlassian = format!(
        "ATATT3xFfGF0{}={}",
        chars_of(
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
            180,
            14
        ),
        "A1B2C3D4"
    );
    let onepassword = format!(
        "ops_eyJ{}",
        chars_of(
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            300,
            15
        )
    );
    let pscale = alnum(43, 16);
    let pscale_pw = alnum(43, 17);
    let alibaba = format!("LTAI5t{}", alnum(18, 18));
    let azure = format!("{}8Q~{}", alnum(3, 19), alnum(34, 20));
    let fcm = format!("AAAA{}:APA91b{}", alnum(7, 21), alnum(134, 22));
    let gcp_refresh = format!("1//0g{}", alnum(98, 23));
    let heroku = format!("HRKU-AA{}", alnum(58, 24));
    let env_file = format!(
        "APP_ENV=production\nDB_PASSWORD=Env64-{}\nSTRIPE_SECRET_KEY=sk_live_{}\n",
        alnum(16, 25),
        alnum(24, 26)
    );
    let env_b64 = base64(env_file.as_bytes());
    let docker_auth = base64(format!("ci-bot:Dock3rCfg-{}", alnum(20, 27)).as_bytes());
    let pem = format!(
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
        alnum(120, 28)
    );
    let key_data = base64(pem.as_bytes());
    let cert = format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        alnum(120, 29)
    );
    let cert_data = base64(cert.as_bytes());
    let url_pw = format!("pa/ss@w0rd{}", alnum(6, 30));
    let url_pw2 = format!("p@ss:wo/rd{}", alnum(6, 31));
    let apr1 = format!("$apr1${}${}", alnum(8, 32), alnum(22, 33));
    let bcrypt = format!(
        "$2y$10${}",
        chars_of(
            b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            53,
            34
        )
    );
    let sha = format!("{{SHA}}{}=", alnum(27, 35));
    let bearer = alnum(24, 36);
    let short_bearer = alnum(9, 37);
    let basic = base64(format!("admin:Cr3d-{}", alnum(10, 38)).as_bytes());
    let nested = format!("Nested-Pa55-{}", alnum(8, 39));
    let nested2 = format!("Inner-Pw-{}", alnum(10, 46));
    let mysql = format!("MyNested{}", alnum(8, 40));
    let docker_p = format!("Dock3r-{}", alnum(12, 41));
    let docker_eq = format!("Dock3rEq-{}", alnum(12, 42));
    let array = format!("tok-Array-{}", alnum(12, 43));
    let flag = format!("Fl4g-{}", alnum(12, 44));
    let gh_token_header = alnum(10, 45);
    vec![
        shape(
            "doppler service token",
            &format!("DOPPLER dp.st.prd.{doppler}"),
            &doppler,
        ),
        shape(
            "doppler cli token",
            &format!("dp.ct.{doppler_ct}"),
            &doppler_ct,
        ),
        shape(
            "hugging face org token",
            &format!("hf org api_org_{hf_org}"),
            &hf_org,
        ),
        shape(
            "atlassian api token",
            &format!("jira {atlassian}"),
            &atlassian[6..60],
        ),
        shape(
            "1password service account",
            &format!("OP {onepassword}"),
            &onepassword[7..80],
        ),
        shape(
            "planetscale token",
            &format!("pscale_tkn_{pscale}"),
            &pscale,
        ),
        shape(
            "planetscale password",
            &format!("db pscale_pw_{pscale_pw}"),
            &pscale_pw,
        ),
        shape("alibaba access key id", &alibaba, &alibaba[4..]),
        shape(
            "azure ad client secret",
            &format!("client secret {azure} for the app"),
            &azure,
        ),
        shape("fcm server key", &fcm, &fcm[20..120]),
        shape(
            "gcp refresh token",
            &format!("refresh {gcp_refresh}"),
            &gcp_refresh[5..],
        ),
        shape("heroku api key", &heroku, &heroku[7..]),
        shape(
            "base64 .env content",
            &format!("echo {env_b64} | base64 -d > .env"),
            middle(&env_b64),
        ),
        shape(
            "docker config.json auth",
            &format!(r#"{{"auths": {{"ghcr.io": {{"auth": "{docker_auth}"}}}}}}"#),
            &docker_auth,
        ),
        shape(
            "kubeconfig client-key-data",
            &format!("client-key-data: {key_data}"),
            middle(&key_data),
        ),
        shape(
            "kubeconfig client-certificate-data",
            &format!("client-certificate-data: {cert_data}"),
            middle(&cert_data),
        ),
        shape(
            "url password with / and @",
            &format!("postgres://app:{url_pw}@db.example:5432/prod"),
            &url_pw,
        ),
        shape(
            "url password with @ and :",
            &format!("redis://:{url_pw2}@cache.internal:6379"),
            &url_pw2,
        ),
        shape("htpasswd apr1", &format!("admin:{apr1}"), &apr1[6..]),
        shape("htpasswd bcrypt", &format!("deploy:{bcrypt}"), &bcrypt[7..]),
        shape("htpasswd sha", &format!("ops:{sha}"), &sha[5..]),
        shape(
            "key name, bearer value",
            &format!("auth_token: Bearer {bearer}"),
            &bearer,
        ),
        shape(
            "key name, short bearer value",
            &format!("token=Bearer {short_bearer}"),
            &short_bearer,
        ),
        shape(
            "key name, basic header value",
            &format!("credentials: Authorization: Basic {basic}"),
            &basic,
        ),
        shape(
            "key name, nested json",
            &format!(r#"{{"credentials": {{"password": "{nested}"}}}}"#),
            &nested,
        ),
        shape(
            "key name, mysql command",
            &format!("password: mysql -u root -p{mysql}"),
            &mysql,
        ),
        shape(
            "docker login -p",
            &format!("docker login -u ci -p {docker_p} registry.example"),
            &docker_p,
        ),
        shape(
            "docker login --password=",
            &format!("docker login --password={docker_eq} ghcr.io"),
            &docker_eq,
        ),
        shape(
            "key name, nested json, plain inner name",
            &format!(r#"{{"credentials": {{"user": "ci", "pw": "{nested2}"}}}}"#),
            &nested2,
        ),
        shape(
            "key name, json array",
            &format!(r#"{{"auth_tokens": ["{array}"]}}"#),
            &array,
        ),
        shape(
            "--token flag",
            &format!("gh-deploy --token {flag} --repo x"),
            &flag,
        ),
        shape(
            "authorization token header, short",
            &format!("Authorization: token {gh_token_header}"),
            &gh_token_header,
        ),
    ]
}

/// Every shape, at least 45 of them.
pub fn shapes() -> Vec<Shape> {
    // A key block longer than any window a clip redacts (6,000 characters
    // of body): its END line lies far past a 400 + 4,096 character window.
    let long_body = key_body(6_000);
    let long_pem =
        format!("-----BEGIN RSA PRIVATE KEY-----\n{long_body}\n-----END RSA PRIVATE KEY-----");
    let lines: Vec<&str> = long_body.lines().collect();
    let (mid_of_long, tail_of_long) = (lines[lines.len() / 2], lines[lines.len() - 2]);
    let ssh_body = key_body(400);
    let pgp_body = key_body(900);
    vec![
        shape(
            "openai",
            "key sk-proj-AbCdEfGhIjKlMnOpQrStUv1234",
            "AbCdEfGhIjKlMnOpQrStUv1234",
        ),
        shape(
            "anthropic",
            "ANTHROPIC sk-ant-api03-AbCdEfGhIjKlMnOpQrSt9x",
            "AbCdEfGhIjKlMnOpQrSt9x",
        ),
        shape(
            "aws access key id",
            "AKIAIOSFODNN7EXAMPLE",
            "IOSFODNN7EXAMPLE",
        ),
        shape(
            "aws temporary key id",
            "ASIAIOSFODNN7EXAMPL2",
            "IOSFODNN7EXAMPL2",
        ),
        shape(
            "aws secret, bare",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG",
        ),
        shape(
            "aws secret, named",
            "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMIK7MDENG",
        ),
        shape(
            "github classic",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        shape(
            "github oauth",
            "gho_16C7e42F292c6912E7710c838347Ae178B4a",
            "16C7e42F292c6912E7710c838347Ae178B4a",
        ),
        shape(
            "github fine-grained",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "11ABCDEFG0123456789_abcdefghij",
        ),
        shape(
            "gitlab",
            "glpat-AbCdEfGhIjKlMnOpQrSt",
            "AbCdEfGhIjKlMnOpQrSt",
        ),
        shape(
            "stripe live key",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "4eC39HqLyjWDarjtT1zdp7dc",
        ),
        shape(
            "stripe restricted key",
            "rk_live_5fD40IrMzkXEbskuU2aeq8ed",
            "5fD40IrMzkXEbskuU2aeq8ed",
        ),
        shape(
            "stripe webhook secret",
            "STRIPE webhook whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        ),
        shape(
            "slack bot token",
            "xoxb-123456789012-abcdefghijkl",
            "123456789012-abcdefghijkl",
        ),
        shape(
            "slack app token",
            "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef",
            "A0123456789-1234567890123-abcdef",
        ),
        shape(
            "slack webhook",
            "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
            "T000/B000/XXXXXXXXXXXXXXXX",
        ),
        shape(
            "discord bot token",
            "bot MTA4NjI5NzE0MjM2NzQ4MDk5Mg.GhT1aB.abcdefghijklmnopqrstuvwxyz0123456",
            "GhT1aB.abcdefghijklmnopqrstuvwxyz",
        ),
        shape(
            "discord webhook",
            "https://discord.com/api/webhooks/123456789012345678/AbCdEf-GhIjKl_MnOpQrSt",
            "AbCdEf-GhIjKl_MnOpQrSt",
        ),
        shape(
            "telegram bot token",
            "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
            "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
        ),
        shape(
            "google api key",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz12345",
            "SyA-abcdefghijklmnopqrstuvwxyz12345",
        ),
        shape(
            "google oauth access token",
            "ya29.a0AfH6SMBabcdefghijklmnopqrstuvwxyz",
            "a0AfH6SMBabcdefghijklmnopqrstuvwxyz",
        ),
        shape(
            "google oauth client secret",
            "client GOCSPX-AbCdEfGhIjKlMnOpQrStUvWxYz12",
            "AbCdEfGhIjKlMnOpQrStUvWxYz12",
        ),
        shape(
            "gcp service account key",
            r#"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#,
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        ),
        shape(
            "npm token",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        shape(
            "pypi token",
            "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTkwYWItY2RlZi0xMjM0LTU2Nzg5MGFiY2RlZgACJXsicGVy",
            "AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTkwYWIt",
        ),
        shape(
            "hugging face token",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
            "abcdefghijklmnopqrstuvwxyzABCDEFGH",
        ),
        shape(
            "sendgrid",
            "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789",
            "abcdefghijklmnopqrstuv.abcdefghij",
        ),
        shape(
            "digitalocean",
            "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef0123456789abcdef",
        ),
        shape(
            "shopify",
            "shpat_0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef",
        ),
        shape(
            "square",
            "sq0atp-abcdefghijklmnopqrstuv",
            "abcdefghijklmnopqrstuv",
        ),
        shape(
            "databricks",
            "dapi0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef",
        ),
        shape(
            "linear",
            "lin_api_abcdefghijklmnopqrstuvwxyz0123456789ABCD",
            "abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        ),
        shape(
            "twilio",
            "SK0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef",
        ),
        shape(
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
        shape(
            "bearer header",
            "Authorization: Bearer abcdefghijklmnop123",
            "abcdefghijklmnop123",
        ),
        shape(
            "basic auth header",
            "Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "dXNlcjpwYXNzd29yZA",
        ),
        shape(
            "postgres url password",
            "postgres://cairn:s3cretPassw0rd@db.example:5432/kb",
            "s3cretPassw0rd",
        ),
        shape(
            "mongodb srv password",
            "mongodb+srv://app:Mong0Pa55word@cluster0.example.net/prod",
            "Mong0Pa55word",
        ),
        shape(
            "redis url password, no user",
            "redis://:R3disPa55word@cache.internal:6379/0",
            "R3disPa55word",
        ),
        shape(
            "ado.net connection string",
            "Server=db1;Database=app;User Id=sa;Password=Adonet-Pa55w0rd;",
            "Adonet-Pa55w0rd",
        ),
        shape(
            "json password",
            r#"{"password": "hunter2hunter2"}"#,
            "hunter2hunter2",
        ),
        shape(
            "env password",
            "DB_PASSWORD=correct-horse-battery",
            "correct-horse-battery",
        ),
        shape("env pass", "DB_PASS=Tr0ub4dor-and-3", "Tr0ub4dor-and-3"),
        shape(
            "env encryption key",
            "ENCRYPTION_KEY=9f86d081884c7d659a2feaa0c55ad015",
            "9f86d081884c7d659a2feaa0c55ad015",
        ),
        shape(
            "yaml token",
            "token: 0123456789abcdefABCDEF",
            "0123456789abcdefABCDEF",
        ),
        shape(
            "azure storage account key",
            "AccountKey=abcdefghijklmnopqrstuvwxyz0123456789+/ABCDEF==",
            "abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        shape(
            "azure sas signature",
            "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&se=2026-12-01&sp=r&sig=AbCdEf%2BGhIjKlMnOp%2FQrStUvWx%3D",
            "AbCdEf%2BGhIjKlMnOp%2FQrStUvWx",
        ),
        shape(
            "curl -u user:pass",
            "curl -u admin:Curl-Pa55w0rd https://api.example/v1",
            "Curl-Pa55w0rd",
        ),
        shape(
            "mysql -p",
            "mysql -h db -u root -pMyS3cretPw app",
            "MyS3cretPw",
        ),
        shape(
            "rsa private key",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x1\n-----END RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEA7x1",
        ),
        shape("rsa private key, 6 KB, start", &long_pem, lines[1]),
        shape("rsa private key, 6 KB, end", &long_pem, tail_of_long),
        shape("rsa private key, 6 KB, middle", &long_pem, mid_of_long),
        shape(
            "openssh private key",
            &format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{ssh_body}\n-----END OPENSSH PRIVATE KEY-----"
            ),
            ssh_body.lines().nth(3).unwrap_or_default(),
        ),
        shape(
            "pgp private key block",
            &format!(
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pgp_body}\n-----END PGP PRIVATE KEY BLOCK-----"
            ),
            pgp_body.lines().nth(8).unwrap_or_default(),
        ),
        shape(
            "age secret key",
            "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS",
            "QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGP",
        ),
        shape(
            "docker hub pat",
            "dckr_pat_AbCdEfGhIjKlMnOpQrStUvWxYz0",
            "AbCdEfGhIjKlMnOpQrStUvWxYz0",
        ),
        shape(
            "mailgun key",
            "key-0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef",
        ),
        shape(
            "groq key",
            "gsk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOp",
            "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
        shape(
            "hashicorp vault token",
            "hvs.CAESIAbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "CAESIAbCdEfGhIjKlMnOpQrStUvWxYz",
        ),
        shape(
            "postman key",
            "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01",
            "0123456789abcdef01234567-0123456789",
        ),
        shape(
            "doppler token",
            "dp.pt.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfG",
            "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
        shape(
            "private span",
            "<private>my home address is 12 Elm Road</private>",
            "12 Elm Road",
        ),
    ]
    .into_iter()
    .chain(newer_shapes())
    .collect()
}

/// The shapes older than issue 60 (the first 62), for a count before → after.
pub fn older_shapes() -> Vec<Shape> {
    let newer: Vec<&str> = newer_shapes().iter().map(|s| s.name).collect();
    shapes()
        .into_iter()
        .filter(|s| !newer.contains(&s.name))
        .collect()
}
