// Cairn's page: plain JavaScript, no library, no build step. It reads the
// JSON API under /api (see cairn-mcp/src/ui.rs) with the page's token: the
// one in the address `cairn ui` prints (`?token=…`; `#token=…`, the bearer
// token of `serve --http --token`, works too), kept for this tab and taken
// out of the address bar. Every API call sends it (`X-Cairn-Token`, and as
// the bearer token); without it the API answers 403.
"use strict";

const token = (() => {
  const given = new URLSearchParams(location.search).get("token")
    || new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) {
    sessionStorage.setItem("cairn-token", given);
    history.replaceState(null, "", location.pathname);
  }
  return sessionStorage.getItem("cairn-token");
})();

async function api(path, body) {
  const headers = {};
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
      expanded.replaceChildren(el("p", { class: "muted" }, `${s.path}:${s.start_line}-${s.end_line}${s.truncated ? " (cut to the budget)" : ""}`), el("pre", { class: "section" }, s.text));
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
  return el("li", { class: "hit" },
    el("div", { class: "where" }, `${h.path}:${h.start_line}-${h.end_line}`,
      el("span", { class: "badge " + h.source, title: "source file since indexing" }, h.source),
      kind ? el("span", { class: "badge kind" }, kind) : null),
    h.breadcrumb ? el("div", { class: "crumb" }, h.breadcrumb) : null,
    el("p", { class: "snippet" }, highlight((h.snippet || h.text.slice(0, 300)).replace(/^\s*\n|\s+$/g, ""), terms)),
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
    list.replaceChildren(...v.hits.map((h) => hitView(h, terms, v.hits)));
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
  $("#mem-detail").replaceChildren(
    el("h2", {}, "Memory", m.stale_source ? el("span", { class: "badge changed" }, "a cited source changed") : null),
    el("dl", {}, fields.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))])),
    el("pre", { class: "memory-text" }, m.text), form, preview);
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
        state === "undoable" ? el("button", { type: "button", class: "plain undo", "aria-label": `Undo the ${x.action} of ${x.id} at ${when(x.time)}`, onclick: () => undoEntry(x) }, "Undo")
          : state === "undone" ? el("span", { class: "muted" }, "(undone)") : null);
    }));
  } catch (e) { showError($("#timeline"), e); }
}

// ---- graph ---------------------------------------------------------------
const KIND_COLOURS = { entity: "#f2c14e", doc: "#7fb3e6", code: "#9fd8a4", memory: "#e6a0c4" };
function drawNeighbourhood(n) {
  const W = 1000, H = 560, cx = W / 2, cy = H / 2;
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "group", "aria-label": `neighbourhood of ${n.entity.label}` });
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
    const c = svgEl("circle", { cx: x, cy: y, r: big ? 14 : 8, fill: KIND_COLOURS[g.kind] || "#ccc", class: "node", tabindex: 0 });
    const t = svgEl("title", {});
    t.textContent = `${g.kind}: ${g.label}${g.path ? " — " + g.path : ""}`;
    c.append(t);
    // Labels point away from the centre, so they do not lie across the
    // edges; the centre's sits above it, on a halo, clear of every edge.
    const left = !big && x < cx;
    const text = svgEl("text", big ? { x, y: y - 22, "text-anchor": "middle", class: "centre-label" }
      : { x: left ? x - 11 : x + 11, y: y + 4, "text-anchor": left ? "end" : "start" });
    text.textContent = label.length > 26 ? label.slice(0, 25) + "…" : label;
    const open = () => nodeChosen(g);
    c.addEventListener("click", open);
    c.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } });
    return [c, text];
  };
  const drawn = [];
  order.forEach((nb, i) => {
    const [x, y] = put(i);
    const l = svgEl("line", { x1: cx, y1: cy, x2: x, y2: y, class: "edge" });
    const lt = svgEl("title", {});
    lt.textContent = nb.rel;
    l.append(lt);
    svg.append(l);
    // A chunk is named by the last step of its breadcrumb; the whole is its title.
    drawn.push(node(x, y, nb.node, nb.node.label.split(" > ").pop(), false));
  });
  drawn.forEach((d) => svg.append(...d));
  svg.append(...node(cx, cy, n.entity, n.entity.label, true));
  // Colours set through the DOM, not a `style` attribute, which the page's
  // Content-Security-Policy (style-src 'self') would refuse.
  const swatch = (c) => { const i = el("i"); i.style.background = c; return i; };
  const legend = el("div", { class: "legend" }, Object.entries(KIND_COLOURS).map(([k, c]) => el("span", {}, swatch(c), k)));
  $("#graph").replaceChildren(legend, svg);
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
    $("#node-panel").hidden = true;
    drawNeighbourhood(n);
  } catch (e) { showError($("#graph"), e); $("#graph-meta").textContent = ""; }
});

$("#communities-btn").addEventListener("click", async () => {
  try {
    const c = await api("/api/graph/communities?limit=24");
    $("#graph-meta").textContent = `${c.communities.length} communities of ${c.nodes} nodes, ${c.edges} edges (modularity ${c.modularity.toFixed(3)}, ${c.millis.toFixed(0)} ms)`;
    $("#graph").replaceChildren();
    $("#node-panel").hidden = true;
    $("#communities").replaceChildren(...c.communities.map((x) => el("article", { class: "community" },
      el("h3", {}, x.label || `community ${x.id}`), el("p", { class: "muted" }, `${x.size} nodes`),
      el("div", {}, x.entities.slice(0, 8).map((e) => el("button", { type: "button", class: "chip", onclick: () => { $("#entity").value = e; $("#graph-form").requestSubmit(); } }, e))),
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
