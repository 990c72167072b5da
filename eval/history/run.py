#!/usr/bin/env python3
"""Scores `cairn why` and `cairn search` on the "why" questions of questions.tsv.

Each question names a repository, the commit(s) that answer it (hex
prefixes), a `why` target (a symbol or path[:line] as the code is at the
repository's head) and the question in a developer's words. For each
repository the script

1. indexes a clone with `[history] enabled = false`, then again with it on
   (the second pass adds only the history: its time and the index growth
   are the cost of history);
2. asks `cairn why TARGET --json` and `cairn search QUESTION --kind history
   --json`, and the default search (all kinds) for the flooding check;
3. commits one change and times the next `cairn index` (incremental pickup).

hit@k: an answering commit among the first k commits (why) or the first k
history hits (search). Usage:

    eval/history/run.py --cairn target/release/cairn --work DIR \
        --repo fzf=PATH --repo jq=PATH ...

where each PATH is a git repository or bundle to clone (the clone, in WORK,
is indexed and changed; PATH is not).
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, cwd, check=True):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} in {cwd}: exit {p.returncode}\n{p.stderr}")
    return p


def index_bytes(repo):
    total = 0
    for name in ("index.sqlite", "index.sqlite-wal"):
        path = os.path.join(repo, ".cairn", name)
        if os.path.exists(path):
            total += os.path.getsize(path)
    return total


EXTRA = ""
HISTORY_EXTRA = ""


def set_history(repo, enabled):
    with open(os.path.join(repo, "cairn.toml"), "w") as f:
        f.write(f"[history]\nenabled = {'true' if enabled else 'false'}\n{HISTORY_EXTRA}{EXTRA}")


def timed_index(cairn, repo):
    t = time.monotonic()
    p = run([cairn, "-q", "index", "--json"], repo)
    secs = time.monotonic() - t
    return secs, json.loads(p.stdout)


def rank_of(shas, answers):
    for i, s in enumerate(shas):
        if any(s.startswith(a) or a.startswith(s) for a in answers):
            return i + 1
    return None


def sha_of_path(path):
    # .cairn/history/<sha12> or .cairn/history/noise/<sha12>
    return path.rsplit("/", 1)[-1] if path.startswith(".cairn/history/") else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--repo", action="append", default=[], help="NAME=PATH")
    ap.add_argument("--questions", default=os.path.join(HERE, "questions.tsv"))
    ap.add_argument("--keep", action="store_true", help="reuse existing clones and indexes")
    ap.add_argument("--out", help="write every question's outcome as JSON here")
    ap.add_argument("--model", help="[embed] model for the indexes (e.g. none: BM25 and graph only)")
    ap.add_argument("--commit-vectors", choices=("on", "off"),
                    help="[history] vectors: whether commit records get vectors (default: cairn's)")
    args = ap.parse_args()
    global EXTRA, HISTORY_EXTRA
    if args.model:
        EXTRA = f'[embed]\nmodel = "{args.model}"\n'
    if args.commit_vectors:
        HISTORY_EXTRA = f"vectors = {'true' if args.commit_vectors == 'on' else 'false'}\n"
    cairn = os.path.abspath(args.cairn)
    repos = dict(r.split("=", 1) for r in args.repo)
    with open(args.questions) as f:
        questions = [q for q in csv.DictReader(f, delimiter="\t")]
    os.makedirs(args.work, exist_ok=True)
    outcomes, costs = [], {}
    for name, src in repos.items():
        repo = os.path.join(args.work, name)
        qs = [q for q in questions if q["repo"] == name]
        if not (args.keep and os.path.isdir(repo)):
            shutil.rmtree(repo, ignore_errors=True)
            run(["git", "clone", "-q", src, repo], args.work)
            set_history(repo, False)
            base_s, base = timed_index(cairn, repo)
            base_b = index_bytes(repo)
            set_history(repo, True)
            hist_s, hist = timed_index(cairn, repo)
            costs[name] = {
                "index_s_without_history": round(base_s, 2),
                "index_bytes_without_history": base_b,
                "history_pass_s": round(hist_s, 2),
                "history_stage_s": round(hist.get("history_seconds", 0), 2),
                "commits": hist.get("commits_indexed", 0),
                "history_chunks_embedded": hist.get("chunks_embedded", 0),
                "index_bytes_with_history": index_bytes(repo),
            }
        for q in qs:
            answers = q["answers"].split(",")
            why = json.loads(
                run([cairn, "-q", "why", q["target"], "--json", "--limit", "10", "--max-tokens", "100000"], repo).stdout
            )
            why_shas = [c["sha"] for c in why["commits"]]
            hist_hits = json.loads(
                run([cairn, "-q", "search", q["question"], "--kind", "history", "--json", "--limit", "10"], repo).stdout
            )
            search_shas = [s for s in (sha_of_path(h["path"]) for h in hist_hits) if s]
            all_hits = json.loads(
                run([cairn, "-q", "search", q["question"], "--json", "--limit", "10"], repo).stdout
            )
            all_paths = [h["path"] for h in all_hits]
            outcomes.append(
                {
                    "id": q["id"],
                    "repo": name,
                    "why_rank": rank_of(why_shas, answers),
                    "why_matched": why["matched"],
                    "why_tokens": why["tokens"],
                    "search_rank": rank_of(search_shas, answers),
                    "default_rank": rank_of([sha_of_path(p) or "-" for p in all_paths], answers),
                    "default_history_in_top5": sum(1 for p in all_paths[:5] if sha_of_path(p)),
                    "default_top1": all_paths[0] if all_paths else None,
                }
            )
        # Incremental: one new commit, the next pass.
        if not args.keep:
            with open(os.path.join(repo, "HISTORY_EVAL.md"), "w") as f:
                f.write("# A change\n\nOne new commit for the incremental check.\n")
            run(["git", "add", "HISTORY_EVAL.md"], repo)
            run(
                ["git", "-c", "user.name=eval", "-c", "user.email=eval@localhost", "commit", "-q", "-m", "Incremental check"],
                repo,
            )
            inc_s, inc = timed_index(cairn, repo)
            costs[name]["incremental_pass_s"] = round(inc_s, 3)
            costs[name]["incremental_history_stage_s"] = round(inc.get("history_seconds", 0), 4)
            costs[name]["incremental_commits"] = inc.get("commits_indexed", 0)

    def hit(key, k, rows):
        return sum(1 for o in rows if o[key] is not None and o[key] <= k) / max(len(rows), 1)

    groups = {"all": outcomes}
    for name in repos:
        groups[name] = [o for o in outcomes if o["repo"] == name]
    print("set\tn\twhy@1\twhy@5\tsearch@1\tsearch@5\tdefault@5\thistory_in_default_top5")
    for g, rows in groups.items():
        flood = sum(o["default_history_in_top5"] for o in rows) / max(len(rows), 1)
        print(
            f"{g}\t{len(rows)}\t{hit('why_rank', 1, rows):.3f}\t{hit('why_rank', 5, rows):.3f}"
            f"\t{hit('search_rank', 1, rows):.3f}\t{hit('search_rank', 5, rows):.3f}"
            f"\t{hit('default_rank', 5, rows):.3f}\t{flood:.2f}"
        )
    for name, c in costs.items():
        print(name, json.dumps(c))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"outcomes": outcomes, "costs": costs}, f, indent=1)


if __name__ == "__main__":
    main()
