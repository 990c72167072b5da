#!/usr/bin/env python3
"""Mines (query, code) training pairs for Cairn's code retrieval model from
public sources named in sources.tsv (packages) and repos.tsv (git histories).

Three kinds of pair, each with the code side written exactly as Cairn embeds
a chunk (`Chunk::embed_text`: the breadcrumb above the text), the chunks
being Cairn's own (`cairn index` + `cairn export` of each source):

  commit     a commit's message (subject and body) -> a chunk the commit
             changed (the post-image's chunks overlapping its changed lines);
             merges, bots, release/format/typo commits, test-only commits and
             commits over 8 code files are skipped
  docstring  a definition's doc comment or docstring, its summary with the
             definition's own name masked -> the definition without it
  docsection a documentation section naming a definition (`name`) -> it

Every pair carries one hard negative: the best BM25 hit of Cairn's own index
(its FTS5 table, its tokenizer) over the same source that is not the
positive, nor another version or part of the same definition.

Never from the evaluation data: before anything is mined, every source is
checked against the projects of eval/code-qa, eval/names and
../shared/eval/swe-lite and the kinds kept out (command-line argument
libraries, HTTP clients, web frameworks, ripgrep), by name and by the content
hash of every file (a vendored copy of an eval project is caught too). The
check's findings are printed; a source that fails is refused.

  python3 train/code-model/mine.py --cairn target/release/cairn \
      --mirrors MIRRORS --out train/code-model/out

Writes out/pairs.jsonl ({"kind","source","lang","query","pos","neg","split"})
and out/manifest.json (counts per source, language and kind; licences; the
exclusion check; the pinned inputs; the SHA-256 of pairs.jsonl).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

CODE_EXT = {
    ".py": "Python", ".pyi": "Python", ".rs": "Rust", ".go": "Go", ".js": "JavaScript",
    ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript", ".ts": "TypeScript",
    ".tsx": "TypeScript", ".mts": "TypeScript", ".c": "C", ".h": "C", ".cc": "C++",
    ".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".hh": "C++", ".hxx": "C++", ".rb": "Ruby",
    ".php": "PHP", ".java": "Java", ".kt": "Kotlin", ".swift": "Swift", ".lua": "Lua",
    ".sh": "Shell", ".zig": "Zig", ".cs": "C#",
}
DOC_EXT = {".md", ".markdown", ".rst", ".txt", ".adoc"}

# Kinds of project kept out of training (they are what eval sets ask about).
EXCLUDED_KINDS = {
    "command-line argument libraries": [
        "click", "argparse", "clap", "cobra", "pflag", "commander", "yargs", "optparse",
        "docopt", "typer", "cli11", "gflags", "minimist", "structopt", "thor", "slop",
    ],
    "HTTP clients": [
        "requests", "httpx", "urllib3", "aiohttp", "reqwest", "hyper", "axios", "got",
        "node-fetch", "superagent", "guzzle", "faraday", "httparty", "curl", "resty",
    ],
    "web frameworks": [
        "flask", "django", "fastapi", "starlette", "tornado", "pyramid", "bottle",
        "express", "koa", "fastify", "nestjs", "next", "rails", "sinatra", "laravel",
        "symfony", "slim", "axum", "actix-web", "rocket", "warp", "gin", "echo", "fiber",
        "spring", "phoenix",
    ],
    "ripgrep": ["ripgrep", "rg", "grep-searcher", "grep-regex", "grep"],
}


def norm(name):
    return re.sub(r"[^a-z0-9]", "", name.lower())


def read_tsv(path):
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        rows.append(line.split("\t"))
    return rows


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw)


def git(repo, *args, text=True):
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=text,
        errors="replace" if text else None,
    ).stdout


# ---------------------------------------------------------------- exclusion


def eval_projects():
    """Names of every evaluation project, with where each comes from."""
    names = {}
    for set_dir in ["eval/code-qa", "eval/names"]:
        tsv = ROOT / set_dir / "sources.tsv"
        if tsv.exists():
            for row in read_tsv(tsv):
                for n in row[1:3]:
                    names[norm(n)] = f"{set_dir} ({row[1]})"
    swe = ROOT.parent / "shared" / "eval" / "swe-lite" / "instances.jsonl"
    if swe.exists():
        for line in swe.open():
            repo = json.loads(line)["repo"]
            for n in [repo.split("/")[1], repo.replace("/", "+")]:
                names[norm(n)] = f"swe-lite ({repo})"
    for kind, members in EXCLUDED_KINDS.items():
        for n in members:
            names.setdefault(norm(n), f"kept-out kind: {kind}")
    return names


def eval_file_hashes():
    """SHA-256 of every file of the eval corpora laid out here (code-QA,
    names): a training source holding one of them is refused."""
    hashes = {}
    for set_dir in ["eval/code-qa/corpus", "eval/names/corpus"]:
        base = ROOT / set_dir
        if not base.is_dir():
            continue
        for p in base.rglob("*"):
            if p.is_file() and p.suffix in CODE_EXT and p.stat().st_size > 200:
                hashes[hashlib.sha256(p.read_bytes()).hexdigest()] = str(p.relative_to(ROOT))
    return hashes


def check_source(name, package, names):
    for n in {name, package}:
        hit = names.get(norm(n))
        if hit:
            return f"name {n!r} is {hit}"
    return None


def check_files(files, eval_hashes):
    """files: iterable of (relpath, bytes). The eval files a source holds."""
    found = []
    for rel, data in files:
        h = hashlib.sha256(data).hexdigest()
        if h in eval_hashes:
            found.append(f"{rel} = {eval_hashes[h]}")
    return found


# ------------------------------------------------------------- cairn chunks


def cairn_env():
    env = dict(os.environ)
    env["CAIRN_NO_DAEMON"] = "1"
    return env


def index_and_export(cairn, folder):
    """Cairn's chunks of `folder` (BM25 only: no model), and its index file."""
    sets = ["--set", "embed.model=none", "--set", "history.enabled=false"]
    # A git repository of its own makes the folder its own project: without
    # it, -C would open the git repository above (this one).
    if not (folder / ".git").exists():
        run(["git", "init", "-q", str(folder)])
    run([cairn, "-q", "-C", str(folder), *sets, "index"], env=cairn_env())
    out = folder / ".cairn" / "export.jsonl"
    run([cairn, "-q", "-C", str(folder), *sets, "export", "-o", str(out)], env=cairn_env())
    docs = []
    for line in out.open():
        row = json.loads(line)
        if "path" in row and "chunks" in row:
            docs.append(row)
    return docs, folder / ".cairn" / "index.sqlite"


def embed_text(chunk):
    """Chunk::embed_text, as cairn-core writes it."""
    hp = chunk["heading_path"]
    first = (chunk["text"].splitlines() or [""])[0].lstrip()
    context = hp[:-1] if first.startswith("#") and hp else hp
    if not context:
        return chunk["text"]
    return " > ".join(context) + "\n\n" + chunk["text"]


class Bm25:
    """Cairn's FTS5 table of one source's index, queried as Cairn's BM25 does
    (the query's words OR'ed, ranked by bm25())."""

    def __init__(self, db):
        self.db = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        self.rows = {}
        for cid, path, hp, text in self.db.execute(
            "SELECT c.id, d.path, c.heading_path, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id"
        ):
            self.rows[cid] = (path, json.loads(hp), text)

    def search(self, query, k=10):
        words = list(dict.fromkeys(w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", query)))[:48]
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', "") + '"' for w in words)
        try:
            hits = self.db.execute(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
                (expr, k),
            ).fetchall()
        except sqlite3.Error:
            return []
        return [self.rows[r[0]] for r in hits if r[0] in self.rows]


# ------------------------------------------------------------ docstring kind

PY_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")
COMMENT_LINE = re.compile(r"^\s*(///?!?|//|#(?!\[|!)|--|\*|/\*\*?|\*/)")


def def_name(chunk):
    """The name a definition chunk defines (its breadcrumb's last part)."""
    hp = chunk["heading_path"]
    if len(hp) < 2:
        return None
    m = re.match(
        r"^(?:(?:pub|async|def|class|fn|func|function|static|public|private|protected|impl)\s+)*([A-Za-z_][A-Za-z0-9_]*)",
        hp[-1].strip(),
    )
    return m.group(1) if m else None


def summary(doc):
    """The first paragraph of a doc comment, one line, marks stripped."""
    lines = []
    for raw in doc.splitlines():
        s = raw.strip()
        s = re.sub(r"^(///?!?|//!?|/\*\*?|\*/|\*|#|--)\s?", "", s).strip()
        s = s.removesuffix("*/").strip()
        if not s:
            if lines:
                break
            continue
        if s.startswith("@") or s.startswith(":param") or s.startswith("Args:"):
            break
        lines.append(s)
    text = " ".join(lines)
    return re.sub(r"\s+", " ", text).strip()


def mask(text, name):
    parts = [name] + ([re.sub(r"^_+", "", name)] if name.startswith("_") else [])
    for p in parts:
        if len(p) >= 2:
            text = re.sub(r"(?<![A-Za-z0-9_])`?" + re.escape(p) + r"`?(?![A-Za-z0-9_])", "it", text)
    return text


def split_doc(chunk, lang):
    """(doc comment, the chunk without it) of a definition chunk, or None."""
    text = chunk["text"]
    lines = text.splitlines()
    if lang == "Python":
        for i, line in enumerate(lines[:6]):
            if PY_DEF.match(line):
                j = i + 1
                # a multi-line signature
                while j < len(lines) and not lines[j - 1].rstrip().endswith(":") and j < i + 12:
                    j += 1
                if j >= len(lines):
                    return None
                m = re.match(r'^\s*[rRuU]?("""|\'\'\')', lines[j])
                if not m:
                    return None
                q = m.group(1)
                rest = lines[j].split(q, 1)[1]
                if q in rest:
                    end, doc = j, rest.split(q, 1)[0]
                else:
                    end, buf = j, [rest]
                    while end + 1 < len(lines):
                        end += 1
                        if q in lines[end]:
                            buf.append(lines[end].split(q, 1)[0])
                            break
                        buf.append(lines[end])
                    else:
                        return None
                    doc = "\n".join(buf)
                body = "\n".join(lines[:j] + lines[end + 1 :])
                return doc, body
        return None
    # Other languages: the comment block the chunk starts with.
    i = 0
    while i < len(lines) and (COMMENT_LINE.match(lines[i]) or (i > 0 and lines[i].strip() == "" and i + 1 < len(lines) and COMMENT_LINE.match(lines[i + 1]))):
        i += 1
    if i == 0 or i >= len(lines):
        return None
    return "\n".join(lines[:i]), "\n".join(lines[i:])


# ------------------------------------------------------------------ commits

SKIP_SUBJECT = re.compile(
    r"^(merge|revert\b|bump|release|prepare|version|v?\d+\.\d+|changelog|update changelog|"
    r"typo|fix typo|format|reformat|lint|style|pre-commit|\[pre-commit|docs?:|doc\b|readme|ci\b|ci:|chore)",
    re.I,
)
BOT = re.compile(r"\[bot\]|dependabot|renovate|pre-commit-ci|github-actions|allcontributors", re.I)
TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|cc|change-id|acked-by):", re.I)


def is_test_path(p):
    low = p.lower()
    return bool(re.search(r"(^|/)(tests?|testing|spec|__tests__|testdata|fixtures?)(/|$)", low)) or bool(
        re.search(r"(^|/)test_[^/]*$|_test\.[a-z]+$|\.test\.[a-z]+$|_spec\.rb$", low)
    )


def commit_query(subject, body):
    body_lines = [l for l in body.splitlines() if not TRAILER.match(l.strip())]
    body = "\n".join(body_lines).strip()
    q = subject.strip()
    q = re.sub(r"\s*\(#\d+\)\s*$", "", q)
    if body:
        q += "\n\n" + body
    return q[:1200]


def changed_lines(repo, sha, path):
    """Post-image line numbers a commit changed in `path` (a pure deletion:
    the line it happened at)."""
    diff = git(repo, "diff", "-U0", "--no-color", f"{sha}^", sha, "--", path)
    lines = set()
    for m in re.finditer(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", diff, re.M):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        if count == 0:
            lines.add(max(start, 1))
        else:
            lines.update(range(start, start + count))
    return lines


def mine_commits(name, repo, head, cairn, work, max_commits, pairs, stats):
    log = git(repo, "log", "--no-merges", f"-n{max_commits * 4}", "--format=%H%x00%an%x00%ae%x00%s%x00%b%x1e", head)
    commits = []
    for rec in log.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, an, ae, subject, body = (rec.split("\x00") + [""] * 5)[:5]
        if (
            BOT.search(an)
            or BOT.search(ae)
            or SKIP_SUBJECT.match(subject.strip())
            or re.search(r"\btypos?\b|\bformatting\b|\bwhitespace\b", subject, re.I)
            or len(subject) < 12
        ):
            stats[f"{name}: commits skipped (bot, release, format, short)"] += 1
            continue
        commits.append((sha, subject, body))
    chosen = []
    for sha, subject, body in commits:
        if len(chosen) >= max_commits:
            break
        try:
            files = git(repo, "diff-tree", "--no-commit-id", "-r", "--name-only", "--diff-filter=AM", sha).split("\n")
        except subprocess.CalledProcessError:
            continue
        code = [f for f in files if f and Path(f).suffix in CODE_EXT]
        if not code or len(code) > 8:
            stats[f"{name}: commits skipped (no code, or over 8 code files)"] += 1
            continue
        src = [f for f in code if not is_test_path(f)]
        if not src:
            stats[f"{name}: commits skipped (tests only)"] += 1
            continue
        chosen.append((sha, commit_query(subject, body), src[:3]))
    # One folder per batch, a commit's files under its short sha.
    batch_size = 400
    for b in range(0, len(chosen), batch_size):
        batch = chosen[b : b + batch_size]
        folder = work / f"{name}-commits-{b // batch_size}"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        wanted = {}
        for sha, query, paths in batch:
            for p in paths:
                try:
                    data = git(repo, "show", f"{sha}:{p}", text=False)
                except subprocess.CalledProcessError:
                    continue
                if len(data) > 400_000 or b"\0" in data[:8000]:
                    continue
                dest = folder / sha[:12] / p
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
                wanted[f"{sha[:12]}/{p}"] = (query, changed_lines(repo, sha, p))
        docs, db = index_and_export(cairn, folder)
        bm25 = Bm25(db)
        for doc in docs:
            if doc["path"] not in wanted:
                continue
            query, changed = wanted[doc["path"]]
            prefix, real = doc["path"].split("/", 1)
            scored = []
            for c in doc["chunks"]:
                overlap = sum(1 for l in changed if c["start_line"] <= l <= c["end_line"])
                if overlap:
                    scored.append((overlap, c))
            scored.sort(key=lambda x: -x[0])
            for _, c in scored[:2]:
                c = dict(c, heading_path=[real] + c["heading_path"][1:])
                pos = embed_text(c)
                key = (real, tuple(c["heading_path"][1:]))
                neg = None
                for path, hp, text in bm25.search(query, 12):
                    p2, r2 = path.split("/", 1) if "/" in path else ("", path)
                    if p2 == prefix and r2 == real:
                        continue  # the same commit's file
                    if (r2, tuple(hp[1:])) == key:
                        continue  # the same definition at another commit
                    neg = embed_text({"heading_path": [r2] + hp[1:], "text": text})
                    break
                lang = CODE_EXT[Path(real).suffix]
                pairs.append({"kind": "commit", "source": name, "lang": lang, "query": query, "pos": pos, "neg": neg})
        shutil.rmtree(folder)


# ---------------------------------------------------------- package sources


def mine_tree(name, folder, cairn, pairs, stats, per_source):
    docs, db = index_and_export(cairn, folder)
    bm25 = Bm25(db)
    defs = defaultdict(list)
    found = []
    for doc in docs:
        suffix = Path(doc["path"]).suffix
        lang = CODE_EXT.get(suffix)
        if not lang or is_test_path(doc["path"]):
            continue
        for c in doc["chunks"]:
            n = def_name(c)
            if not n:
                continue
            defs[n].append(c)
            got = split_doc(c, lang)
            if not got:
                continue
            doc_text, body = got
            s = summary(doc_text)
            if len(s.split()) < 4 or len(body.strip()) < 40 or re.search(r"license|copyright|SPDX", s, re.I):
                continue
            q = mask(s, n)[:600]
            pos = embed_text(dict(c, text=body))
            found.append((q, pos, c, lang, n))
    for q, pos, c, lang, n in found[:per_source]:
        neg = None
        for path, hp, text in bm25.search(q, 12):
            if path == c["heading_path"][0] and hp[1:] == c["heading_path"][1:]:
                continue
            if hp and def_name({"heading_path": hp}) == n:
                continue
            # The negative loses its doc comment as the positive did: with
            # it, "has a doc comment" alone would tell them apart, and the
            # model would learn to push documented code away.
            neg_lang = CODE_EXT.get(Path(path).suffix)
            stripped = split_doc({"heading_path": hp, "text": text}, neg_lang) if neg_lang else None
            neg = embed_text({"heading_path": hp, "text": stripped[1] if stripped else text})
            break
        pairs.append({"kind": "docstring", "source": name, "lang": lang, "query": q, "pos": pos, "neg": neg})
    # doc sections that name exactly one definition of the project
    unique = {n: cs[0] for n, cs in defs.items() if len(cs) == 1 and len(n) >= 5}
    n_sections = 0
    for doc in docs:
        if Path(doc["path"]).suffix not in DOC_EXT:
            continue
        for c in doc["chunks"]:
            named = {m for m in re.findall(r"`+([A-Za-z_][A-Za-z0-9_.:]*)(?:\(\))?`+", c["text"])}
            hits = {m.split(".")[-1].split(":")[-1] for m in named} & unique.keys()
            if len(hits) != 1 or len(c["text"]) < 120 or n_sections >= per_source // 4:
                continue
            n = hits.pop()
            d = unique[n]
            lang = CODE_EXT.get(Path(d["heading_path"][0]).suffix, "?")
            q = embed_text(c)[:1200]
            neg = None
            for path, hp, text in bm25.search(c["text"], 12):
                if hp[1:] == d["heading_path"][1:] or Path(path).suffix in DOC_EXT:
                    continue
                neg = embed_text({"heading_path": hp, "text": text})
                break
            pairs.append({"kind": "docsection", "source": name, "lang": lang, "query": q, "pos": embed_text(d), "neg": neg})
            n_sections += 1


def head_files(repo, head):
    """(path, bytes) of every code file of the tree at `head`, read through
    one `git cat-file --batch` rather than a process per file."""
    listing = git(repo, "ls-tree", "-r", "-z", "--name-only", head).split("\0")
    paths = [p for p in listing if p and "\n" not in p and Path(p).suffix in CODE_EXT]
    proc = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="".join(f"{head}:{p}\n" for p in paths).encode(), capture_output=True, check=True,
    )
    out, at = proc.stdout, 0
    for p in paths:
        nl = out.index(b"\n", at)
        header = out[at:nl].split()
        at = nl + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        yield p, out[at : at + size]
        at += size + 1


def tree_files(folder):
    for p in folder.rglob("*"):
        if p.is_file() and p.suffix in CODE_EXT and p.stat().st_size > 200 and ".cairn" not in p.parts:
            yield str(p.relative_to(folder)), p.read_bytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--mirrors", help="folder of the search tool's mirrors (OWNER+NAME/repo)")
    ap.add_argument("--history", default=str(ROOT.parent / "shared" / "corpora" / "history"))
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--max-commits", type=int, default=1500, help="per repository")
    ap.add_argument("--per-source", type=int, default=1500, help="docstring pairs per package")
    ap.add_argument("--only", help="comma-separated sources to mine (default: all)")
    ap.add_argument("--probe", help="comma-separated names: print what the exclusion check says of each, and stop")
    ap.add_argument("--check-only", action="store_true", help="run the exclusion check on every source, mine nothing")
    ap.add_argument("--again", action="store_true", help="mine every source again (default: reuse out/sources/NAME.jsonl)")
    args = ap.parse_args()
    cairn = str(Path(args.cairn).resolve())
    out = Path(args.out)
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None

    names = eval_projects()
    eval_hashes = eval_file_hashes()
    print(f"exclusion check: {len(names)} eval project and kept-out names, {len(eval_hashes)} eval code files by hash", flush=True)
    if args.probe:
        for n in args.probe.split(","):
            print(f"probe {n}: {check_source(n, n, names) or 'ok'}")
        return
    check = {}
    pairs = []
    done_dir = out / "sources"
    done_dir.mkdir(parents=True, exist_ok=True)

    def reuse(name):
        """The pairs an earlier run mined from `name` (a source's pairs are
        written once it is done, so a stopped run loses at most one)."""
        f = done_dir / f"{name}.jsonl"
        if args.again or not f.exists():
            return False
        got = [json.loads(l) for l in f.open()]
        pairs.extend(got)
        print(f"reused {name}: {len(got)} pairs from {f}", flush=True)
        return True

    def keep(name, n0):
        tmp = done_dir / f"{name}.jsonl.tmp"
        with tmp.open("w") as f:
            for p in pairs[n0:]:
                f.write(json.dumps(p, ensure_ascii=False) + "\n")
        tmp.replace(done_dir / f"{name}.jsonl")
    stats = Counter()
    licences = {}

    for row in read_tsv(HERE / "repos.tsv"):
        name, where, head, licence = row[:4]
        if only and name not in only:
            continue
        if where.startswith("bundle:"):
            repo = work / f"{name}.git"
            if not repo.exists():
                run(["git", "clone", "--bare", "-q", str(Path(args.history) / where[7:]), str(repo)])
            package = where[7:].removesuffix(".bundle")
        else:
            slug = where.removeprefix("github:")
            package = slug.split("/")[1]
            repo = Path(args.mirrors or "") / slug.replace("/", "+") / "repo"
            if not repo.exists():
                sys.exit(f"mine: {repo} is not there: fetch github:{slug} first")
        bad = check_source(name, package, names) or check_source(where, where.split("/")[-1], names)
        if not bad:
            hits = check_files(head_files(repo, head), eval_hashes)
            bad = f"holds eval files: {hits[:3]}" if hits else None
        check[name] = bad or "ok"
        print(f"check {name} ({where}): {check[name]}", flush=True)
        if bad or args.check_only:
            continue
        licences[name] = licence
        if reuse(name):
            continue
        n_start = len(pairs)
        n0 = len(pairs)
        mine_commits(name, repo, head, cairn, work, args.max_commits, pairs, stats)
        print(f"mined {name}: {len(pairs) - n0} commit pairs", flush=True)
        # the head tree's docstrings too
        tree = work / f"{name}-head"
        if tree.exists():
            shutil.rmtree(tree)
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(repo), "archive", head], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        n0 = len(pairs)
        mine_tree(name, tree, cairn, pairs, stats, args.per_source)
        print(f"mined {name}: {len(pairs) - n0} docstring/docsection pairs (head)", flush=True)
        shutil.rmtree(tree)
        keep(name, n_start)

    corpus = HERE / "corpus"
    for row in read_tsv(HERE / "sources.tsv"):
        kind, name, package, version = row[:4]
        if only and name not in only:
            continue
        folder = corpus / name
        if not folder.is_dir():
            sys.exit(f"mine: {folder} is not there: run eval/fetch-sources train/code-model")
        bad = check_source(name, package, names)
        if not bad:
            hits = check_files(tree_files(folder), eval_hashes)
            bad = f"holds eval files: {hits[:3]}" if hits else None
        check[name] = bad or "ok"
        print(f"check {name} ({kind} {package} {version}): {check[name]}", flush=True)
        if bad or args.check_only:
            continue
        lic = [p.name for p in folder.glob("*") if re.match(r"(?i)(licen[cs]e|copying|copyright)", p.name)]
        licences[name] = f"{kind} {package} {version}: " + (", ".join(sorted(lic)) or "see the package's metadata")
        if reuse(name):
            continue
        tmp = work / name
        if tmp.exists():
            shutil.rmtree(tmp)
        shutil.copytree(folder, tmp, ignore=shutil.ignore_patterns(".cairn"))
        n0 = len(pairs)
        mine_tree(name, tmp, cairn, pairs, stats, args.per_source)
        print(f"mined {name}: {len(pairs) - n0} pairs", flush=True)
        shutil.rmtree(tmp)
        keep(name, n0)

    if args.check_only:
        refused = [n for n, v in check.items() if v != "ok"]
        print(f"checked {len(check)} sources: {len(check) - len(refused)} ok, {len(refused)} refused {refused}")
        return
    # deduplicate; a fixed held-out slice (4 % by the query's hash) for early stopping
    seen = set()
    kept = []
    for p in pairs:
        key = hashlib.sha256((p["query"] + "\0" + p["pos"]).encode()).hexdigest()
        if key in seen or p["query"].strip() == "" or p["pos"].strip() == "":
            stats["duplicates or empty dropped"] += 1
            continue
        seen.add(key)
        qh = int(hashlib.sha256(p["query"].encode()).hexdigest()[:8], 16)
        p["split"] = "heldout" if qh % 25 == 0 else "train"
        kept.append(p)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "pairs.jsonl").open("w") as f:
        for p in kept:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    digest = hashlib.sha256((out / "pairs.jsonl").read_bytes()).hexdigest()
    table = Counter((p["source"], p["lang"], p["kind"]) for p in kept)
    by_kind = Counter(p["kind"] for p in kept)
    by_lang = Counter(p["lang"] for p in kept)
    manifest = {
        "pairs": len(kept),
        "sha256": digest,
        "by_kind": by_kind,
        "by_language": by_lang,
        "by_source_language_kind": [[s, l, k, n] for (s, l, k), n in sorted(table.items())],
        "heldout": sum(p["split"] == "heldout" for p in kept),
        "with_hard_negative": sum(p["neg"] is not None for p in kept),
        "exclusion_check": check,
        "licences": licences,
        "skipped": stats,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"pairs: {len(kept)} ({dict(by_kind)}), held out {manifest['heldout']}, sha256 {digest}")
    for lang, n in by_lang.most_common():
        print(f"  {lang}: {n}")
    for k, v in stats.items():
        print(f"  {k}: {v}")


if __name__ == "__main__":
    main()
