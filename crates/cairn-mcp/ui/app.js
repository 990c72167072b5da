// Cairn's page: plain JavaScript, no library, no build step. It reads the
// JSON API under /api (see cairn-mcp/src/ui.rs). The address `cairn ui`
// prints (`?token=…`) is traded by the server, before this runs, for a
// cookie no script can read, and sent on to `/`: every API call carries that
// cookie, and `X-Cairn-Page`, which a page of another origin cannot send.
// Without them the API answers 403. The bearer token of `serve --http
// --token` comes as `#token=…` instead (never sent to the server in the
// address): it is kept for this tab, taken out of the address bar and sent
// with every call (`X-Cairn-Token`, and as the bearer token).
"use strict";

const token = (() => {
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) {
    sessionStorage.setItem("cairn-token", given);
    history.replaceState(null, "", location.pathname);
  }
  return sessionStorage.getItem("cairn-token");
})();

async function api(path, body) {
  const headers = { "X-Cairn-Page": "1" };
  if (token) {
    headers["X-Cairn-Token"] = token;
    headers["Authorization"] = "Bearer " + token;
  }
  const init = { headers };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const text = await r.text();
  let v;
  try { v = JSON.parse(text); } catch { v = { error: text }; }
  if (!r.ok) throw new Error(v.error || r.statusText);
  return v;
}

const $ = (sel, root = document) => root.querySelector(sel);
function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
  return e;
}
function showError(target, e) {
  target.replaceChildren(el("p", { class: "error", role: "alert" }, String(e.message || e)));
}

// ---- tabs: click, or arrow keys along the tab list --------------------
const tabs = [...document.querySelectorAll('[role="tab"]')];
// Resolves once the view's data is drawn (home, memories).
function activate(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", on);
    t.tabIndex = on ? 0 : -1;
    $("#" + t.getAttribute("aria-controls")).hidden = !on;
  }
  const view = tab.id.slice(4);
  if (view === "health") startHealth(); else stopHealth();
  if (view === "home") return loadHome();
  if (view === "memories") return loadMemories();
  return Promise.resolve();
}
tabs.forEach((t, i) => {
  t.addEventListener("click", () => activate(t));
  t.addEventListener("keydown", (e) => {
    const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    const next = tabs[(i + step + tabs.length) % tabs.length];
    next.focus();
    activate(next);
  });
});
const currentView = () => tabs.find((t) => t.getAttribute("aria-selected") === "true").id.slice(4);

// Keys anywhere outside a field: `/` searches, `j`/`k` walk the hits, Esc
// goes back to the view's tab.
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
  if (e.key === "Escape") {
    const tab = $("#tab-" + currentView());
    if (typing) t.blur();
    tab.focus();
    return;
  }
  if (typing) return;
  if (e.key === "/") {
    e.preventDefault();
    activate($("#tab-search"));
    $("#q").focus();
  } else if ((e.key === "j" || e.key === "k") && currentView() === "search") {
    const hits = [...document.querySelectorAll("#hits li.hit")];
    if (!hits.length) return;
    const at = hits.findIndex((h) => h.contains(document.activeElement));
    const next = e.key === "j" ? Math.min(at + 1, hits.length - 1) : Math.max(at - 1, 0);
    hits[next].focus();
    hits[next].scrollIntoView({ block: "nearest" });
  }
});

// ---- times ----------------------------------------------------------------
// An RFC 3339 instant as the page shows it: `2026-11-26 14:02 UTC`, and how
// long ago (`3 min ago`); the exact instant in the title.
function parseTime(iso) {
  return Date.parse(String(iso).replace(/(\.\d{3})\d+/, "$1"));
}
function ago(iso) {
  const t = parseTime(iso);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}
function stamp(iso) {
  if (!iso) return "never";
  const t = parseTime(iso);
  if (Number.isNaN(t)) return String(iso);
  return new Date(t).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}
function timeEl(iso) {
  return el("time", { datetime: iso, title: iso }, `${stamp(iso)} (${ago(iso)})`);
}

// ---- code -------------------------------------------------------------------
// Lines of tokens (the server's `code`: `[[class, text], …]` per line, from
// the tree-sitter grammars indexing uses) as a numbered listing; lines in
// `mark` ([first, last]) marked; `terms` highlighted inside tokens.
function codeView(lines, first, mark, terms, label) {
  const pre = el("pre", { class: "code", tabindex: 0, "aria-label": label || `lines ${first} to ${first + lines.length - 1}` });
  lines.forEach((toks, i) => {
    const n = first + i;
    const on = mark && n >= mark[0] && n <= mark[1];
    const line = el("span", { class: on ? "line hl" : "line", "data-line": n }, el("span", { class: "ln", "aria-hidden": "true" }, String(n)));
    for (const [c, t] of toks) {
      const piece = terms && terms.length ? highlight(t, terms) : t;
      line.append(c === "plain" ? piece : el("span", { class: "tok-" + c }, piece));
    }
    if (!toks.length) line.append(" ");
    pre.append(line);
  });
  return pre;
}
const plainLines = (text) => text.replace(/\n$/, "").split("\n").map((l) => (l ? [["plain", l]] : []));

// ---- search -------------------------------------------------------------
// `terms` are the words of this hit that BM25 matched (the server's
// `marks`: stemmed as the index stems, stopwords left out), marked whole:
// never a piece of a longer word.
function highlight(text, terms) {
  const frag = document.createDocumentFragment();
  if (!terms.length) { frag.append(text); return frag; }
  const alts = [...terms].sort((a, b) => b.length - a.length).map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp("(?<![\\p{L}\\p{N}])(" + alts.join("|") + ")(?![\\p{L}\\p{N}])", "gu");
  let last = 0;
  for (const m of text.matchAll(re)) {
    frag.append(text.slice(last, m.index), el("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  frag.append(text.slice(last));
  return frag;
}

// Text widths for drawing, measured with the font the SVG text uses.
const FONT = 'system-ui, -apple-system, "Segoe UI", sans-serif';
const measurer = document.createElement("canvas").getContext("2d");
function textWidth(text, px) {
  measurer.font = `${px}px ${FONT}`;
  return measurer.measureText(text).width;
}
// `text` cut in the middle to fit `max` px: both the start (the file) and
// the end (the line range, the memory id, the definition) stay readable.
function fitText(text, px, max) {
  if (textWidth(text, px) <= max) return text;
  let keep = text.length - 1;
  while (keep > 4) {
    const head = Math.ceil(keep * 0.55), tail = keep - head;
    const cut = text.slice(0, head) + "…" + text.slice(text.length - tail);
    if (textWidth(cut, px) <= max) return cut;
    keep--;
  }
  return text.slice(0, 4) + "…";
}
// SVG's XML namespace name: an identifier the DOM needs, never fetched.
const SVG_NS = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// The graph path that brought a hit in (steps `label -rel->`, the last a
// plain label) as boxes sized to their names, drawn at the page's scale
// (13 px), each relation written on its arrow. A name too long for a box is
// cut in the middle; the box's title holds it whole.
function pathPicture(via) {
  const steps = via.map((s) => { const m = s.match(/^(.*) -(\S+)->$/s); return m ? { label: m[1], rel: m[2] } : { label: s, rel: null }; });
  const px = 13, relPx = 12, padX = 10, boxH = 28, maxBox = 340, top = 4;
  const boxes = steps.map((s) => {
    const shown = fitText(s.label, px, maxBox - 2 * padX);
    return { ...s, shown, w: Math.ceil(textWidth(shown, px)) + 2 * padX };
  });
  const gaps = steps.map((s) => (s.rel ? Math.max(56, Math.ceil(textWidth(s.rel, relPx)) + 24) : 0));
  const width = boxes.reduce((a, b, i) => a + b.w + gaps[i], 0) + 2;
  const height = boxH + 2 * top;
  const svg = svgEl("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", class: "path-picture",
    "aria-label": "graph path: " + steps.map((s) => s.label + (s.rel ? ` —${s.rel}→` : "")).join(" ") });
  let x = 1;
  const mid = top + boxH / 2;
  boxes.forEach((b, i) => {
    const g = svgEl("g", {});
    const title = svgEl("title", {});
    title.textContent = b.label;
    g.append(title,
      svgEl("rect", { x, y: top, width: b.w, height: boxH, rx: 6, fill: "#f4f6f8", stroke: "#4a5360" }));
    const t = svgEl("text", { x: x + padX, y: mid + 4.5, "font-size": px, "font-family": FONT, fill: "#1b1f24" });
    t.textContent = b.shown;
    g.append(t);
    svg.append(g);
    x += b.w;
    if (b.rel) {
      const gap = gaps[i], end = x + gap - 2;
      svg.append(svgEl("line", { x1: x + 2, y1: mid, x2: end - 6, y2: mid, stroke: "#4a5360", "stroke-width": 1.5 }),
        svgEl("path", { d: `M${end - 7},${mid - 4} L${end},${mid} L${end - 7},${mid + 4} Z`, fill: "#4a5360" }));
      const r = svgEl("text", { x: x + gap / 2, y: mid - 4, "text-anchor": "middle", "font-size": relPx, "font-family": FONT, fill: "#4a5360" });
      r.textContent = b.rel;
      svg.append(r);
      x += gap;
    }
  });
  return el("div", { class: "path-scroll" }, svg);
}

// A factor as the page prints it: at most 3 decimals (0.6, 1.3, 0.654).
function factor(f) {
  return f.toFixed(3).replace(/\.?0+$/, "");
}
const SECTION_BOOST = "another section of the file";

// `best`: the hit of the file's best section in this answer, if any (a
// further section of a file is ranked as its file; the retrievers' rows
// are the file's, not the section's own).
function explainView(h, best) {
  const rows = (h.signals || []).map((s) =>
    el("tr", {}, el("td", {}, s.retriever), el("td", {}, s.rank), el("td", {}, s.raw.toFixed(4)), el("td", {}, s.contribution.toFixed(4))));
  const section = (h.boosts || []).find((b) => b.reason === SECTION_BOOST);
  const caption = section ? el("caption", { class: "muted" }, "ranks of the file, not of this section") : null;
  const sectionNote = section
    ? el("p", { class: "muted" }, `A further section of ${h.path}: the retrievers ranked the file (its best section is ${best ? `${best.path}:${best.start_line}-${best.end_line}` : "another hit"}); this section scores ×${factor(section.factor)} of that section's score.`)
    : null;
  const boosts = (h.boosts || []).map((b) => el("span", { class: "chip" }, `${b.reason} ×${factor(b.factor)}`));
  return el("div", { class: "explain" },
    el("table", {}, caption, el("thead", {}, el("tr", {}, el("th", {}, "retriever"), el("th", {}, "rank"), el("th", {}, "raw score"), el("th", {}, "contribution"))), el("tbody", {}, rows)),
    sectionNote,
    boosts.length ? el("p", {}, "boosts: ", boosts) : null,
    (h.via && h.via.length) ? el("div", {}, el("p", {}, "brought in by the graph:"), pathPicture(h.via)) : null,
    el("p", { class: "muted" }, `score ${h.score.toFixed(4)}`));
}

function hitView(h, terms, hits) {
  const expanded = el("div", { class: "expanded" });
  const explained = el("div", { class: "explained" });
  const expandBtn = el("button", { class: "plain", type: "button", "aria-expanded": "false" }, "Expand");
  expandBtn.addEventListener("click", async () => {
    if (expandBtn.getAttribute("aria-expanded") === "true") {
      expanded.replaceChildren(); expandBtn.setAttribute("aria-expanded", "false"); expandBtn.textContent = "Expand"; return;
    }
    try {
      const s = await api("/api/expand?id=" + encodeURIComponent(h.chunk_id));
      const listing = codeView(s.code || plainLines(s.text), s.start_line, [h.start_line, h.end_line], null, `${s.path} lines ${s.start_line} to ${s.end_line}`);
      listing.classList.add("section");
      expanded.replaceChildren(el("p", { class: "muted" }, `${s.path}:${s.start_line}-${s.end_line}${s.truncated ? " (cut to the budget)" : ""} · the hit's lines ${h.start_line}-${h.end_line} marked`), listing);
      // The listing scrolls to the hit's first line, the page stays put.
      const first = listing.querySelector(".line.hl");
      if (first) listing.scrollTop = Math.max(0, first.offsetTop - 8);
      expandBtn.setAttribute("aria-expanded", "true"); expandBtn.textContent = "Collapse";
    } catch (e) { showError(expanded, e); }
  });
  const explainBtn = el("button", { class: "plain", type: "button", "aria-expanded": "false" }, "Explain");
  explainBtn.addEventListener("click", () => {
    const open = explainBtn.getAttribute("aria-expanded") === "true";
    const best = hits.find((o) => o !== h && o.path === h.path && !(o.boosts || []).some((b) => b.reason === SECTION_BOOST));
    explained.replaceChildren(...(open ? [] : [explainView(h, best)]));
    explainBtn.setAttribute("aria-expanded", String(!open));
  });
  const kind = h.path.includes("/memory/") || h.path.startsWith(".cairn/") ? "memory" : "";
  // Code shows its first lines as the server tokenised them, numbered;
  // prose shows its snippet.
  const SHOWN = 12;
  const body = h.code
    ? [codeView(h.code.slice(0, SHOWN), h.start_line, null, terms, `${h.path} lines ${h.start_line} to ${Math.min(h.end_line, h.start_line + SHOWN - 1)}`),
      h.code.length > SHOWN ? el("p", { class: "muted small" }, `${h.code.length - SHOWN} more lines: Expand shows them`) : null]
    : [el("p", { class: "snippet" }, highlight((h.snippet || h.text.slice(0, 300)).replace(/^\s*\n|\s+$/g, ""), terms))];
  return el("li", { class: "hit", tabindex: -1 },
    el("div", { class: "where" }, `${h.path}:${h.start_line}-${h.end_line}`,
      el("span", { class: "badge " + h.source, title: "source file since indexing" }, h.source),
      kind ? el("span", { class: "badge kind" }, kind) : null),
    h.breadcrumb ? el("div", { class: "crumb" }, h.breadcrumb) : null,
    body,
    el("div", { class: "actions" }, expandBtn, explainBtn),
    expanded, explained);
}

$("#search-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const started = performance.now();
  const q = $("#q").value.trim();
  if (!q) return;
  const kinds = [...document.querySelectorAll('input[name="kind"]:checked')].map((c) => c.value);
  const list = $("#hits");
  try {
    const v = await api(`/api/search?q=${encodeURIComponent(q)}&kind=${kinds.join(",")}&limit=10`);
    list.replaceChildren(...v.hits.map((h) => hitView(h, h.marks || [], v.hits)));
    const ms = performance.now() - started;
    document.body.dataset.lastSearchMs = ms.toFixed(1);
    $("#search-meta").textContent = `${v.hits.length} of ${v.total_count} matches · ${v.retrievers} · ${v.ms.toFixed(1)} ms on the server, ${ms.toFixed(0)} ms here`;
  } catch (e) { showError(list, e); $("#search-meta").textContent = ""; }
});

// ---- home -------------------------------------------------------------------
// What the page opens on: counts and freshness, the feed of recent sessions
// with the memories each stored, memories by type, the newest memories, and
// what the hooks injected (prompt → memories, with why each got through).
function card(n, what, sub, warn) {
  return el("div", { class: warn ? "card warn" : "card" }, el("span", { class: "n" }, n), el("span", { class: "what" }, what), sub ? el("span", { class: "sub" }, sub) : null);
}
function memLink(m) {
  return el("li", {}, el("button", { type: "button", class: "mem-link", "data-id": m.id, onclick: () => openMemory(m.id) },
    el("span", { class: "type" }, m.type), el("span", { class: "muted" }, `imp ${m.importance} · ${stamp(m.created)} `), el("br"), m.text));
}
async function loadHome() {
  document.body.dataset.homeReady = "";
  const started = performance.now();
  try {
    const h = await api("/api/home");
    const s = h.status;
    $("#project").textContent = s.root;
    const total = Object.entries(h.memory_types).filter(([k]) => k !== "session").reduce((a, [, n]) => a + n, 0);
    const q = s.embed_queue;
    const stale = s.stale_files > 0;
    $("#home-cards").replaceChildren(
      card(s.files.toLocaleString("en"), "files indexed", `${s.chunks.toLocaleString("en")} chunks`),
      card(total.toLocaleString("en"), "memories", `${h.memory_types.session || 0} day${h.memory_types.session === 1 ? "" : "s"} of session logs`),
      card(String(h.sessions.length), "recent sessions", h.sessions[0] ? `last ${ago(h.sessions[0].until)}` : "none captured yet"),
      card(s.last_indexed_at ? ago(s.last_indexed_at) : "never", "last indexed", stale ? `${s.stale_files} files changed since` : (s.watching ? "watching for changes" : "up to date at that time"), stale),
      card(s.model ? `${s.embedded_chunks.toLocaleString("en")} / ${s.chunks.toLocaleString("en")}` : "BM25 only", "chunks embedded",
        q ? `queue: ${q.pending} waiting${q.per_second ? `, ${q.per_second.toFixed(1)}/s` : ""}` : "no embedding model"));
    const types = Object.entries(h.memory_types).sort((a, b) => b[1] - a[1]);
    const most = Math.max(1, ...types.map(([, n]) => n));
    $("#mem-types").replaceChildren(...(types.length ? types.map(([k, n]) => {
      const bar = el("span", { class: "bar", "aria-hidden": "true" });
      bar.style.width = `${(100 * n) / most}%`;
      return el("li", {}, el("span", {}, k), el("span", {}, bar), el("span", { class: "count" }, String(n)));
    }) : [el("li", { class: "muted" }, "no memories yet")]));
    $("#home-memories").replaceChildren(...(h.memories.length ? h.memories.map(memLink) : [el("li", { class: "muted" }, "none yet: cairn remember, or an agent's memory_store")]));
    $("#sessions-count").textContent = `(${h.sessions.length})`;
    $("#feed").replaceChildren(...(h.sessions.length ? h.sessions.map((x) => el("li", { class: "session", "data-session": x.session || "" },
      el("h3", {}, `${x.day} ${x.first}${x.last !== x.first ? "–" + x.last : ""} UTC`,
        el("span", { class: "muted" }, `${x.turns.length} turn${x.turns.length === 1 ? "" : "s"}${x.session ? " · session " + x.session.slice(0, 12) : ""}`),
        el("button", { type: "button", class: "plain open-log", onclick: () => openMemory(x.log) }, "Open the log")),
      x.turns.slice(-3).map((t) => el("p", { class: "turn" }, el("time", {}, t.time), short(t.summary))),
      x.memories.length ? el("ul", { class: "produced", "aria-label": "memories stored while it ran" }, x.memories.map(memLink))
        : el("p", { class: "muted small" }, "no memory stored while it ran"))) : [el("li", { class: "muted" }, "No session captured yet: cairn hooks install claude-code captures each turn.")]));
    $("#injections").replaceChildren(...(h.injections.length ? h.injections.map((x) => el("li", {},
      el("div", {}, timeEl(x.time), ` ${x.event}`, x.prompt ? el("span", {}, ": ", el("span", { class: "prompt" }, `“${x.prompt}”`)) : null),
      el("ul", {}, (x.why || []).map((w, i) => {
        const [id, reason] = w.split(/: (.*)/s);
        const m = (x.memories || [])[i] || {};
        return el("li", {}, el("button", { type: "button", class: "plain inj-mem", onclick: () => openMemory(id) }, id),
          m.replaced_by ? el("span", { class: "badge changed", title: `replaced by ${m.replaced_by}` }, "replaced") : null,
          ` ${reason || ""}`, m.text ? el("span", { class: "inj-text" }, el("br"), m.text) : null);
      }), x.last_session ? el("li", {}, "the last session's summary") : null))) : [el("li", { class: "muted" }, "Nothing injected yet (the SessionStart and UserPromptSubmit hooks inject).")]));
    document.body.dataset.homeMs = (performance.now() - started).toFixed(1);
    document.body.dataset.homeReady = "1";
  } catch (e) { showError($("#home-cards"), e); }
}
// A session summary's first lines, on one line each, as prose.
function short(summary) {
  // `**Asked:**` and its items read "Asked: first · second".
  const parts = [];
  for (const raw of summary.split("\n")) {
    const l = raw.trim();
    const head = l.match(/^\*\*(.*):\*\*$/);
    if (head) parts.push(head[1] + ":");
    else if (l) {
      const item = l.replace(/^- /, "");
      if (parts.length && parts[parts.length - 1].endsWith(":")) parts[parts.length - 1] += " " + item;
      else parts.push(item);
    }
  }
  const text = parts.slice(0, 2).join(" · ");
  return text.length > 260 ? text.slice(0, 259) + "…" : text;
}
// A memory's text on one line for the list: without HTML comments (a
// session log's anchors), heading or list marks, or bold.
function oneLine(text) {
  const t = text.replace(/<!--[\s\S]*?-->/g, " ").replace(/^\s*(#+|[-*])\s+/gm, "").replace(/\*\*/g, "").replace(/\s+/g, " ").trim();
  return t.length > 140 ? t.slice(0, 139) + "…" : t;
}
// A session log as it reads: its anchors (`<!-- session:… -->`) left out,
// `### 14:05` a heading per session, `**Asked:**` a label, `- x` a list.
function sessionView(text) {
  const box = el("div", { class: "memory-text session-log" });
  let list = null;
  for (const raw of text.replace(/<!--[\s\S]*?-->/g, "").split("\n")) {
    const line = raw.trim();
    if (!line) { list = null; continue; }
    const h = line.match(/^(#+)\s+(.*)$/);
    if (h) { list = null; box.append(el(h[1].length <= 1 ? "h3" : "h4", {}, h[2])); continue; }
    const item = line.match(/^[-*]\s+(.*)$/);
    if (item) {
      if (!list) { list = el("ul"); box.append(list); }
      list.append(el("li", {}, item[1].replace(/\*\*/g, "")));
      continue;
    }
    list = null;
    const label = line.match(/^\*\*(.+?)\*\*\s*(.*)$/);
    box.append(label ? el("p", {}, el("strong", {}, label[1]), label[2] ? " " + label[2] : "") : el("p", {}, line));
  }
  return box;
}
// Buttons that open each memory of `ids`, for a chain of what replaced what.
function memoryLinks(ids) {
  return ids.flatMap((id, i) => [i ? ", " : "", el("button", { type: "button", class: "plain chain-link", "data-id": id, onclick: () => openMemory(id) }, id)]);
}
// Opens a memory (or a session log) in the memories view.
async function openMemory(id) {
  await activate($("#tab-memories"));
  let m = lastMemories.find((x) => x.id === id);
  if (!m) {
    $("#mem-filters").reset();
    await loadMemories();
    m = lastMemories.find((x) => x.id === id);
  }
  if (m) {
    showMemory(m);
    document.querySelector(`#mem-list button[data-id="${CSS.escape(id)}"]`)?.scrollIntoView({ block: "nearest" });
    $("#mem-detail").scrollIntoView({ block: "start" });
  } else {
    $("#mem-detail").replaceChildren(el("p", { class: "error", role: "alert" }, `memory ${id} is not in the index (forgotten, or expired)`));
  }
}

// ---- memories -------------------------------------------------------------
let lastMemories = [];
let currentMemory = null;
async function loadMemories() {
  // Resolves once the list and the timeline are drawn.
  const f = new FormData($("#mem-filters"));
  const p = new URLSearchParams();
  for (const [k, v] of f.entries()) if (v) p.set(k, v);
  try {
    const v = await api("/api/memories?" + p);
    lastMemories = v.memories;
    $("#mem-count").textContent = `(${v.total_count})`;
    $("#mem-list").replaceChildren(...v.memories.map((m) => {
      const b = el("button", { type: "button", "data-id": m.id, "aria-current": m.id === currentMemory ? "true" : "false", class: m.stale_source ? "stale" : "" },
        el("strong", {}, m.type), ` · imp ${m.importance} · ${m.created.slice(0, 10)}`,
        m.stale_source ? el("span", { class: "badge changed" }, "stale source") : null,
        m.expired ? el("span", { class: "badge deleted" }, "expired") : null,
        m.replaced_by ? el("span", { class: "badge changed" }, "replaced") : null,
        el("br"), oneLine(m.text));
      b.addEventListener("click", () => showMemory(m));
      return el("li", {}, b);
    }));
    const fresh = v.memories.find((m) => m.id === currentMemory);
    if (fresh) showMemory(fresh);
  } catch (e) { showError($("#mem-list"), e); }
  await loadTimeline();
}
$("#mem-filters").addEventListener("submit", (e) => { e.preventDefault(); loadMemories(); });

function showMemory(m) {
  currentMemory = m.id;
  for (const b of document.querySelectorAll("#mem-list button")) b.setAttribute("aria-current", String(b.dataset.id === m.id));
  const fields = [["id", m.id], ["type", m.type], ["importance", m.importance], ["tags", (m.tags || []).join(", ")], ["entities", (m.entities || []).join(", ")],
    ["created", m.created], ["updated", m.updated], ["expires", m.expires || "never"], ["sources", (m.sources || []).join(", ")]];
  const preview = el("div", { class: "preview-slot", "aria-live": "polite" });
  // A session log is written by the capture hooks: read-only here, forget removes it.
  const readOnly = m.type === "session";
  const form = readOnly ? el("form", { class: "edit", id: "edit-form" },
    el("p", { class: "note read-only", id: "read-only" }, "A session log: the capture hooks write it, so it is read-only here. Forget removes it (undo restores it)."),
    el("span"), el("div", { class: "actions" }, el("button", { type: "button", class: "danger", id: "preview-forget" }, "Forget…")))
  : el("form", { class: "edit", id: "edit-form" },
    el("label", { for: "e-text" }, "Text"), el("textarea", { id: "e-text", name: "text" }, m.text),
    el("label", { for: "e-type" }, "Type"), el("input", { id: "e-type", name: "type", value: m.type }),
    el("label", { for: "e-imp" }, "Importance"), el("input", { id: "e-imp", name: "importance", type: "number", min: 1, max: 10, value: m.importance }),
    el("label", { for: "e-tags" }, "Tags"), el("input", { id: "e-tags", name: "tags", value: (m.tags || []).join(", ") }),
    el("label", { for: "e-ttl" }, "Time to live"), el("input", { id: "e-ttl", name: "ttl", placeholder: "e.g. 30d (empty: unchanged)" }),
    el("span"), el("div", { class: "actions" },
      el("button", { type: "button", id: "preview-edit" }, "Preview changes"),
      el("button", { type: "button", class: "danger", id: "preview-forget" }, "Forget…")));
  const patch = (dry) => ({
    id: m.id, dry_run: dry, text: $("#e-text").value, type: $("#e-type").value,
    importance: Number($("#e-imp").value), tags: $("#e-tags").value.split(",").map((t) => t.trim()).filter(Boolean),
    ttl: $("#e-ttl").value || null,
  });
  // The chain: what this memory replaced and what replaced it, each a link.
  const chain = [];
  if ((m.replaces || []).length) chain.push(el("dt", {}, "replaces"), el("dd", { id: "m-replaces" }, ...memoryLinks(m.replaces)));
  if (m.replaced_by) chain.push(el("dt", {}, "replaced by"), el("dd", { id: "m-replaced-by" }, ...memoryLinks([m.replaced_by])));
  $("#mem-detail").replaceChildren(
    el("h2", {}, "Memory", m.stale_source ? el("span", { class: "badge changed" }, "a cited source changed") : null,
      m.replaced_by ? el("span", { class: "badge changed" }, "replaced by a newer memory") : null),
    el("dl", {}, fields.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]), ...chain),
    readOnly ? sessionView(m.text) : el("pre", { class: "memory-text" }, m.text), form, preview);
  if (!readOnly) $("#preview-edit").addEventListener("click", async () => {
    try {
      const v = await api("/api/memory/update", patch(true));
      preview.replaceChildren(el("div", { class: "preview" }, el("p", {}, "Dry run — nothing written yet. After saving:"), el("pre", {}, v.memory.text),
        el("p", {}, `type ${v.memory.type}, importance ${v.memory.importance}, tags ${(v.memory.tags || []).join(", ") || "none"}`),
        el("button", { type: "button", id: "save-edit", onclick: async () => {
          try {
            await api("/api/memory/update", patch(false));
            await loadMemories();
            $("#mem-detail").prepend(el("p", { role: "status", class: "saved" }, "Saved. Undo it from the timeline."));
          }
          catch (e) { showError(preview, e); }
        } }, "Save")));
    } catch (e) { showError(preview, e); }
  });
  $("#preview-forget").addEventListener("click", async () => {
    try {
      const v = await api("/api/memory/forget", { id: m.id, dry_run: true });
      preview.replaceChildren(el("div", { class: "preview" }, el("p", {}, "Dry run — this memory would be forgotten (undo restores it):"), el("pre", {}, v.memory.text),
        el("button", { type: "button", class: "danger", id: "confirm-forget", onclick: async () => {
          try {
            await api("/api/memory/forget", { id: m.id });
            currentMemory = null;
            await loadMemories();
            $("#mem-detail").replaceChildren(el("p", { role: "status" }, "Forgotten. Undo it from the timeline."));
          }
          catch (e) { showError(preview, e); }
        } }, "Forget")));
    } catch (e) { showError(preview, e); }
  });
}

// Undo acts on the row clicked: the page sends the entry's log line and
// memory, and the server refuses (409) unless it is still that memory's
// newest change not undone. Undoing a store removes the memory, so it is
// previewed as a dry run and confirmed, as a forget is.
const when = (t) => t.replace("T", " ").slice(0, 19);
async function undoEntry(x) {
  const status = $("#timeline-status");
  const body = { line: x.line, id: x.id };
  try {
    if (x.before === null || x.before === undefined) {
      const v = await api("/api/undo", { ...body, dry_run: true });
      const m = v.undone.memory;
      status.replaceChildren(el("div", { class: "preview", role: "status" },
        el("p", {}, `Dry run — undoing this ${x.action} (${when(x.time)}) removes memory `, el("code", {}, x.id),
          ". Its file goes to .cairn/trash/, and this undo cannot itself be undone from here."),
        m ? el("pre", {}, m.text) : null,
        el("div", { class: "actions" },
          el("button", { type: "button", class: "danger", id: "confirm-undo", onclick: () => runUndo(x, { ...body, confirm: true }) }, "Remove it"),
          el("button", { type: "button", class: "plain", onclick: () => status.replaceChildren() }, "Cancel"))));
      return;
    }
    await runUndo(x, body);
  } catch (e) { showError(status, e); loadTimeline(); }
}
async function runUndo(x, body) {
  const status = $("#timeline-status");
  try {
    const v = await api("/api/undo", body);
    const removed = v.undone.removes;
    if (removed && currentMemory === x.id) {
      currentMemory = null;
      $("#mem-detail").replaceChildren(el("p", { class: "muted" }, "Pick a memory to see it whole."));
    }
    await loadMemories();
    status.replaceChildren(el("p", { class: "saved", role: "status" },
      `Undone: the ${x.action} of `, el("code", {}, x.id), ` at ${when(x.time)} — `,
      removed ? "the memory was removed (its file is in .cairn/trash/)." : "the memory is back as it was before it."));
  } catch (e) { showError(status, e); loadTimeline(); }
}

async function loadTimeline() {
  try {
    const v = await api("/api/log?limit=50");
    $("#timeline").replaceChildren(...v.entries.map((x) => {
      const state = (x.undo && x.undo.state) || "final";
      return el("li", { "data-action": x.action, "data-line": x.line, "data-undo": state },
        el("time", { datetime: x.time }, when(x.time)), ` ${x.action} `, el("code", {}, x.id), ` (${x.client}) `,
        x.chain && (x.chain.replaces || []).length ? el("span", { class: "chain" }, "replaces ", ...memoryLinks(x.chain.replaces), " ") : null,
        x.chain && x.chain.replaced_by ? el("span", { class: "chain" }, "replaced by ", ...memoryLinks([x.chain.replaced_by]), " ") : null,
        state === "undoable" ? el("button", { type: "button", class: "plain undo", "aria-label": `Undo the ${x.action} of ${x.id} at ${when(x.time)}`, onclick: () => undoEntry(x) }, "Undo")
          : state === "undone" ? el("span", { class: "muted" }, "(undone)") : null);
    }));
  } catch (e) { showError($("#timeline"), e); }
}

// ---- graph ---------------------------------------------------------------
// A neighbourhood: one node per entity or section (duplicates merged, their
// relations kept), placed on rings by relation and then pushed apart until
// no two labels overlap; relation names on hover and focus, and beside the
// drawing grouped by relation. Click an entity to recentre on it; a hub
// shows its heaviest CAP neighbours first and "Show more" adds more.
const KIND_COLOURS = { entity: "#f2c14e", doc: "#7fb3e6", code: "#9fd8a4", memory: "#e6a0c4" };
const CAP = 24;
const FETCHED = 150;
let graphState = null;
const trail = [];

// Neighbours merged by what they stand for: the same section or entity
// reached by two relations is one node with both.
function mergeNeighbours(neighbors) {
  const byKey = new Map();
  for (const nb of neighbors) {
    const g = nb.node;
    const key = `${g.kind}|${g.kind === "entity" ? g.label.toLowerCase() : g.label + "|" + (g.path || "")}`;
    const had = byKey.get(key);
    if (had) { if (!had.rels.includes(nb.rel)) had.rels.push(nb.rel); had.weight = Math.max(had.weight, nb.weight); }
    else byKey.set(key, { node: g, rels: [nb.rel], weight: nb.weight, key });
  }
  return [...byKey.values()];
}
const shortLabel = (g) => { const l = g.label.split(" > ").pop(); return l.length > 34 ? l.slice(0, 33) + "…" : l; };

// Places nodes (each a circle and its label's box) around the centre and
// resolves every overlap; returns positions and the drawing's bounds.
function layout(items, centre) {
  const px = 12, r = 7, gap = 6;
  const boxes = items.map((it, i) => {
    const w = Math.ceil(textWidth(it.shown, px)) + 2 * r + 10, h = 18;
    return { i, w, h, x: 0, y: 0, tx: 0, ty: 0 };
  });
  // Rings, sectors by relation (items come sorted by relation).
  const n = items.length;
  const ring = Math.max(170, Math.sqrt(n) * 42);
  boxes.forEach((b, i) => {
    const a = (2 * Math.PI * i) / Math.max(n, 1) - Math.PI / 2;
    const rr = ring * (i % 2 ? 1.28 : 1);
    b.tx = Math.cos(a) * rr * 1.35; b.ty = Math.sin(a) * rr;
    b.x = b.tx; b.y = b.ty;
  });
  const cw = Math.ceil(textWidth(centre, 14)) + 30, ch = 46;
  const hub = { x: -cw / 2, y: -ch / 2 - 8, w: cw, h: ch };
  const overlap = (a, b) => {
    const ox = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x) + gap;
    const oy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y) + gap;
    return ox > 0 && oy > 0 ? [ox, oy] : null;
  };
  // Boxes are placed by their top-left corner: the circle is at the left.
  boxes.forEach((b) => { b.x -= b.w / 2; b.y -= b.h / 2; b.tx = b.x; b.ty = b.y; });
  for (let step = 0; step < 400; step++) {
    let moved = false;
    for (let i = 0; i < n; i++) {
      const a = boxes[i];
      const o = overlap(a, hub);
      if (o) {
        moved = true;
        const ax = a.x + a.w / 2, ay = a.y + a.h / 2;
        if (o[0] < o[1]) a.x += ax < 0 ? -o[0] : o[0]; else a.y += ay < 0 ? -o[1] : o[1];
      }
      for (let j = i + 1; j < n; j++) {
        const b = boxes[j];
        const o2 = overlap(a, b);
        if (!o2) continue;
        moved = true;
        const dx = (a.x + a.w / 2) - (b.x + b.w / 2), dy = (a.y + a.h / 2) - (b.y + b.h / 2);
        if (o2[0] < o2[1]) { const m = (o2[0] / 2) * (dx < 0 ? -1 : 1); a.x += m; b.x -= m; }
        else { const m = (o2[1] / 2) * (dy < 0 ? -1 : 1) || o2[1] / 2; a.y += m; b.y -= m; }
      }
    }
    if (!moved) break;
    // A weak pull back to each node's place on its ring keeps the picture round.
    if (step < 200) boxes.forEach((b) => { b.x += (b.tx - b.x) * 0.02; b.y += (b.ty - b.y) * 0.02; });
  }
  const all = [...boxes, hub];
  const minX = Math.min(...all.map((b) => b.x)) - 12, maxX = Math.max(...all.map((b) => b.x + b.w)) + 12;
  const minY = Math.min(...all.map((b) => b.y)) - 12, maxY = Math.max(...all.map((b) => b.y + b.h)) + 12;
  return { boxes, hub, view: [minX, minY, maxX - minX, maxY - minY], r };
}

function drawNeighbourhood() {
  const st = graphState;
  const items = st.items.slice(0, st.shown).sort((a, b) => a.rels[0].localeCompare(b.rels[0]) || b.weight - a.weight);
  items.forEach((it) => { it.shown = shortLabel(it.node); });
  // A name shown twice says the heading above it ("24.4.0 › Fixed": every
  // release of a changelog has its "Fixed"), then, if still twice, its
  // file (every script's `__main__`).
  const count = () => { const seen = new Map(); items.forEach((it) => seen.set(it.shown, (seen.get(it.shown) || 0) + 1)); return seen; };
  let seen = count();
  items.forEach((it) => {
    const parts = it.node.label.split(" > ");
    if (seen.get(it.shown) > 1 && parts.length > 1) it.shown = `${parts[parts.length - 2].slice(0, 24)} › ${it.shown}`;
  });
  seen = count();
  items.forEach((it) => {
    if (seen.get(it.shown) > 1 && it.node.path) it.shown = `${it.node.path.split("/").pop()} › ${it.shown}`;
  });
  const L = layout(items, st.entity.label);
  const [vx, vy, vw, vh] = L.view;
  const svg = svgEl("svg", { viewBox: `${vx} ${vy} ${vw} ${vh}`, role: "group", "aria-label": `neighbourhood of ${st.entity.label}` });
  // Shown at its own size where the window allows; never wider than the column.
  svg.setAttribute("width", Math.round(vw));
  svg.setAttribute("height", Math.round(vh));
  const edges = svgEl("g", {}), nodes = svgEl("g", {});
  const edgeOf = new Map();
  items.forEach((it, i) => {
    const b = L.boxes[i];
    const x = b.x + L.r + 2, y = b.y + b.h / 2;
    const eg = svgEl("g", { class: "edge-g", "data-key": it.key });
    const line = svgEl("line", { x1: 0, y1: 0, x2: x, y2: y, class: "edge" });
    const lt = svgEl("title", {}); lt.textContent = `${st.entity.label} —${it.rels.join(", ")}→ ${it.node.label}`;
    line.append(lt);
    const rel = svgEl("text", { x: x / 2, y: y / 2 - 4, "text-anchor": "middle", class: "rel" });
    rel.textContent = it.rels.join(", ");
    eg.append(line, rel);
    edges.append(eg);
    edgeOf.set(it.key, eg);
    const g = svgEl("g", { class: "nb", tabindex: 0, role: "button", "data-key": it.key, "data-kind": it.node.kind,
      "aria-label": `${it.node.kind} ${it.node.label}, ${it.rels.join(" and ")}${it.node.kind === "entity" ? ": Enter recentres on it" : ": Enter opens it"}` });
    const title = svgEl("title", {}); title.textContent = `${it.node.kind}: ${it.node.label}${it.node.path ? " — " + it.node.path : ""} (${it.rels.join(", ")})`;
    g.append(title,
      svgEl("rect", { x: b.x + L.r * 2 + 4, y: b.y + 1, width: b.w - L.r * 2 - 6, height: b.h - 2, rx: 3, class: "label-bg" }),
      svgEl("circle", { cx: x, cy: y, r: L.r, fill: KIND_COLOURS[it.node.kind] || "#ccc", class: "node" }));
    const t = svgEl("text", { x: b.x + L.r * 2 + 8, y: y + 4, class: "label" });
    t.textContent = it.shown;
    g.append(t);
    const on = (yes) => { eg.classList.toggle("on", yes); const s = document.querySelector(`#rel-list button[data-key="${CSS.escape(it.key)}"]`); if (s) s.classList.toggle("on", yes); };
    g.addEventListener("mouseenter", () => on(true)); g.addEventListener("mouseleave", () => on(false));
    g.addEventListener("focus", () => on(true)); g.addEventListener("blur", () => on(false));
    g.addEventListener("click", () => choose(it));
    g.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); choose(it); }
      const step = e.key === "ArrowRight" || e.key === "ArrowDown" ? 1 : e.key === "ArrowLeft" || e.key === "ArrowUp" ? -1 : 0;
      if (step) { e.preventDefault(); const all = [...nodes.querySelectorAll("g.nb")]; all[(all.indexOf(g) + step + all.length) % all.length].focus(); }
    });
    nodes.append(g);
  });
  const hub = svgEl("g", { class: "hub" });
  const ht = svgEl("title", {}); ht.textContent = `entity: ${st.entity.label}`;
  hub.append(ht, svgEl("circle", { cx: 0, cy: 0, r: 14, fill: KIND_COLOURS.entity, class: "node centre" }));
  const label = svgEl("text", { x: 0, y: -22, "text-anchor": "middle", class: "centre-label" });
  label.textContent = st.entity.label;
  hub.append(label);
  svg.append(edges, nodes, hub);
  const swatch = (c) => { const i = el("i"); i.style.background = c; return i; };
  const legend = el("div", { class: "legend" }, Object.entries(KIND_COLOURS).map(([k, c]) => el("span", {}, swatch(c), k)));
  const crumbs = trail.length > 1 ? el("p", { class: "crumbs" }, "Came from: ", trail.slice(0, -1).map((name, i) =>
    el("button", { type: "button", class: "plain", onclick: () => { trail.splice(i); drawEntity(name); } }, name)), " → ", el("strong", {}, st.entity.label)) : null;
  $("#graph").replaceChildren(legend, crumbs || "", svg);
  // Side list: every neighbour shown, grouped by relation.
  const groups = new Map();
  for (const it of items) for (const r of it.rels) { if (!groups.has(r)) groups.set(r, []); groups.get(r).push(it); }
  $("#rel-list").replaceChildren(el("h2", {}, "By relation"), ...[...groups.entries()].sort((a, b) => b[1].length - a[1].length).map(([rel, its]) =>
    el("details", { open: true, "data-rel": rel }, el("summary", {}, `${rel} (${its.length})`),
      el("ul", {}, its.map((it) => {
        const b = el("button", { type: "button", "data-key": it.key, title: it.node.label, onclick: () => choose(it) },
          swatch(KIND_COLOURS[it.node.kind] || "#ccc"), " ", it.node.label);
        b.addEventListener("mouseenter", () => edgeOf.get(it.key)?.classList.add("on"));
        b.addEventListener("mouseleave", () => edgeOf.get(it.key)?.classList.remove("on"));
        b.addEventListener("focus", () => edgeOf.get(it.key)?.classList.add("on"));
        b.addEventListener("blur", () => edgeOf.get(it.key)?.classList.remove("on"));
        return el("li", {}, b);
      })))));
  const left = st.items.length - st.shown;
  $("#graph-more").replaceChildren(left > 0 ? el("button", { type: "button", id: "show-more", onclick: () => { st.shown = Math.min(st.items.length, st.shown + CAP); drawNeighbourhood(); } },
    `Show ${Math.min(CAP, left)} more (${left} not drawn)`) : "");
  $("#graph-meta").textContent = `${st.entity.label}: ${st.shown < st.items.length ? `the ${st.shown} heaviest of ` : ""}${st.items.length}${st.fetched >= FETCHED ? "+" : ""} neighbours` +
    `${st.merged ? ` (${st.merged} duplicates merged)` : ""} · hover or focus a node for its relation; click an entity to recentre on it, a section to open it`;
}

// An entity drawn from the top, or a node of the drawing chosen.
function choose(it) {
  if (it.node.kind === "entity") { trail.push(it.node.label); drawEntity(it.node.label); }
  else nodeChosen(it.node);
}

async function drawEntity(name) {
  try {
    const n = await api(`/api/graph/neighbors?limit=${FETCHED}&name=` + encodeURIComponent(name));
    const items = mergeNeighbours(n.neighbors);
    graphState = { entity: n.entity, items, shown: Math.min(CAP, items.length), fetched: n.neighbors.length, merged: n.neighbors.length - items.length };
    if (!trail.length || trail[trail.length - 1] !== n.entity.label) { trail.length = 0; trail.push(n.entity.label); }
    $("#entity").value = n.entity.label;
    $("#communities").replaceChildren();
    $("#node-panel").hidden = true;
    drawNeighbourhood();
  } catch (e) { showError($("#graph"), e); $("#graph-meta").textContent = ""; $("#rel-list").replaceChildren(); $("#graph-more").replaceChildren(); }
}

function nodeChosen(g) {
  const panel = $("#node-panel");
  panel.hidden = false;
  const kids = [el("h2", {}, g.label), el("p", { class: "muted" }, g.degree == null ? g.kind : `${g.kind} · ${g.degree} links`)];
  const file = el("div", { class: "file", "aria-live": "polite" });
  if (g.path) {
    const range = g.lines ? `&start=${g.lines[0]}&end=${g.lines[1]}` : "";
    kids.push(el("p", {}, el("code", {}, `${g.path}${g.lines ? ":" + g.lines[0] + "-" + g.lines[1] : ""}`)),
      el("div", { class: "actions" },
        el("button", { type: "button", id: "open-file", onclick: async () => {
          try {
            const f = await api(`/api/file?path=${encodeURIComponent(g.path)}${range}`);
            const listing = codeView(f.code || plainLines(f.text), f.start_line, null, null, `${f.path} lines ${f.start_line} to ${f.end_line}`);
            listing.classList.add("file-text");
            file.replaceChildren(el("p", { class: "muted" }, `${f.path}:${f.start_line}-${f.end_line} of ${f.total_lines} lines`), listing);
          } catch (e) { showError(file, e); }
        } }, "Open the file here"),
        el("button", { type: "button", class: "plain", onclick: () => { $("#q").value = g.label.split(" > ").pop(); activate($("#tab-search")); $("#search-form").requestSubmit(); } }, "Search for it")));
  }
  if (g.kind === "entity") kids.push(el("button", { type: "button", class: "plain", onclick: () => { trail.length = 0; drawEntity(g.label); } }, "Draw its neighbourhood"));
  kids.push(file);
  panel.replaceChildren(...kids);
  panel.scrollIntoView({ block: "nearest" });
}

$("#graph-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const name = $("#entity").value.trim();
  trail.length = 0;
  if (name) drawEntity(name);
});

$("#communities-btn").addEventListener("click", async () => {
  try {
    const c = await api("/api/graph/communities?limit=24");
    const total = c.total || c.communities.length;
    const shown = total > c.communities.length ? ` (the ${c.communities.length} largest shown)` : "";
    $("#graph-meta").textContent = `${total} communities${shown} of ${c.nodes} nodes, ${c.edges} edges (modularity ${c.modularity.toFixed(3)}, ${c.millis.toFixed(0)} ms) · each named by what distinguishes it`;
    $("#graph").replaceChildren();
    $("#rel-list").replaceChildren();
    $("#graph-more").replaceChildren();
    $("#node-panel").hidden = true;
    $("#communities").replaceChildren(...c.communities.map((x) => el("article", { class: "community" },
      el("h3", {}, x.label || `community ${x.id}`), el("p", { class: "muted" }, `${x.size} nodes`),
      el("div", {}, x.entities.slice(0, 8).map((e) => el("button", { type: "button", class: "chip", onclick: () => { trail.length = 0; drawEntity(e); } }, e))),
      el("ul", {}, x.files.slice(0, 6).map((f) => el("li", {},
        el("button", { type: "button", class: "plain file-link", "aria-label": `Open ${f}`, onclick: () => nodeChosen({ label: f, kind: "file", path: f }) }, el("code", {}, f))))))));
  } catch (e) { showError($("#communities"), e); }
});

// ---- health --------------------------------------------------------------
let healthTimer = null;
function rows(table, pairs) {
  $("tbody", table).replaceChildren(...pairs.map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", {}, v))));
}
function bytes(n) { return n > 1 << 20 ? (n / (1 << 20)).toFixed(1) + " MB" : (n / 1024).toFixed(0) + " KB"; }
async function refreshHealth() {
  try {
    const s = await api("/api/status");
    $("#project").textContent = s.root;
    const q = s.embed_queue;
    rows($("#health"), [
      ["files", s.files],
      ["files by kind", Object.entries(s.files_by_kind || {}).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(", ") || "none"],
      ...(s.left_out || []).map((l) => [`left out: ${l.label}`, `${l.count} file${l.count === 1 ? "" : "s"} (e.g. ${l.example})`]),
      ["chunks", s.chunks], ["embedded", `${s.embedded_chunks} / ${s.chunks}`], ["model", s.model || "none (BM25 only)"],
      ["index size", bytes(s.index_bytes)], ["last index", s.last_indexed_at ? `${stamp(s.last_indexed_at)} (${ago(s.last_indexed_at)})` : "never"],
      ["watcher", s.watching ? "watching for changes" : "not watching"], ["indexing now", s.indexing ? "yes" : "no"],
      ["embedding", s.embedding_in_progress ? "computing vectors now" : "idle"],
      ["embedding queue", q ? `${q.pending} waiting of ${q.capacity}${q.per_second ? `, ${q.per_second.toFixed(1)}/s` : ""}` : "no model"],
      ["daemon", s.daemon ? `running (pid ${s.daemon.pid}), ${s.daemon.clients} client${s.daemon.clients === 1 ? "" : "s"} connected` : "not running (agents start it with cairn serve)"],
      ["stale files", `${s.stale_files}${s.stale_examples.length ? " (" + s.stale_examples.join(", ") + ")" : ""}`]]);
    const hooks = [];
    for (const [client, h] of Object.entries(s.hooks || {})) {
      hooks.push([client, `last success ${h.last_success ? stamp(h.last_success) + " (" + ago(h.last_success) + ")" : "never"}${h.last_error ? `; last error (${stamp(h.last_error.time)}): ` + h.last_error.message : ""}`]);
      for (const [event, i] of Object.entries(h.injected || {})) hooks.push([`${client} ${event}`, `${i.runs} runs, ${i.with_memories} with memories, ${i.tokens} tokens${i.last ? `; last ${stamp(i.last.time)}` : ""}`]);
    }
    rows($("#hooks"), hooks.length ? hooks : [["none", "no hook has run"]]);
    document.body.dataset.healthAt = String(Date.now());
  } catch (e) { rows($("#health"), [["error", String(e.message || e)]]); }
}
async function startHealth() {
  stopHealth();
  refreshHealth();
  healthTimer = setInterval(refreshHealth, 2000);
  try {
    const c = await api("/api/checks");
    rows($("#checks"), [["schema", `${c.schema[0]} (this build writes ${c.schema[1]})`], ["integrity", c.integrity.length ? c.integrity.join("; ") : "ok"],
      ["full-text index", c.fts ? "inconsistent: " + c.fts : "consistent"]]);
  } catch (e) { rows($("#checks"), [["error", String(e.message || e)]]); }
}
function stopHealth() { if (healthTimer) clearInterval(healthTimer); healthTimer = null; }

loadHome();
document.body.dataset.ready = "1";
