// Cairn's page: plain JavaScript, no library, no build step. It reads the
// JSON API under /api (see cairn-mcp/src/ui.rs) with the token from the
// URL's #token=… when the server has one.
"use strict";

const token = (() => {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) sessionStorage.setItem("cairn-token", decodeURIComponent(m[1]));
  return sessionStorage.getItem("cairn-token");
})();

async function api(path, body) {
  const headers = {};
  if (token) headers["Authorization"] = "Bearer " + token;
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
function activate(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", on);
    t.tabIndex = on ? 0 : -1;
    $("#" + t.getAttribute("aria-controls")).hidden = !on;
  }
  const view = tab.id.slice(4);
  if (view === "memories") loadMemories();
  if (view === "health") startHealth(); else stopHealth();
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

// ---- search -------------------------------------------------------------
function highlight(text, terms) {
  const frag = document.createDocumentFragment();
  if (!terms.length) { frag.append(text); return frag; }
  const re = new RegExp("(" + terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")", "gi");
  let last = 0;
  for (const m of text.matchAll(re)) {
    frag.append(text.slice(last, m.index), el("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  frag.append(text.slice(last));
  return frag;
}

function pathPicture(via) {
  // The graph path that brought a hit in, as a chain of labelled boxes.
  const ns = "http://www.w3.org/2000/svg";
  const w = 190, h = 34, gap = 36;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${via.length * (w + gap)} ${h + 8}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "graph path: " + via.join(" → "));
  svg.style.maxWidth = "100%";
  via.forEach((step, i) => {
    const x = i * (w + gap);
    const r = document.createElementNS(ns, "rect");
    Object.entries({ x, y: 4, width: w, height: h, rx: 6, fill: "#f4f6f8", stroke: "#4a5360" }).forEach(([k, v]) => r.setAttribute(k, v));
    const t = document.createElementNS(ns, "text");
    Object.entries({ x: x + 8, y: 25, "font-size": 12, fill: "#1b1f24" }).forEach(([k, v]) => t.setAttribute(k, v));
    t.textContent = step.length > 28 ? step.slice(0, 27) + "…" : step;
    svg.append(r, t);
    if (i + 1 < via.length) {
      const l = document.createElementNS(ns, "line");
      Object.entries({ x1: x + w, y1: 21, x2: x + w + gap, y2: 21, stroke: "#4a5360", "stroke-width": 2 }).forEach(([k, v]) => l.setAttribute(k, v));
      svg.append(l);
    }
  });
  return svg;
}

function explainView(h) {
  const rows = (h.signals || []).map((s) =>
    el("tr", {}, el("td", {}, s.retriever), el("td", {}, s.rank), el("td", {}, s.raw.toFixed(4)), el("td", {}, s.contribution.toFixed(4))));
  const boosts = (h.boosts || []).map((b) => el("span", { class: "chip" }, `${b.reason} ×${b.factor}`));
  return el("div", { class: "explain" },
    el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "retriever"), el("th", {}, "rank"), el("th", {}, "raw score"), el("th", {}, "contribution"))), el("tbody", {}, rows)),
    boosts.length ? el("p", {}, "boosts: ", boosts) : null,
    (h.via && h.via.length) ? el("div", {}, el("p", {}, "brought in by the graph:"), pathPicture(h.via)) : null,
    el("p", { class: "muted" }, `score ${h.score.toFixed(4)}`));
}

function hitView(h, terms) {
  const expanded = el("div", { class: "expanded" });
  const explained = el("div", { class: "explained" });
  const expandBtn = el("button", { class: "plain", type: "button", "aria-expanded": "false" }, "Expand");
  expandBtn.addEventListener("click", async () => {
    if (expandBtn.getAttribute("aria-expanded") === "true") {
      expanded.replaceChildren(); expandBtn.setAttribute("aria-expanded", "false"); expandBtn.textContent = "Expand"; return;
    }
    try {
      const s = await api("/api/expand?id=" + encodeURIComponent(h.chunk_id));
      expanded.replaceChildren(el("p", { class: "muted" }, `${s.path}:${s.start_line}-${s.end_line}${s.truncated ? " (cut to the budget)" : ""}`), el("pre", { class: "section" }, s.text));
      expandBtn.setAttribute("aria-expanded", "true"); expandBtn.textContent = "Collapse";
    } catch (e) { showError(expanded, e); }
  });
  const explainBtn = el("button", { class: "plain", type: "button", "aria-expanded": "false" }, "Explain");
  explainBtn.addEventListener("click", () => {
    const open = explainBtn.getAttribute("aria-expanded") === "true";
    explained.replaceChildren(...(open ? [] : [explainView(h)]));
    explainBtn.setAttribute("aria-expanded", String(!open));
  });
  const kind = h.path.includes("/memory/") || h.path.startsWith(".cairn/") ? "memory" : "";
  return el("li", { class: "hit" },
    el("div", { class: "where" }, `${h.path}:${h.start_line}-${h.end_line}`,
      el("span", { class: "badge " + h.source, title: "source file since indexing" }, h.source),
      kind ? el("span", { class: "badge kind" }, kind) : null),
    h.breadcrumb ? el("div", { class: "crumb" }, h.breadcrumb) : null,
    el("p", { class: "snippet" }, highlight(h.snippet || h.text.slice(0, 300), terms)),
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
    const terms = q.split(/\W+/).filter((t) => t.length > 2);
    list.replaceChildren(...v.hits.map((h) => hitView(h, terms)));
    const ms = performance.now() - started;
    document.body.dataset.lastSearchMs = ms.toFixed(1);
    $("#search-meta").textContent = `${v.hits.length} of ${v.total_count} matches · ${v.retrievers} · ${v.ms.toFixed(1)} ms on the server, ${ms.toFixed(0)} ms here`;
  } catch (e) { showError(list, e); $("#search-meta").textContent = ""; }
});

// ---- memories -------------------------------------------------------------
let currentMemory = null;
async function loadMemories() {
  // Resolves once the list and the timeline are drawn.
  const f = new FormData($("#mem-filters"));
  const p = new URLSearchParams();
  for (const [k, v] of f.entries()) if (v) p.set(k, v);
  try {
    const v = await api("/api/memories?" + p);
    $("#mem-count").textContent = `(${v.total_count})`;
    $("#mem-list").replaceChildren(...v.memories.map((m) => {
      const b = el("button", { type: "button", "data-id": m.id, "aria-current": m.id === currentMemory ? "true" : "false", class: m.stale_source ? "stale" : "" },
        el("strong", {}, m.type), ` · imp ${m.importance} · ${m.created.slice(0, 10)}`,
        m.stale_source ? el("span", { class: "badge changed" }, "stale source") : null,
        m.expired ? el("span", { class: "badge deleted" }, "expired") : null,
        el("br"), m.text.length > 140 ? m.text.slice(0, 139) + "…" : m.text);
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
  const form = el("form", { class: "edit", id: "edit-form" },
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
  $("#mem-detail").replaceChildren(
    el("h2", {}, "Memory", m.stale_source ? el("span", { class: "badge changed" }, "a cited source changed") : null),
    el("dl", {}, fields.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))])),
    el("pre", { class: "memory-text" }, m.text), form, preview);
  $("#preview-edit").addEventListener("click", async () => {
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

async function loadTimeline() {
  try {
    const v = await api("/api/log?limit=50");
    $("#timeline").replaceChildren(...v.entries.map((x) => el("li", { "data-action": x.action },
      el("time", { datetime: x.time }, x.time.replace("T", " ").slice(0, 19)), ` ${x.action} `, el("code", {}, x.id), ` (${x.client}) `,
      x.action !== "undo" ? el("button", { type: "button", class: "plain undo", onclick: async () => {
        try { await api("/api/undo", { id: x.id }); loadMemories(); } catch (e) { showError($("#timeline"), e); }
      } }, "Undo") : null)));
  } catch (e) { showError($("#timeline"), e); }
}

// ---- graph ---------------------------------------------------------------
const KIND_COLOURS = { entity: "#f2c14e", doc: "#7fb3e6", code: "#9fd8a4", memory: "#e6a0c4" };
function drawNeighbourhood(n) {
  const ns = "http://www.w3.org/2000/svg";
  const W = 1000, H = 560, cx = W / 2, cy = H / 2;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "group");
  svg.setAttribute("aria-label", `neighbourhood of ${n.entity.label}`);
  const nodes = n.neighbors;
  // Neighbours on rings around the entity, grouped by relation.
  const order = [...nodes].sort((a, b) => a.rel.localeCompare(b.rel));
  const perRing = 20;
  const put = (i) => {
    const ring = Math.floor(i / perRing), inRing = Math.min(perRing, order.length - ring * perRing);
    const a = (2 * Math.PI * (i % perRing)) / inRing + ring * 0.35;
    const r = 120 + ring * 95;
    return [cx + r * Math.cos(a), cy + r * 0.8 * Math.sin(a)];
  };
  const node = (x, y, g, label, big) => {
    const c = document.createElementNS(ns, "circle");
    Object.entries({ cx: x, cy: y, r: big ? 14 : 8, fill: KIND_COLOURS[g.kind] || "#ccc", class: "node", tabindex: 0 }).forEach(([k, v]) => c.setAttribute(k, v));
    const t = document.createElementNS(ns, "title");
    t.textContent = `${g.kind}: ${g.label}${g.path ? " — " + g.path : ""}`;
    c.append(t);
    // Labels point away from the centre, so they do not lie across the edges.
    const left = !big && x < cx;
    const text = document.createElementNS(ns, "text");
    Object.entries({ x: left ? x - 11 : x + 11, y: y + 4, "text-anchor": left ? "end" : "start" }).forEach(([k, v]) => text.setAttribute(k, v));
    text.textContent = label.length > 26 ? label.slice(0, 25) + "…" : label;
    const open = () => nodeChosen(g);
    c.addEventListener("click", open);
    c.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } });
    return [c, text];
  };
  const drawn = [];
  order.forEach((nb, i) => {
    const [x, y] = put(i);
    const l = document.createElementNS(ns, "line");
    Object.entries({ x1: cx, y1: cy, x2: x, y2: y, class: "edge" }).forEach(([k, v]) => l.setAttribute(k, v));
    const lt = document.createElementNS(ns, "title");
    lt.textContent = nb.rel;
    l.append(lt);
    svg.append(l);
    // A chunk is named by the last step of its breadcrumb; the whole is its title.
    drawn.push(node(x, y, nb.node, nb.node.label.split(" > ").pop(), false));
  });
  drawn.forEach((d) => svg.append(...d));
  svg.append(...node(cx, cy, n.entity, n.entity.label, true));
  const legend = el("div", { class: "legend" }, Object.entries(KIND_COLOURS).map(([k, c]) => el("span", {}, el("i", { style: `background:${c}` }), k)));
  $("#graph").replaceChildren(legend, svg);
}

function nodeChosen(g) {
  const panel = $("#node-panel");
  panel.hidden = false;
  const kids = [el("h2", {}, g.label), el("p", { class: "muted" }, `${g.kind} · ${g.degree} links`)];
  const file = el("div", { class: "file", "aria-live": "polite" });
  if (g.path) {
    const range = g.lines ? `&start=${g.lines[0]}&end=${g.lines[1]}` : "";
    kids.push(el("p", {}, el("code", {}, `${g.path}${g.lines ? ":" + g.lines[0] + "-" + g.lines[1] : ""}`)),
      el("div", { class: "actions" },
        el("button", { type: "button", id: "open-file", onclick: async () => {
          try {
            const f = await api(`/api/file?path=${encodeURIComponent(g.path)}${range}`);
            file.replaceChildren(el("p", { class: "muted" }, `${f.path}:${f.start_line}-${f.end_line} of ${f.total_lines} lines`), el("pre", { class: "file-text" }, f.text));
          } catch (e) { showError(file, e); }
        } }, "Open the file here"),
        el("button", { type: "button", class: "plain", onclick: () => { $("#q").value = g.label; activate($("#tab-search")); $("#search-form").requestSubmit(); } }, "Search for it")));
  }
  if (g.kind === "entity") kids.push(el("button", { type: "button", class: "plain", onclick: () => { $("#entity").value = g.label; $("#graph-form").requestSubmit(); } }, "Draw its neighbourhood"));
  kids.push(file);
  panel.replaceChildren(...kids);
}

$("#graph-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const name = $("#entity").value.trim();
  try {
    const n = await api("/api/graph/neighbors?limit=80&name=" + encodeURIComponent(name));
    $("#graph-meta").textContent = `${n.entity.label}: ${n.neighbors.length} neighbours (hover or focus a node for its full name)`;
    $("#communities").replaceChildren();
    drawNeighbourhood(n);
  } catch (e) { showError($("#graph"), e); $("#graph-meta").textContent = ""; }
});

$("#communities-btn").addEventListener("click", async () => {
  try {
    const c = await api("/api/graph/communities?limit=24");
    $("#graph-meta").textContent = `${c.communities.length} communities of ${c.nodes} nodes, ${c.edges} edges (modularity ${c.modularity.toFixed(3)}, ${c.millis.toFixed(0)} ms)`;
    $("#graph").replaceChildren();
    $("#communities").replaceChildren(...c.communities.map((x) => el("article", { class: "community" },
      el("h3", {}, x.label || `community ${x.id}`), el("p", { class: "muted" }, `${x.size} nodes`),
      el("div", {}, x.entities.slice(0, 8).map((e) => el("button", { type: "button", class: "chip", onclick: () => { $("#entity").value = e; $("#graph-form").requestSubmit(); } }, e))),
      el("ul", {}, x.files.slice(0, 6).map((f) => el("li", {}, el("code", {}, f)))))));
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
      ["files", s.files], ["chunks", s.chunks], ["embedded", `${s.embedded_chunks} / ${s.chunks}`], ["model", s.model || "none (BM25 only)"],
      ["index size", bytes(s.index_bytes)], ["last index", s.last_indexed_at || "never"],
      ["watcher", s.watching ? "watching for changes" : "not watching"], ["indexing now", s.indexing ? "yes" : "no"],
      ["embedding", s.embedding_in_progress ? "computing vectors now" : "idle"],
      ["embedding queue", q ? `${q.pending} waiting of ${q.capacity}${q.per_second ? `, ${q.per_second.toFixed(1)}/s` : ""}` : "no model"],
      ["daemon", s.daemon ? `running (pid ${s.daemon.pid}), ${s.daemon.clients} client${s.daemon.clients === 1 ? "" : "s"} connected` : "not running (agents start it with cairn serve)"],
      ["stale files", `${s.stale_files}${s.stale_examples.length ? " (" + s.stale_examples.join(", ") + ")" : ""}`]]);
    const hooks = [];
    for (const [client, h] of Object.entries(s.hooks || {})) {
      hooks.push([client, `last success ${h.last_success || "never"}${h.last_error ? "; last error: " + h.last_error.message : ""}`]);
      for (const [event, i] of Object.entries(h.injected || {})) hooks.push([`${client} ${event}`, `${i.runs} runs, ${i.with_memories} with memories, ${i.tokens} tokens`]);
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

api("/api/status").then((s) => { $("#project").textContent = s.root; }).catch(() => {});
document.body.dataset.ready = "1";
