//! The web page in a real headless Chromium, driven over WebDriver
//! (Debian's `chromium` and `chromedriver`, which `.ci/run` installs):
//! home (counts, the session feed with the memories a session stored, the
//! hooks' injections) → search (code highlighted by the server, numbered)
//! → expand (the hit's lines marked) → explain → edit a memory (previewed,
//! saved) → undo it from the timeline (that row only; a store's undo
//! previewed and confirmed) → graph (one node per name, no label over
//! another, relations on hover and in the side list, a hub capped with
//! "show more", click to recentre) → communities → health, at 1,400 px and
//! at a phone's width, asserting on the DOM; accessibility basics (labels,
//! names, keyboard, contrast); screenshots in `target/ui-screens/` to look
//! at.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Cli, Project};

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cairn ui` as `cmd` says; the running process and the address
/// it printed on its first line.
fn start_ui(mut cmd: Command) -> (Killed, String) {
    let mut ui = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cairn ui runs");
    let mut line = String::new();
    BufReader::new(ui.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Killed(ui), line.trim().to_string())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Standard base64 (screenshots come as base64 PNG).
fn unbase64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in s.bytes().filter_map(val) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// A WebDriver answer's JSON.
fn json_of(r: ureq::Response) -> Value {
    serde_json::from_str(&r.into_string().expect("an answer")).expect("JSON")
}

/// A WebDriver session on a headless Chromium.
struct Browser {
    base: String,
    _driver: Killed,
}

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    fn start() -> Browser {
        Browser::with_profile(None)
    }

    /// A browser on `profile` (its user-data-dir), so what it keeps on
    /// disk can be read once it is closed.
    fn with_profile(profile: Option<&std::path::Path>) -> Browser {
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver runs (Debian's chromium-driver; .ci/run installs it)");
        let driver = Killed(driver);
        let root = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while ureq::get(&format!("{root}/status")).call().is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--window-size=1280,1000".into(),
        ];
        if let Some(dir) = profile {
            args.push(format!("--user-data-dir={}", dir.display()));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": args
            }
        }}});
        let v = json_of(
            ureq::post(&format!("{root}/session"))
                .set("Content-Type", "application/json")
                .send_string(&caps.to_string())
                .expect("a browser session"),
        );
        let id = v["value"]["sessionId"]
            .as_str()
            .expect("session id")
            .to_string();
        Browser {
            base: format!("{root}/session/{id}"),
            _driver: driver,
        }
    }

    fn post(&self, path: &str, body: Value) -> Value {
        let sent = ureq::post(&format!("{}{path}", self.base))
            .set("Content-Type", "application/json")
            .send_string(&body.to_string());
        match sent {
            Ok(r) => json_of(r)["value"].clone(),
            Err(ureq::Error::Status(code, r)) => {
                panic!(
                    "webdriver {path}: {code} {}",
                    r.into_string().unwrap_or_default()
                )
            }
            Err(e) => panic!("webdriver {path}: {e}"),
        }
    }

    fn go(&self, url: &str) {
        self.post("/url", json!({"url": url}));
    }

    /// The page's cookies as the browser holds them (WebDriver's view:
    /// name, value, path, httpOnly, sameSite…).
    fn cookies(&self) -> Value {
        let v = json_of(
            ureq::get(&format!("{}/cookie", self.base))
                .call()
                .expect("cookies"),
        );
        v["value"].clone()
    }

    fn js(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": []}))
    }

    /// Waits until `script` (a JS expression) is truthy; its value.
    fn until(&self, what: &str, script: &str) -> Value {
        let started = Instant::now();
        loop {
            let v = self.js(&format!("return ({script});"));
            if !(v.is_null() || v == json!(false) || v == json!(0) || v == json!("")) {
                return v;
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "waited for {what}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn find(&self, css: &str) -> String {
        let v = self.post("/element", json!({"using": "css selector", "value": css}));
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no {css}: {v}"))
            .to_string()
    }

    fn click(&self, css: &str) {
        let e = self.find(css);
        self.post(&format!("/element/{e}/click"), json!({}));
    }

    fn type_in(&self, css: &str, text: &str) {
        let e = self.find(css);
        self.post(&format!("/element/{e}/clear"), json!({}));
        self.post(&format!("/element/{e}/value"), json!({"text": text}));
    }

    fn keys(&self, css: &str, keys: &str) {
        let e = self.find(css);
        self.post(&format!("/element/{e}/value"), json!({"text": keys}));
    }

    /// Sets the window's size (CSS pixels).
    fn size(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}));
    }

    fn screenshot(&self, name: &str) {
        let v = json_of(
            ureq::get(&format!("{}/screenshot", self.base))
                .call()
                .unwrap(),
        );
        let png = unbase64(v["value"].as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ui-screens");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = ureq::delete(&self.base).call();
    }
}

/// The accessibility basics, checked in the page: every form field has a
/// label, every button and tab a name, and every visible text a contrast of
/// at least 4.5:1 against the colour behind it. Returns the problems.
const A11Y: &str = r#"
const problems = [];
const visible = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
for (const f of document.querySelectorAll('input, select, textarea')) {
  if (!visible(f) || f.type === 'hidden') continue;
  const named = (f.labels && f.labels.length) || f.getAttribute('aria-label') || f.getAttribute('aria-labelledby');
  if (!named) problems.push('no label: ' + (f.id || f.name || f.outerHTML.slice(0, 60)));
}
for (const b of document.querySelectorAll('button, [role=tab]')) {
  if (visible(b) && !(b.textContent.trim() || b.getAttribute('aria-label'))) problems.push('unnamed button: ' + b.outerHTML.slice(0, 60));
}
const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
const lum = ([r, g, b]) => { const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; };
const behind = (e) => { for (let n = e; n; n = n.parentElement) { const c = rgb(getComputedStyle(n).backgroundColor); if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c; } return [255, 255, 255]; };
let checked = 0;
for (const e of document.querySelectorAll('body *')) {
  if (!visible(e) || e.closest('svg')) continue;
  const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (!own) continue;
  const fg = lum(rgb(getComputedStyle(e).color)), bg = lum(behind(e));
  const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
  checked++;
  if (ratio < 4.5) problems.push('contrast ' + ratio.toFixed(2) + ': ' + e.tagName + ' ' + e.textContent.trim().slice(0, 40));
}
if (!checked) problems.push('no text checked');
return problems;
"#;

fn a11y(b: &Browser, view: &str) {
    let problems = b.js(A11Y);
    assert_eq!(problems, json!([]), "accessibility of the {view} view");
}

/// The page opened from `url` (`…/?token=…`) stands at the clean address,
/// holds no token a script can read, and has the session cookie:
/// `HttpOnly`, `SameSite=Strict`, `Path=/`, not the token.
fn the_token_became_a_cookie(b: &Browser, url: &str) {
    let (base, token) = page_and_token(url);
    let href = b.js("return location.href");
    assert_eq!(href, json!(base), "the final address: {href}");
    assert_eq!(
        b.js("return sessionStorage.getItem('cairn-token')"),
        Value::Null
    );
    assert_eq!(
        b.js("return document.cookie"),
        "",
        "no script reads the cookie"
    );
    let port = base
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let cookies = b.cookies();
    let cookie = cookies
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == format!("cairn-page-{port}"))
        .unwrap_or_else(|| panic!("no page cookie: {cookies}"));
    assert_eq!(cookie["httpOnly"], true, "{cookie}");
    assert_eq!(cookie["sameSite"], "Strict", "{cookie}");
    assert_eq!(cookie["path"], "/", "{cookie}");
    assert_ne!(cookie["value"], json!(token), "{cookie}");
}

#[test]
#[ignore = "full tier: needs Debian's chromium and chromedriver (.ci/run installs them)"]
fn search_expand_edit_undo_graph_health_in_a_real_browser() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write(
        "docs/pooling.md",
        "# Connection pooling\n\nThe `PoolManager` keeps a fixed number of database connections open and hands them out per request.\n\n## Sizing\n\nSet the pool size to twice the number of cores; `PoolManager` reads it from DB_POOL_SIZE.\n",
    );
    p.write(
        "docs/garden.md",
        "# Gardening\n\nTomatoes need full sun, deep watering twice a week and a stake.\n",
    );
    // A captured session log (as the Stop hook writes it), a day old.
    p.write(
        ".cairn/memory/sessions/2026-11-25.md",
        "# Sessions 2026-11-25\n\n### 16:05\n\n<!-- session:s1 turn:u3 transcript:t.jsonl -->\n\n\
         **Asked:**\n- why do staging deploys wait for main\n\n**Concluded:**\n- the deploy gate reads the main build status\n",
    );
    // Code: a gate, and a hub — thirty handlers that import and call
    // `PoolManager`.
    p.write(
        "src/gate.py",
        "# The staging gate.\n\n\nclass DeployGate:\n    \"\"\"Lets a staging deploy through once main is green.\"\"\"\n\n    def admit(self, build: str, retries: int = 3) -> bool:\n        # main must be green first\n        return build == \"green\" and retries > 0\n",
    );
    for i in 0..30 {
        p.write(
            &format!("src/handlers/h{i:02}.py"),
            &format!("from pool import PoolManager\n\n\ndef handle_{i:02}(request):\n    return PoolManager().acquire()\n"),
        );
    }
    // A memory stored while that session ran (16:01, before its 16:05
    // capture), relating two names.
    p.write(
        ".cairn/memory/m20261125-0000aaaa.md",
        "---\nid: m20261125-0000aaaa\ntype: relationship\ncreated: 2026-11-25T16:01:00Z\nupdated: 2026-11-25T16:01:00Z\n\
         entities: [PoolManager, DeployGate]\nrelations: [{from: PoolManager, to: DeployGate, rel: gates}]\n---\n\nPoolManager gates DeployGate\n",
    );
    p.ok(&["index", "-q"]);
    p.ok(&[
        "remember",
        "Staging deploys need a green build on main.",
        "--type",
        "decision",
        "-q",
    ]);
    p.ok(&[
        "remember",
        "The pool size defaults to twice the cores.",
        "-q",
    ]);
    // A session starts: the hook injects the last session and the standing
    // memories, and records them for the home's list.
    let mut hook = p
        .command(&["hook", "claude-code", "SessionStart"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("cairn hook runs");
    std::io::Write::write_all(
        &mut hook.stdin.take().unwrap(),
        json!({"cwd": p.path("")}).to_string().as_bytes(),
    )
    .unwrap();
    assert!(hook.wait().unwrap().success());

    let (_ui, url) =
        start_ui(p.command(&["ui", "--port", "0", "--no-open", "--idle-timeout", "5"]));
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
        "{url}"
    );

    let b = Browser::start();
    b.size(1400, 1000);
    b.go(&url);
    b.until("the page", "document.body.dataset.ready === '1'");
    b.until("the home", "document.body.dataset.homeReady === '1'");
    let load_ms = b.js("const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;");
    eprintln!(
        "first load: {load_ms} ms; home drawn {} ms after the script ran",
        b.js("return document.body.dataset.homeMs")
    );
    // The page uses the window's width.
    assert!(
        b.js("return document.querySelector('main').getBoundingClientRect().width")
            .as_f64()
            .unwrap()
            >= 1350.0
    );
    // Home: counts, the session with the memory stored while it ran, the
    // types, the injection with why each memory came.
    let cards = b.js("return document.querySelector('#home-cards').textContent");
    let cards = cards.as_str().unwrap();
    assert!(
        cards.contains("37files indexed") && cards.contains("3memories"),
        "{cards}"
    );
    let session = b.js("return document.querySelector('#feed li.session')?.textContent");
    let session = session.as_str().unwrap_or_default();
    assert!(
        session.contains("2026-11-25 16:05")
            && session.contains("why do staging deploys wait for main")
            && session.contains("PoolManager gates DeployGate"),
        "{session}"
    );
    let types =
        b.js("return [...document.querySelectorAll('#mem-types li')].map(l => l.textContent)");
    assert!(
        types.as_array().unwrap().contains(&json!("decision1")),
        "{types}"
    );
    let injected = b.js("return document.querySelector('#injections')?.textContent");
    let injected = injected.as_str().unwrap_or_default();
    assert!(
        injected.contains("SessionStart")
            && injected.contains("decision, importance")
            && injected.contains("the last session's summary"),
        "{injected}"
    );
    // Issue 61 (10): each injected memory with its text, not its id alone.
    assert!(
        b.js("return [...document.querySelectorAll('#injections .inj-text')].length")
            .as_u64()
            .unwrap()
            >= 1,
        "{injected}"
    );
    b.screenshot("home");
    a11y(&b, "home");
    // Issue 61 (10): the session log reads as a page, not as raw markdown
    // with its anchors.
    b.click("#feed li.session .open-log");
    b.until(
        "the session log",
        "document.querySelector('#mem-detail .session-log h4')",
    );
    let log = b.js("return document.querySelector('#mem-detail .session-log').textContent");
    let log = log.as_str().unwrap_or_default();
    assert!(
        !log.contains("<!--") && !log.contains("**") && log.contains("16:05"),
        "{log}"
    );
    b.click("#tab-home");
    b.until("the home", "document.body.dataset.homeReady === '1'");
    // A memory of the feed opens its detail.
    b.click("#feed li.session .produced button");
    b.until(
        "the memory from the feed",
        "document.querySelector('#mem-detail')?.textContent.includes('m20261125-0000aaaa')",
    );
    b.click("#tab-search");
    assert_eq!(b.js("return document.title"), "Cairn");
    // Issue 60: the address's token was traded for a cookie no script
    // reads (every API call below carries it: without it they are
    // refused), and the address the browser shows has no token.
    the_token_became_a_cookie(&b, &url);

    // Search → expand → explain.
    b.type_in("#q", "database connection pool");
    b.click("#search-form button[type=submit]");
    b.until("hits", "document.querySelectorAll('#hits li.hit').length");
    let first = b.js("return document.querySelector('#hits li.hit .where').textContent");
    assert!(
        first.as_str().unwrap().starts_with("docs/pooling.md:"),
        "{first}"
    );
    assert!(
        b.js("return document.querySelectorAll('#hits mark').length")
            .as_u64()
            .unwrap()
            >= 1,
        "terms highlighted"
    );
    assert_eq!(
        b.js("return document.querySelector('#hits .badge').textContent"),
        "fresh"
    );
    eprintln!(
        "search round trip: {} ms",
        b.js("return document.body.dataset.lastSearchMs")
    );
    b.click("#hits li.hit .actions button:first-child");
    let section = b.until(
        "the expanded section",
        "document.querySelector('#hits pre.section')?.textContent",
    );
    assert!(
        section.as_str().unwrap().contains("PoolManager"),
        "{section}"
    );
    b.click("#hits li.hit .actions button:nth-child(2)");
    b.until(
        "the explain table",
        "document.querySelector('#hits .explain table')",
    );
    let retrievers = b.js("return [...document.querySelectorAll('#hits .explain tbody td:first-child')].map(t => t.textContent)");
    assert!(
        retrievers.as_array().unwrap().contains(&json!("bm25")),
        "{retrievers}"
    );
    // Snippets keep their line breaks.
    assert_eq!(
        b.js("return getComputedStyle(document.querySelector('#hits .snippet')).whiteSpace"),
        "pre-wrap"
    );
    // Every hit explained: factors with at most 3 decimals; a further
    // section of a file says its rows are the file's; a graph path is
    // drawn at the page's scale (its width as drawn is its own).
    let explained = b.js(
        "document.querySelectorAll('#hits li.hit').forEach((li, i) => { if (i > 0) li.querySelector('.actions button:nth-child(2)').click(); });
         return {
           chips: [...document.querySelectorAll('#hits .explain .chip')].map(c => c.textContent),
           captions: [...document.querySelectorAll('#hits .explain caption')].map(c => c.textContent),
           sections: [...document.querySelectorAll('#hits .explain .chip')].filter(c => c.textContent.startsWith('another section')).length,
           paths: [...document.querySelectorAll('#hits svg.path-picture')].map(s => ({
             drawn: s.getBoundingClientRect().width, own: Number(s.getAttribute('width')),
             font: [...s.querySelectorAll('text')].map(t => t.getBoundingClientRect().height),
             over: [...s.querySelectorAll('g')].filter(g => g.querySelector('text').getBBox().x + g.querySelector('text').getBBox().width > g.querySelector('rect').getBBox().x + g.querySelector('rect').getBBox().width).length })),
         };",
    );
    eprintln!("explained: {explained}");
    for chip in explained["chips"].as_array().unwrap() {
        let f = chip.as_str().unwrap().rsplit('×').next().unwrap();
        assert!(f.split('.').nth(1).is_none_or(|d| d.len() <= 3), "{chip}");
    }
    assert_eq!(
        explained["captions"].as_array().unwrap().len() as u64,
        explained["sections"].as_u64().unwrap(),
        "each further section says its ranks are the file's: {explained}"
    );
    for c in explained["captions"].as_array().unwrap() {
        assert!(c.as_str().unwrap().starts_with("ranks of the file"), "{c}");
    }
    for path in explained["paths"].as_array().unwrap() {
        assert_eq!(path["drawn"], path["own"], "drawn at its own scale: {path}");
        assert_eq!(path["over"], 0, "every name inside its box: {path}");
    }
    // The path picture itself, on a path long enough to need cutting: 13 px
    // text at the page's scale, every name inside its box (whole in its
    // title), the relation on the arrow between the boxes.
    let long =
        ".cairn/memory/m20261125-2791eeee.md:13-13 > Sessions > a heading far too long for any box";
    let pic = b.js(&format!(
        "const d = pathPicture(['SessionCache -mentions->', '{long}']);
         document.querySelector('#hits li.hit .explained').append(d);
         const s = d.querySelector('svg'), boxes = [...s.querySelectorAll('rect')].map(r => r.getBBox());
         const texts = [...s.querySelectorAll('g text')], rel = [...s.children].find(c => c.tagName === 'text');
         const out = {{
           drawn: s.getBoundingClientRect().width, own: Number(s.getAttribute('width')),
           size: texts.map(t => getComputedStyle(t).fontSize),
           inside: texts.every((t, i) => t.getBBox().x + t.getBBox().width <= boxes[i].x + boxes[i].width),
           titles: [...s.querySelectorAll('title')].map(t => t.textContent),
           rel: rel.textContent, relAt: rel.getBBox().x, between: [boxes[0].x + boxes[0].width, boxes[1].x],
           shown: texts.map(t => t.textContent),
         }};
         d.remove();
         return out;"
    ));
    eprintln!("path picture: {pic}");
    assert_eq!(pic["drawn"], pic["own"], "{pic}");
    assert_eq!(pic["size"], json!(["13px", "13px"]), "{pic}");
    assert_eq!(pic["inside"], true, "{pic}");
    assert_eq!(pic["titles"], json!(["SessionCache", long]), "{pic}");
    assert_eq!(pic["rel"], "mentions", "{pic}");
    let (rel_at, between) = (pic["relAt"].as_f64().unwrap(), &pic["between"]);
    assert!(
        rel_at > between[0].as_f64().unwrap() && rel_at < between[1].as_f64().unwrap(),
        "the relation on the arrow: {pic}"
    );
    let shown = pic["shown"][1].as_str().unwrap();
    assert!(
        shown.contains('…') && shown.starts_with(".cairn/memory/") && shown.ends_with("box"),
        "cut in the middle: {shown}"
    );
    b.screenshot("search");
    b.js("document.querySelectorAll('#hits li.hit')[1]?.scrollIntoView()");
    b.screenshot("search-section");
    a11y(&b, "search");

    // Code reads as code: the server's tokens (the indexer's grammar),
    // numbered from the hit's first line; expand marks the hit's lines.
    b.type_in("#q", "staging gate admit build retries");
    b.click("#search-form button[type=submit]");
    let at = b.until(
        "the gate's hit",
        "(() => { const i = [...document.querySelectorAll('#hits li.hit')].findIndex(li => li.querySelector('.where').textContent.startsWith('src/gate.py:')); return i >= 0 ? String(i) : ''; })()",
    );
    let hit = format!(
        "document.querySelectorAll('#hits li.hit')[{}]",
        at.as_str().unwrap()
    );
    let code = b.js(&format!(
        "const h = {hit}; const all = (c) => [...h.querySelectorAll('pre.code .tok-' + c)].map(t => t.textContent);
         return {{ kw: all('kw'), fn: all('fn'), ty: all('ty'), com: all('com'), str: all('str'), num: all('num'),
                   first: Number(h.querySelector('pre.code .ln').textContent),
                   start: Number(h.querySelector('.where').textContent.split(':')[1].split('-')[0]) }};"
    ));
    eprintln!("code hit: {code}");
    let has = |class: &str, token: &str| {
        code[class]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.as_str().unwrap().contains(token))
    };
    assert!(has("kw", "def") && has("kw", "return"), "{code}");
    assert!(has("fn", "admit") && has("ty", "str"), "{code}");
    assert!(has("str", "green") && has("num", "3"), "{code}");
    assert_eq!(code["first"], code["start"], "{code}");
    b.js(&format!("{hit}.querySelector('.actions button').click()"));
    let marked = b.until(
        "the marked lines",
        &format!(
            "(() => {{ const p = {hit}.querySelector('pre.section'); if (!p) return ''; const hl = [...p.querySelectorAll('.line.hl')].map(l => Number(l.dataset.line)); return JSON.stringify(hl); }})()"
        ),
    );
    let marked: Vec<u64> = serde_json::from_str(marked.as_str().unwrap()).unwrap();
    let range = b.js(&format!(
        "return {hit}.querySelector('.where').textContent.split(':')[1].split(/[^0-9]/).slice(0, 2).map(Number)"
    ));
    let (from, to) = (range[0].as_u64().unwrap(), range[1].as_u64().unwrap());
    assert_eq!(marked, (from..=to).collect::<Vec<_>>(), "the hit's lines");
    b.js(&format!("{hit}.scrollIntoView()"));
    b.screenshot("expand-code");
    a11y(&b, "search with code");
    // `j` walks the hits from the keyboard.
    b.keys("#hits li.hit", "j");
    assert_eq!(
        b.js(
            "return [...document.querySelectorAll('#hits li.hit')].indexOf(document.activeElement)"
        ),
        1
    );

    // Keyboard: the arrow keys walk the tabs.
    b.keys("#tab-search", "\u{E014}"); // ArrowRight
    b.until(
        "the memories tab by keyboard",
        "document.querySelector('#tab-memories').getAttribute('aria-selected') === 'true'",
    );
    assert_eq!(b.js("return document.activeElement.id"), "tab-memories");

    // Memories: open one, preview an edit, save it, see it in the timeline, undo.
    b.until(
        "three memories and the session log",
        "document.querySelectorAll('#mem-list button').length === 4",
    );
    // A session log's row reads as prose: no anchor comment, no heading or
    // list marks.
    assert_eq!(
        b.js("return [...document.querySelectorAll('#mem-list button')].filter(x => /<!--|^#|\\n#|: - /.test(x.textContent)).length"),
        json!(0)
    );
    b.click("#mem-list button[data-id^='m2']");
    b.until("the memory", "document.querySelector('#e-text')");
    let id =
        b.js("return document.querySelector('#mem-list button[aria-current=true]').dataset.id");
    let id = id.as_str().unwrap().to_string();
    let before = b.js("return document.querySelector('#e-text').value");
    b.type_in(
        "#e-text",
        "Edited in the browser: deploys need two reviews.",
    );
    b.click("#preview-edit");
    b.until("the preview", "document.querySelector('#save-edit')");
    assert!(
        b.js("return document.querySelector('.preview').textContent")
            .as_str()
            .unwrap()
            .contains("Dry run")
    );
    // The dry run wrote nothing.
    let on_disk = || std::fs::read_to_string(p.path(&format!(".cairn/memory/{id}.md"))).unwrap();
    assert!(!on_disk().contains("two reviews"));
    b.click("#save-edit");
    b.until(
        "saved",
        "document.querySelector('#mem-detail')?.textContent.includes('Saved')",
    );
    assert!(on_disk().contains("Edited in the browser"), "{}", on_disk());
    b.until(
        "the update in the timeline",
        "document.querySelector('#timeline li[data-action=update]')",
    );
    b.screenshot("memories");
    a11y(&b, "memories");
    // Only each memory's newest change has an Undo: here the update, not
    // the store under it.
    let row = |action: &str| {
        format!(
            "[...document.querySelectorAll('#timeline li')].find(li => li.dataset.action === '{action}' && li.querySelector('code').textContent === '{id}')"
        )
    };
    assert_eq!(
        b.js(&format!("return {}.dataset.undo", row("store"))),
        "superseded"
    );
    assert_eq!(
        b.js(&format!(
            "return !!{}.querySelector('button.undo')",
            row("store")
        )),
        false
    );
    b.click("#timeline li[data-action=update] button.undo");
    b.until(
        "the undo in the timeline",
        "document.querySelector('#timeline li[data-action=undo]')",
    );
    assert!(
        on_disk().contains(before.as_str().unwrap()),
        "undo restored it: {}",
        on_disk()
    );
    let said = b.until(
        "the undo confirmed",
        "document.querySelector('#timeline-status')?.textContent",
    );
    assert!(
        said.as_str().unwrap().starts_with("Undone: the update"),
        "{said}"
    );
    b.js("document.querySelector('#timeline-status').scrollIntoView({block: 'start'})");
    b.screenshot("timeline-undone");
    // The undone row has no Undo left (a second click deleted the memory,
    // v24); the store under it has one now, which previews its removal.
    b.until(
        "the update row undone",
        &format!("{}.dataset.undo === 'undone'", row("update")),
    );
    assert_eq!(
        b.js(&format!(
            "return !!{}.querySelector('button.undo')",
            row("update")
        )),
        false
    );
    b.js(&format!(
        "{}.querySelector('button.undo').click()",
        row("store")
    ));
    let preview = b.until(
        "the store undo's dry run",
        "document.querySelector('#confirm-undo') && document.querySelector('#timeline-status').textContent",
    );
    assert!(preview.as_str().unwrap().contains("Dry run"), "{preview}");
    assert!(
        on_disk().contains(before.as_str().unwrap()),
        "a dry run removes nothing"
    );
    b.js("document.querySelector('#timeline-status').scrollIntoView({block: 'center'})");
    b.screenshot("timeline-undo-store");
    a11y(&b, "memories with an undo preview");
    b.click("#confirm-undo");
    b.until(
        "the store undone",
        "document.querySelector('#timeline-status')?.textContent.includes('removed')",
    );
    assert!(!p.path(&format!(".cairn/memory/{id}.md")).exists());
    b.until(
        "two memories and the session log left",
        "document.querySelectorAll('#mem-list button').length === 3",
    );
    // The session log reads as a memory: its text and day, read-only.
    b.click("#mem-list button[data-id='session-2026-11-25']");
    b.until("the session", "document.querySelector('#read-only')");
    let shown = b.js("return document.querySelector('#mem-detail').textContent");
    let shown = shown.as_str().unwrap();
    assert!(
        shown.contains("deploy gate reads the main build")
            && shown.contains("2026-11-25T16:05:00Z")
            && shown.contains("session"),
        "{shown}"
    );
    assert_eq!(
        b.js("return document.querySelector('#e-text')"),
        Value::Null
    );
    b.screenshot("session");
    a11y(&b, "a session log");

    // Graph: the neighbourhood of a name the docs define, then communities.
    b.click("#tab-graph");
    b.type_in("#entity", "PoolManager");
    b.click("#graph-form button[type=submit]");
    b.until(
        "the drawing",
        "document.querySelectorAll('#graph svg g.nb').length >= 2",
    );
    // The legend's colours are set under the page's Content-Security-Policy
    // (an inline `style` attribute would be refused and leave them clear).
    assert_eq!(
        b.js("return getComputedStyle(document.querySelector('#graph .legend i')).backgroundColor"),
        "rgb(242, 193, 78)"
    );
    // A hub: its 24 heaviest neighbours first, each once, no label over
    // another, every one in the side list under its relation.
    let drawing = "(() => {
        const nodes = [...document.querySelectorAll('#graph svg g.nb')];
        const boxes = [...nodes, document.querySelector('#graph svg g.hub')].map(g => g.getBBox());
        let overlaps = 0;
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
          const a = boxes[i], b = boxes[j];
          if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) overlaps++;
        }
        const keys = nodes.map(g => g.dataset.key);
        return { drawn: nodes.length, overlaps, unique: new Set(keys).size,
                 listed: document.querySelectorAll('#rel-list li button').length,
                 groups: [...document.querySelectorAll('#rel-list details')].map(d => d.dataset.rel),
                 more: !!document.querySelector('#show-more') };
      })()";
    let hub = b.js(&format!("return {drawing};"));
    eprintln!("hub: {hub}");
    assert_eq!(hub["drawn"], 24, "{hub}");
    assert_eq!(hub["more"], true, "{hub}");
    assert_eq!(hub["overlaps"], 0, "{hub}");
    assert_eq!(hub["unique"], hub["drawn"], "{hub}");
    assert!(
        hub["listed"].as_u64() >= hub["drawn"].as_u64(),
        "each in the list: {hub}"
    );
    assert!(
        hub["groups"].as_array().unwrap().contains(&json!("calls")),
        "{hub}"
    );
    // Hover names the relation on the edge.
    let rel = b.js(
        "const g = document.querySelector('#graph svg g.nb'); g.dispatchEvent(new MouseEvent('mouseenter'));
         const e = document.querySelector(`#graph svg g.edge-g[data-key=\"${CSS.escape(g.dataset.key)}\"]`);
         const t = e.querySelector('text.rel'); const out = [e.classList.contains('on'), getComputedStyle(t).display, t.textContent];
         g.dispatchEvent(new MouseEvent('mouseleave')); return out;",
    );
    assert_eq!(rel[0], true, "{rel}");
    assert_ne!(rel[1], "none", "{rel}");
    assert!(!rel[2].as_str().unwrap().is_empty(), "{rel}");
    b.screenshot("graph-hub");
    a11y(&b, "graph");
    // Show more until all are drawn: still no overlap.
    while b.js("return !!document.querySelector('#show-more')") == json!(true) {
        b.click("#show-more");
    }
    let all = b.js(&format!("return {drawing};"));
    eprintln!("hub, all drawn: {all}");
    assert!(all["drawn"].as_u64().unwrap() > 30, "{all}");
    assert_eq!(all["overlaps"], 0, "{all}");
    assert_eq!(all["unique"], all["drawn"], "{all}");
    b.screenshot("graph-hub-all");
    // Click an entity: the drawing recentres on it, the way back kept.
    b.click("#graph svg g.nb[data-kind=entity]");
    b.until(
        "recentred",
        "document.querySelector('#graph-meta').textContent.startsWith('DeployGate:')",
    );
    assert!(
        b.js("return document.querySelector('#graph .crumbs')?.textContent")
            .as_str()
            .unwrap()
            .contains("PoolManager")
    );
    b.screenshot("graph-recentred");
    b.click("#graph .crumbs button");
    b.until(
        "back",
        "document.querySelector('#graph-meta').textContent.startsWith('PoolManager:')",
    );
    // Click-through: a section opens its file's lines in the page.
    b.click("#graph svg g.nb[data-kind=doc]");
    b.click("#open-file");
    let opened = b.until(
        "the file",
        "document.querySelector('#node-panel pre.file-text')?.textContent",
    );
    assert!(opened.as_str().unwrap().contains("PoolManager"), "{opened}");
    b.screenshot("graph");
    // The centre's name lies above it, clear of the edges.
    let centre = b.js(
        "return (() => { const c = document.querySelector('#graph svg circle[r=\"14\"]'), t = document.querySelector('#graph svg text.centre-label'); return !!t && Number(t.getAttribute('y')) < Number(c.getAttribute('cy')); })();",
    );
    assert_eq!(centre, json!(true), "{centre}");
    b.click("#communities-btn");
    b.until(
        "communities",
        "document.querySelector('#graph-meta').textContent.includes('communities')",
    );
    // Issue 61 (10): the count is of all communities, not of those shown
    // (the page said 24, its limit, where the CLI said 30).
    let total = p.json(&["graph", "communities", "--json", "-n", "1"])["total"].clone();
    let meta = b.js("return document.querySelector('#graph-meta').textContent");
    assert!(
        meta.as_str()
            .unwrap_or_default()
            .starts_with(&format!("{} communities", total.as_u64().unwrap_or(0))),
        "{meta} / {total}"
    );
    // The node's panel is gone with its drawing; a community's file opens.
    let stale = b.js("return document.querySelector('#node-panel').hidden;");
    assert_eq!(stale, json!(true), "{stale}");
    let labels =
        b.js("return [...document.querySelectorAll('#communities h3')].map(h => h.textContent)");
    eprintln!("communities: {labels}");
    assert!(
        labels
            .as_array()
            .unwrap()
            .iter()
            .all(|l| !l.as_str().unwrap().is_empty()),
        "{labels}"
    );
    b.screenshot("communities");
    b.click("#communities button.file-link");
    b.click("#open-file");
    b.until(
        "a community's file",
        "document.querySelector('#node-panel pre.file-text')?.textContent",
    );

    // Health, polled.
    b.click("#tab-health");
    b.until(
        "health",
        "document.querySelector('#health tbody')?.textContent.includes('chunks')",
    );
    // The page is served by the project's daemon, which `cairn ui` started
    // and stays a client of.
    let daemon = b.until(
        "the daemon row",
        "[...document.querySelectorAll('#health tr')].find(r => r.firstChild.textContent === 'daemon')?.lastChild.textContent",
    );
    assert!(
        daemon.as_str().unwrap().starts_with("running (pid "),
        "{daemon}"
    );
    assert!(
        daemon.as_str().unwrap().contains("1 client connected"),
        "{daemon}"
    );
    let at = b.until("a poll", "document.body.dataset.healthAt");
    b.until(
        "a second poll",
        &format!(
            "document.body.dataset.healthAt !== '{}'",
            at.as_str().unwrap()
        ),
    );
    b.until(
        "checks",
        "document.querySelector('#checks tbody')?.textContent.includes('integrity')",
    );
    // Live: a file added while the page is open shows in the next polls,
    // once the watcher has indexed it.
    let files = "Number([...document.querySelectorAll('#health tr')].find(r => r.firstChild.textContent === 'files').lastChild.textContent)";
    let before = b.until("a file count", files).as_u64().unwrap();
    p.write(
        "docs/queue.md",
        "# Queue\n\nJobs wait in a Postgres queue with SKIP LOCKED.\n",
    );
    b.until("the new file in health", &format!("{files} > {before}"));
    let last = b.js("return [...document.querySelectorAll('#health tr')].find(r => r.firstChild.textContent === 'last index').lastChild.textContent");
    assert!(
        last.as_str().unwrap().contains(" UTC ("),
        "a readable time: {last}"
    );
    b.screenshot("health");
    a11y(&b, "health");

    // A phone's width: every view in one column, nothing wider than the
    // screen.
    b.size(390, 844);
    let fits = "document.documentElement.scrollWidth <= window.innerWidth + 1";
    for (view, ready) in [
        ("home", "document.body.dataset.homeReady === '1'"),
        ("search", "document.querySelectorAll('#hits li.hit').length"),
        (
            "memories",
            "document.querySelectorAll('#mem-list button').length",
        ),
        ("graph", "document.querySelector('#communities article')"),
        ("health", "document.querySelector('#health tbody tr')"),
    ] {
        b.click(&format!("#tab-{view}"));
        b.until(view, ready);
        assert_eq!(
            b.js(&format!("return {fits}")),
            true,
            "{view} fits a phone: {}",
            b.js("return [document.documentElement.scrollWidth, window.innerWidth]")
        );
        b.screenshot(&format!("phone-{view}"));
    }
    a11y(&b, "health on a phone");
}

/// The page's base address and its token, from the address `cairn ui`
/// printed (`http://127.0.0.1:PORT/?token=…`).
fn page_and_token(url: &str) -> (String, String) {
    let (base, token) = url
        .split_once("?token=")
        .unwrap_or_else(|| panic!("no token in {url}"));
    assert!(
        token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{token}"
    );
    (base.to_string(), token.to_string())
}

/// An answer of the page's server, redirects not followed: status,
/// headers, body. With `cookie` (`name=value`), sent as the page sends its
/// API calls.
fn fetch(url: &str, cookie: Option<&str>) -> (u16, ureq::Response) {
    let mut req = ureq::AgentBuilder::new().redirects(0).build().get(url);
    if let Some(c) = cookie {
        req = req.set("Cookie", c).set("X-Cairn-Page", "1");
    }
    match req.call() {
        Ok(r) => (r.status(), r),
        Err(ureq::Error::Status(code, r)) => (code, r),
        Err(e) => panic!("{url}: {e}"),
    }
}

/// Opens the page as a browser's first load does, from the address `cairn
/// ui` printed: a 303 to the clean address, not to be cached, with the
/// session cookie (`HttpOnly`, `SameSite=Strict`, `Path=/`, not the
/// token). The page's base and the cookie, as `name=value`.
fn open_page(url: &str) -> (String, String) {
    let (base, token) = page_and_token(url);
    let (status, r) = fetch(url, None);
    assert_eq!(status, 303, "{url}");
    assert_eq!(r.header("Location"), Some("/"));
    assert_eq!(r.header("Cache-Control"), Some("no-store"));
    assert_eq!(r.header("Referrer-Policy"), Some("no-referrer"));
    let set = r.header("Set-Cookie").unwrap_or_default().to_string();
    let attrs: Vec<&str> = set.split(';').map(str::trim).collect();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(attrs.contains(&attr), "{attr} missing: {set}");
    }
    assert!(!set.contains(&token), "{set}");
    // Spent: the address opens nothing more.
    let (again, _) = fetch(url, None);
    assert_eq!(again, 403, "{url} opened twice");
    (base, attrs[0].to_string())
}

/// The page's API with the page's cookie, 403 without it or with another;
/// the security headers on the page and on the API's answers.
fn page_checks_its_cookie(base: &str, cookie: &str) -> Value {
    let (status, page) = fetch(base, None);
    assert_eq!(status, 200);
    assert_eq!(page.header("Cache-Control"), Some("no-store"));
    assert_eq!(page.header("X-Frame-Options"), Some("DENY"));
    let csp = page.header("Content-Security-Policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert_eq!(page.header("X-Content-Type-Options"), Some("nosniff"));
    assert_eq!(page.header("Referrer-Policy"), Some("no-referrer"));
    assert!(page.into_string().unwrap().contains("<title>Cairn</title>"));
    let api = format!("{base}api/status");
    let name = cookie.split_once('=').map(|(n, _)| n).unwrap_or_default();
    let wrong = format!("{name}={}", "0".repeat(64));
    for given in [None, Some(wrong.as_str())] {
        let (status, r) = fetch(&api, given);
        assert_eq!(status, 403, "{given:?}");
        assert_eq!(r.header("X-Frame-Options"), Some("DENY"));
    }
    let (status, r) = fetch(&api, Some(cookie));
    assert_eq!(status, 200);
    assert_eq!(r.header("X-Frame-Options"), Some("DENY"));
    assert_eq!(r.header("Cache-Control"), Some("no-store"));
    json_of(r)
}

/// Without the daemon (`CAIRN_NO_DAEMON`), `cairn ui` serves the page from
/// its own process: the page and its API answer on the address it prints,
/// the API only with the cookie that address's token is traded for.
#[test]
fn ui_serves_from_its_own_process_without_the_daemon() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write(
        "docs/a.md",
        "# Pooling\n\nConnection pools keep database connections open.\n",
    );
    p.ok(&["index", "-q"]);
    let mut cmd = p.command(&["ui", "--port", "0", "--no-open", "--no-watch"]);
    cmd.env("CAIRN_NO_DAEMON", "1");
    let (_ui, url) = start_ui(cmd);
    let (base, cookie) = open_page(&url);
    let status = page_checks_its_cookie(&base, &cookie);
    assert_eq!(status["files"], 1, "{status}");
    assert!(status["daemon"].is_null(), "no daemon runs: {status}");
    let (code, hits) = fetch(
        &format!("{base}api/search?q=connection+pools"),
        Some(&cookie),
    );
    assert_eq!(code, 200);
    let hits = json_of(hits);
    assert_eq!(hits["hits"][0]["path"], "docs/a.md", "{hits}");
    // Issue 61: the page marks the words BM25 matched, whole and by their
    // stem ("pools" marks "Pooling"), never a stopword or a piece of a word.
    let (_, hits) = fetch(
        &format!("{base}api/search?q=the+connection+pools"),
        Some(&cookie),
    );
    let hits = json_of(hits);
    let marks: Vec<&str> = hits["hits"][0]["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(
        marks,
        ["Pooling", "Connection", "pools", "connections"],
        "{hits}"
    );
    assert!(!p.path(".cairn/daemon.sock").exists());
}

/// Through the project's daemon, the address `cairn ui` prints carries a
/// one-time token the daemon's page trades for its cookie; a second `cairn
/// ui` is given the same page with a new token, which opens it once too.
#[cfg(unix)]
#[test]
fn ui_through_the_daemon_prints_the_token_its_page_checks() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write(
        "docs/a.md",
        "# Pooling\n\nConnection pools keep database connections open.\n",
    );
    p.ok(&["index", "-q"]);
    let args = [
        "ui",
        "--port",
        "0",
        "--no-open",
        "--no-watch",
        "--idle-timeout",
        "2",
    ];
    let (first_ui, url) = start_ui(p.command(&args));
    let (base, cookie) = open_page(&url);
    let status = page_checks_its_cookie(&base, &cookie);
    assert!(
        status["daemon"]["pid"].is_u64(),
        "the daemon serves: {status}"
    );
    let (again_ui, second) = start_ui(p.command(&args));
    assert_ne!(second, url);
    let (again, same_cookie) = open_page(&second);
    assert_eq!(again, base);
    assert_eq!(same_cookie, cookie);
    // Issue 61 (13): Ctrl-C on the last `cairn ui` stops the page (and its
    // cookie with it), though the daemon lives on for its idle time.
    drop(first_ui);
    let status = page_checks_its_cookie(&base, &cookie);
    assert!(
        status["daemon"]["pid"].is_u64(),
        "one client left: {status}"
    );
    drop(again_ui);
    let started = std::time::Instant::now();
    let stopped = loop {
        let up = ureq::get(&format!("{base}api/status"))
            .set("Cookie", &cookie)
            .timeout(std::time::Duration::from_secs(2))
            .call()
            .is_ok();
        if !up {
            break true;
        }
        if started.elapsed() > std::time::Duration::from_secs(10) {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        stopped,
        "the page still answers after its last `cairn ui` ended"
    );
}

/// The page's memories and log carry the chain of what replaced what: the
/// older memory says what replaced it, the newer what it replaced.
#[test]
fn ui_lists_what_replaced_what() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let (old, new) = crate::memory::stored_chain(&p);
    let mut cmd = p.command(&["ui", "--port", "0", "--no-open", "--no-watch"]);
    cmd.env("CAIRN_NO_DAEMON", "1");
    let (_ui, url) = start_ui(cmd);
    let (base, cookie) = open_page(&url);
    let (code, r) = fetch(&format!("{base}api/memories"), Some(&cookie));
    assert_eq!(code, 200);
    let v = json_of(r);
    let of = |id: &str| {
        v["memories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} in {v}"))
    };
    assert_eq!(of(&old)["replaced_by"], new.as_str(), "{v}");
    assert_eq!(of(&new)["replaces"][0], old.as_str(), "{v}");
    let (_, r) = fetch(&format!("{base}api/log"), Some(&cookie));
    let log = json_of(r);
    assert_eq!(log["entries"][0]["id"], new.as_str(), "{log}");
    assert_eq!(
        log["entries"][0]["chain"]["replaces"][0],
        old.as_str(),
        "{log}"
    );
}

/// In the browser: the older memory of a chain is badged as replaced, its
/// view links the newer one (and back), and the timeline says it.
#[test]
#[ignore = "full tier: needs Debian's chromium and chromedriver (.ci/run installs them)"]
fn the_page_shows_what_replaced_what() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let (old, new) = crate::memory::stored_chain(&p);
    let (_ui, url) =
        start_ui(p.command(&["ui", "--port", "0", "--no-open", "--idle-timeout", "5"]));
    let b = Browser::start();
    b.go(&url);
    b.until("the page", "document.body.dataset.ready === '1'");
    b.click("#tab-memories");
    b.until(
        "the two memories",
        "document.querySelectorAll('#mem-list button').length === 2",
    );
    let row = |id: &str| {
        b.js(&format!(
            "return document.querySelector('#mem-list button[data-id=\"{id}\"]').textContent"
        ))
        .as_str()
        .unwrap()
        .to_string()
    };
    assert!(row(&old).contains("replaced"), "{}", row(&old));
    assert!(!row(&new).contains("replaced"), "{}", row(&new));
    b.click(&format!("#mem-list button[data-id='{old}']"));
    b.until(
        "the chain",
        "document.querySelector('#m-replaced-by button')",
    );
    assert_eq!(
        b.js("return document.querySelector('#m-replaced-by button').dataset.id"),
        json!(new)
    );
    b.click("#m-replaced-by button");
    b.until(
        "the newer memory, linking back",
        &format!("document.querySelector('#m-replaces button')?.dataset.id === '{old}'"),
    );
    b.until(
        "the timeline's chain",
        "[...document.querySelectorAll('#timeline .chain')].some(c => c.textContent.includes('replaces'))",
    );
    b.screenshot("memory-chain");
}

/// Issue 60: a browser on a fresh profile opens the address `cairn ui`
/// printed, loads the page and is closed. The token was traded for the
/// cookie on the first load: the address ends clean, and the copies the
/// profile keeps of the address it opened (its history and
/// session-restore files record a redirect's source; none is in its disk
/// cache, every answer being `no-store`) open nothing: the token is spent.
/// (Before, the history, disk cache and session files held a token that
/// opened the page and its API for as long as the server ran.)
#[test]
#[ignore = "full tier: needs Debian's chromium and chromedriver (.ci/run installs them)"]
fn a_browser_keeps_no_token_that_opens_the_page() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write(
        "docs/a.md",
        "# Pooling\n\nConnection pools keep database connections open.\n",
    );
    p.ok(&["index", "-q"]);
    let mut cmd = p.command(&["ui", "--port", "0", "--no-open", "--no-watch"]);
    cmd.env("CAIRN_NO_DAEMON", "1");
    let (_ui, url) = start_ui(cmd);
    let (base, token) = page_and_token(&url);
    let profile = tempfile::tempdir().expect("a profile folder");
    let b = Browser::with_profile(Some(profile.path()));
    b.go(&url);
    b.until("the page", "document.body.dataset.ready === '1'");
    b.until("the home", "document.body.dataset.homeReady === '1'");
    the_token_became_a_cookie(&b, &url);
    drop(b);
    // What the closed browser left on disk that holds the token.
    let mut holding = Vec::new();
    let mut dirs = vec![profile.path().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| bytes.windows(token.len()).any(|w| w == token.as_bytes()))
            {
                holding.push(
                    path.strip_prefix(profile.path())
                        .unwrap()
                        .display()
                        .to_string(),
                );
            }
        }
    }
    eprintln!("profile files holding the spent token: {holding:?}");
    assert!(
        !holding.iter().any(|f| f.contains("Cache")),
        "a cache kept the address: {holding:?}"
    );
    // Whatever keeps it, the address opens nothing now: not the page's
    // cookie, not its API.
    let (status, r) = fetch(&url, None);
    assert_eq!(status, 403, "the kept address opened the page again");
    assert!(r.header("Set-Cookie").is_none());
    let (status, _) = fetch(&format!("{base}api/status?token={token}"), None);
    assert_eq!(status, 403);
}
