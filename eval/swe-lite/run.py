#!/usr/bin/env python3
"""File localization on SWE-bench Lite: does `cairn search`, given an issue's
problem statement, put the file its fix changed among the first k files?

For each instance of the chosen repositories the repository is checked out
at the instance's base commit in one working folder per repository
(WORK/<owner>+<name>, a `git clone --shared` of the mirror), indexed there
with history off, and searched with the problem statement as the query:

    cairn --set history.enabled=false search --json -n 50 -- STATEMENT

A repository's instances are walked in the order of their base commits'
dates, so each `cairn index` is incremental over the previous checkout (git
rewrites only the files that changed; the embedding cache carries the
chunks that did not). Between instances the folder is cleaned with `git
clean -fdx` except `.cairn/`, the index.

The hits' distinct files, in order, are the ranking; hits under `.cairn/`
(memories, history) never count as files. Scored per instance: the rank of
the first gold file (SWE-bench's `gold_files`), then per repository, per
half and overall: Acc@1/3/5/10 (the share of instances with a gold file
among the first k files) and MRR@10. Four modes, each a separate one-shot
`cairn search` (timed, process start included, as an agent calling the CLI
sees it): default (hybrid + graph), `--no-graph`, `--mode bm25`, `--mode
vector`.

Halves: an instance is in the tuning half when the first byte of the
sha256 of its instance_id is even, else in the test half. Choose on the
tuning half; report both.

    python3 eval/swe-lite/run.py --mirrors DIR               # every repository found
    python3 eval/swe-lite/run.py --mirrors DIR --repos requests,flask --limit 2
    python3 eval/swe-lite/run.py --mirror psf/requests=PATH --json out.json
    python3 eval/swe-lite/run.py --report out.json [more.json]  # tables of saved runs

A repository's mirror is --mirror OWNER/NAME=GIT_DIR, else looked up under
--mirrors DIR (or $SWE_LITE_MIRRORS) as DIR/OWNER+NAME/repo, DIR/OWNER+NAME,
DIR/NAME.git or DIR/NAME; a repository without one is skipped and said so.
The instances are --instances FILE, else $SWE_LITE_INSTANCES, else
../shared/eval/swe-lite/instances.jsonl beside the repository. The saved
run (--json) holds ids, ranks, files, timings and index reports, never the
problem statements. With --resume the instances already in it are not run
again.

Standard library only. The binary is --cairn, else $CAIRN_BIN, else `cairn`
on PATH. Run it under `nice` on a shared machine; cairn inherits it.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODES = {
    "default": [],
    "nograph": ["--no-graph"],
    "bm25": ["--mode", "bm25"],
    "vector": ["--mode", "vector"],
    "nonames": ["--no-names"],
}
KS = (1, 3, 5, 10)
HISTORY_OFF = ["--set", "history.enabled=false"]
# Folders a checkout leaves out, per repository. Two astropy base commits
# (astropy-14365, astropy-14995) hold a large IERS data file the mirror
# lacks; the folder holds data tables only (nothing Cairn indexes), and it is
# left out at every astropy commit so that all of them are indexed alike.
SPARSE_EXCLUDE = {"astropy/astropy": ["/astropy/utils/iers/data/"]}


def half_of(instance_id):
    return "tune" if hashlib.sha256(instance_id.encode()).digest()[0] % 2 == 0 else "test"


def load_instances(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def find_mirror(repo, explicit, mirrors_dir):
    if repo in explicit:
        return explicit[repo]
    if not mirrors_dir:
        return None
    owner, name = repo.split("/", 1)
    for cand in (
        os.path.join(mirrors_dir, f"{owner}+{name}", "repo"),
        os.path.join(mirrors_dir, f"{owner}+{name}"),
        os.path.join(mirrors_dir, f"{name}.git"),
        os.path.join(mirrors_dir, name),
    ):
        if os.path.isdir(cand) and git_ok(["--git-dir", cand, "rev-parse", "--git-dir"]):
            return cand
    return None


def git(args, cwd=None, check=True):
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} (in {cwd or '.'}): {p.stderr.strip()}")
    return p


def git_ok(args, cwd=None):
    return git(args, cwd=cwd, check=False).returncode == 0


def prepare_folder(repo, mirror, work):
    """One working folder per repository: a shared clone of the mirror, no
    files checked out yet (the index, .cairn/, survives between runs)."""
    folder = os.path.join(work, repo.replace("/", "+"))
    if not os.path.isdir(os.path.join(folder, ".git")):
        os.makedirs(work, exist_ok=True)
        git(["clone", "-q", "--shared", "--no-checkout", mirror, folder])
    excl = SPARSE_EXCLUDE.get(repo)
    if excl:
        git(["sparse-checkout", "set", "--no-cone", "/*", *("!" + e for e in excl)], cwd=folder)
    return folder


def commit_time(folder, commit):
    p = git(["show", "-s", "--format=%ct", commit], cwd=folder, check=False)
    return int(p.stdout.strip()) if p.returncode == 0 and p.stdout.strip() else None


def checkout(folder, commit):
    # A run killed inside a checkout leaves git's index lock behind, and
    # every later checkout of the folder fails on it (15 sphinx instances
    # once): one this run did not make, older than a minute, is removed.
    lock = os.path.join(folder, ".git", "index.lock")
    if os.path.exists(lock) and time.time() - os.path.getmtime(lock) > 60:
        print(f"  removing a stale {lock}", file=sys.stderr)
        os.remove(lock)
    git(["checkout", "-q", "-f", "--detach", commit], cwd=folder)
    git(["clean", "-q", "-fdx", "-e", ".cairn"], cwd=folder)


def run_cairn(cairn, args, cwd):
    t = time.monotonic()
    p = subprocess.run([cairn, *args], cwd=cwd, capture_output=True, text=True)
    return p, time.monotonic() - t


def index(cairn, folder):
    p, secs = run_cairn(cairn, ["-C", folder, *HISTORY_OFF, "index", "--json", "-q"], folder)
    if p.returncode != 0:
        raise RuntimeError(f"cairn index in {folder} failed: {p.stderr.strip()[-2000:]}")
    report = json.loads(p.stdout)
    keep = ("files_seen", "files_added", "files_changed", "files_deleted", "chunks_written",
            "chunks_embedded", "embed_cache_hits", "user_cache_hits")
    out = {k: report.get(k) for k in keep}
    out["seconds"] = round(secs, 2)
    return out


def files_of(hits):
    """Distinct files in the order of their first hit; memories and history
    (under .cairn/, or of those kinds) are not files of the repository."""
    seen, files = set(), []
    for h in hits:
        path = h.get("path") or ""
        if path.startswith(".cairn/") or h.get("kind") in ("memory", "history"):
            continue
        if path not in seen:
            seen.add(path)
            files.append(path)
    return files


def search(cairn, folder, query, mode, limit):
    args = ["-C", folder, *HISTORY_OFF, "search", "--json", "-q", "-n", str(limit),
            *MODES[mode], "--", query]
    p, secs = run_cairn(cairn, args, folder)
    if p.returncode != 0:
        raise RuntimeError(f"cairn search ({mode}) in {folder} failed: {p.stderr.strip()[-2000:]}")
    hits = json.loads(p.stdout)
    scored = [[h.get("path") or "", round(h.get("score") or 0.0, 5)] for h in hits
              if not (h.get("path") or "").startswith(".cairn/")
              and h.get("kind") not in ("memory", "history")]
    return files_of(hits), secs, scored


def search_scored(cairn, folder, query, mode, limit, gold, keep_hits=False):
    """One mode's search of one instance, tried twice: a search can run past
    Cairn's time budget on a loaded machine. A search that fails both times
    is kept as a miss with its error, and the tables count those."""
    err = None
    for _ in range(2):
        try:
            files, secs, scored = search(cairn, folder, query, mode, limit)
            out = {"rank": first_rank(files, gold), "seconds": round(secs, 3), "files": files[:10]}
            if keep_hits:
                # Every hit's file and score, for studying file rankings
                # built from them (no text of the repository).
                out["hits"] = scored
            return out
        except (RuntimeError, ValueError) as e:
            err = str(e)
            print(f"  {mode}: {err}", file=sys.stderr)
    return {"rank": None, "seconds": None, "files": [], "error": err}


def first_rank(files, gold):
    for i, f in enumerate(files, 1):
        if f in gold:
            return i
    return None


def summarize(rows):
    n = len(rows)
    if not n:
        return None
    out = {"n": n}
    for k in KS:
        out[f"acc@{k}"] = sum(1 for r in rows if r is not None and r <= k) / n
    out["mrr@10"] = sum(1.0 / r for r in rows if r is not None and r <= 10) / n
    return out


def pct(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    i = min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))
    return v[i]


def tables(results, modes, out=sys.stdout):
    repos = sorted({r["repo"] for r in results})
    groups = [(repo, [r for r in results if r["repo"] == repo]) for repo in repos]
    groups += [(f"half: {h}", [r for r in results if r["half"] == h]) for h in ("tune", "test")]
    groups.append(("all", results))
    summary = {}
    for mode in modes:
        print(f"\n## {mode}\n", file=out)
        print("| group | n | Acc@1 | Acc@3 | Acc@5 | Acc@10 | MRR@10 | failed |", file=out)
        print("|---|---|---|---|---|---|---|---|", file=out)
        summary[mode] = {}
        for name, rows in groups:
            ranks = [r["modes"][mode]["rank"] for r in rows if mode in r["modes"]]
            s = summarize(ranks)
            if not s:
                continue
            # Searches that failed twice (kept as misses).
            s["failed"] = sum(1 for r in rows if r["modes"].get(mode, {}).get("error"))
            summary[mode][name] = s
            print(f"| {name} | {s['n']} | " + " | ".join(f"{s[f'acc@{k}']:.3f}" for k in KS)
                  + f" | {s['mrr@10']:.3f} | {s['failed']} |", file=out)
    print("\n## search seconds (one-shot CLI, process start included)\n", file=out)
    print("| mode | n | p50 | p95 |", file=out)
    print("|---|---|---|---|", file=out)
    for mode in modes:
        secs = [r["modes"][mode]["seconds"] for r in results
                if r["modes"].get(mode, {}).get("seconds") is not None]
        summary.setdefault("seconds", {})[mode] = {"p50": pct(secs, 0.5), "p95": pct(secs, 0.95)}
        print(f"| {mode} | {len(secs)} | {pct(secs, 0.5):.2f} | {pct(secs, 0.95):.2f} |", file=out)
    idx = [r["index"]["seconds"] for r in results if r.get("index")]
    if idx:
        print(f"\nindex seconds per instance (incremental after a repository's first): "
              f"p50 {pct(idx, 0.5):.1f}, p95 {pct(idx, 0.95):.1f}, total {sum(idx):.0f}", file=out)
    return summary


def save(path, results, skipped, modes, summary=None):
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"modes": modes, "results": results, "skipped": skipped, "summary": summary},
                  f, indent=1)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", default=os.environ.get("SWE_LITE_INSTANCES") or os.path.join(
        ROOT, "..", "shared", "eval", "swe-lite", "instances.jsonl"))
    ap.add_argument("--mirrors", default=os.environ.get("SWE_LITE_MIRRORS"),
                    help="folder holding the repositories' git mirrors")
    ap.add_argument("--mirror", action="append", default=[], metavar="OWNER/NAME=GIT_DIR")
    ap.add_argument("--repos", help="comma-separated: owner/name or name (default: all with a mirror)")
    ap.add_argument("--limit", type=int, help="at most N instances of each repository (first by date)")
    ap.add_argument("--half", choices=("tune", "test", "all"), default="all")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated, of " + ", ".join(MODES))
    ap.add_argument("--mode-set", action="append", default=[], metavar="NAME=KEY=VALUE[,KEY=VALUE]",
                    help="one more mode: the default search with these settings "
                         "(e.g. w05=search.names_weight=0.5); name it in --modes")
    ap.add_argument("-n", type=int, default=50, help="hits asked of each search (default 50)")
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "swe-lite"))
    ap.add_argument("--json", help="write the run here (after every instance)")
    ap.add_argument("--resume", action="store_true", help="skip instances already in --json")
    ap.add_argument("--keep-hits", action="store_true",
                    help="save every hit's file and score in --json (to study file rankings)")
    ap.add_argument("--report", nargs="+", metavar="JSON",
                    help="print the tables of saved runs (one report) and stop")
    ap.add_argument("--cairn", default=os.environ.get("CAIRN_BIN", "cairn"))
    a = ap.parse_args()

    if a.report:
        # Several saved runs (of disjoint repositories, say) make one report.
        results, skipped, modes = [], [], []
        for path in a.report:
            with open(path, encoding="utf-8") as f:
                saved = json.load(f)
            results += saved["results"]
            skipped += saved.get("skipped", [])
            modes += [m for m in saved["modes"] if m not in modes]
        tables(results, modes)
        for s in skipped:
            print(f"skipped: {s}")
        return 0

    for m in a.mode_set:
        name, sep, sets = m.partition("=")
        if not sep or not name or name in MODES or "=" not in sets:
            ap.error(f"--mode-set takes a new NAME=KEY=VALUE[,KEY=VALUE], not {m!r}")
        MODES[name] = [arg for kv in sets.split(",") for arg in ("--set", kv.strip())]
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad:
        ap.error(f"unknown mode(s) {', '.join(bad)}; known: {', '.join(MODES)}")
    explicit = {}
    for m in a.mirror:
        repo, sep, path = m.partition("=")
        if not sep or "/" not in repo:
            ap.error(f"--mirror takes OWNER/NAME=GIT_DIR, not {m!r}")
        explicit[repo] = path
    try:
        rows = load_instances(a.instances)
    except OSError as e:
        ap.error(f"cannot read the instances ({a.instances}): {e}")

    wanted = None
    if a.repos:
        wanted = [w.strip() for w in a.repos.split(",") if w.strip()]
    by_repo = {}
    for r in rows:
        repo = r["repo"]
        if wanted and repo not in wanted and repo.split("/", 1)[1] not in wanted:
            continue
        if a.half != "all" and half_of(r["instance_id"]) != a.half:
            continue
        by_repo.setdefault(repo, []).append(r)

    results, skipped = [], []
    if a.resume and a.json and os.path.exists(a.json):
        with open(a.json, encoding="utf-8") as f:
            saved = json.load(f)
        results = saved["results"]
    done = {r["instance_id"] for r in results}
    work = os.path.abspath(a.work)

    # In the order --repos names them, else smaller repositories first, so
    # that a run cut short has the most of them.
    def order(k):
        if wanted:
            return (min(i for i, w in enumerate(wanted) if w in (k, k.split("/", 1)[1])), k)
        return (len(by_repo[k]), k)

    for repo in sorted(by_repo, key=order):
        insts = by_repo[repo]
        mirror = find_mirror(repo, explicit, a.mirrors)
        if not mirror:
            msg = f"{repo}: no mirror ({len(insts)} instances)"
            print(msg, file=sys.stderr)
            skipped.append(msg)
            continue
        folder = prepare_folder(repo, os.path.abspath(mirror), work)
        dated = []
        for r in insts:
            t = commit_time(folder, r["base_commit"])
            if t is None:
                msg = f"{r['instance_id']}: base commit {r['base_commit']} not in the mirror"
                print(msg, file=sys.stderr)
                skipped.append(msg)
                continue
            dated.append((t, r))
        dated.sort(key=lambda x: (x[0], x[1]["instance_id"]))
        todo = [r for _, r in dated]
        if a.limit is not None:
            todo = todo[: a.limit]
        print(f"{repo}: {len(todo)} instances in {folder}", file=sys.stderr)
        for r in todo:
            iid = r["instance_id"]
            if iid in done:
                continue
            try:
                checkout(folder, r["base_commit"])
                rep = index(a.cairn, folder)
                gold = set(r["gold_files"])
                res = {"instance_id": iid, "repo": repo, "half": half_of(iid),
                       "base_commit": r["base_commit"], "gold_files": r["gold_files"],
                       "query_chars": len(r["problem_statement"]), "index": rep, "modes": {}}
                for mode in modes:
                    res["modes"][mode] = search_scored(a.cairn, folder, r["problem_statement"],
                                                       mode, a.n, gold, a.keep_hits)
            except (RuntimeError, ValueError) as e:
                msg = f"{iid}: {e}"
                print(msg, file=sys.stderr)
                skipped.append(msg)
                continue
            results.append(res)
            ranks = " ".join(f"{m}={res['modes'][m]['rank']}" for m in modes)
            print(f"{iid} [{res['half']}] index {rep['seconds']:.0f}s "
                  f"({rep['files_added']}+{rep['files_changed']}~{rep['files_deleted']}-, "
                  f"{rep['chunks_embedded']} embedded): {ranks}", file=sys.stderr)
            save(a.json, results, skipped, modes)

    summary = tables(results, modes)
    for s in skipped:
        print(f"skipped: {s}")
    save(a.json, results, skipped, modes, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
