#!/usr/bin/env python3
"""Scores `cairn recall` on decision chains: does the newest decision of a
chain come first, is the older one kept out of sight (or marked replaced),
and did `cairn remember` link the newest to the one it replaced?

For each package of chains.jsonl a fresh project is made in a temporary
folder (an empty cairn.toml), and every decision of that package (the chains'
decisions and the distractors) is stored with `cairn remember --type
decision`, oldest version first. Each question is then asked of a copy of
that project (so one question's recall does not count as use for the next)
with `cairn recall QUESTION --json`, and again with `--replaced`.

Two runs: "before" stores and recalls with
`--set memory.supersede_threshold=0` (supersession off), "after" with the
defaults. Figures per half (tune, test) and overall:

  newest first     the top result is the chain's newest decision
  newest in top k  the newest decision is among the results (k = --limit)
  old not shown    per older decision: not among the default results as a
                   current memory (hidden, or absent; replaced memories
                   are left out of a default recall)
  old marked       per older decision: with --replaced, among the results
                   marked `superseded_by`
  link (chain)     the newest decision's `supersedes` names the decision
                   just before it in its chain
  link (pairs)     per consecutive pair of a chain, the newer names the older
  wrong links      links from a memory to another chain's or a distractor's
                   memory (or from a distractor to anything)
  skip             links to an earlier decision of the memory's own chain
                   that is not the one just before it
  merged           decisions `remember` took for a near-duplicate of an
                   earlier memory (updated it instead of storing a new one)

    python3 eval/decisions/run.py --check          # every quote is in its file (after ./fetch)
    python3 eval/decisions/run.py                  # before and after, both halves
    python3 eval/decisions/run.py --half tune --mode after -v

Standard library only. The binary is --cairn, else $CAIRN_BIN, else `cairn`
on PATH.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {
    "before": ["--set", "memory.supersede_threshold=0"],
    "after": [],
}


def load(path):
    chains, distractors = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            o = json.loads(line)
            (distractors if "distractors" in o else chains).append(o)
    return chains, distractors


def norm(t):
    return re.sub(r"\s+", " ", t).strip()


def check(chains, distractors):
    """Every quoted decision is in its file of the fetched package, near the
    line it names."""
    bad = 0
    texts = {}
    items = [(c["package"], c["file"], d) for c in chains for d in c["decisions"]]
    items += [(o["package"], o["file"], d) for o in distractors for d in o["distractors"]]
    for package, file, d in items:
        project = package.split("@")[0]
        path = os.path.join(HERE, "corpus", project, file)
        if path not in texts:
            if not os.path.exists(path):
                print(f"check: {path} missing: run eval/decisions/fetch", file=sys.stderr)
                return 2
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            texts[path] = (norm("\n".join(lines)), lines)
        whole, lines = texts[path]
        around = norm("\n".join(lines[max(0, d["line"] - 1) : d["line"] + 12]))
        if norm(d["text"]) not in whole:
            print(f"check: not in {project}/{file}: {d['text']}")
            bad += 1
        elif norm(d["text"]) not in around:
            print(f"check: not at line {d['line']} of {project}/{file}: {d['text']}")
            bad += 1
    n = len(items)
    print(f"check: {n - bad}/{n} decisions found in their files")
    return 1 if bad else 0


def version_key(v):
    m = re.match(r"(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?", v)
    if not m:
        return ((0,), 1, "", 0)
    nums = tuple(int(x) for x in m.group(1).split("."))
    nums = nums + (0,) * (4 - len(nums))
    pre = m.group(2)
    return (nums, 0 if pre else 1, pre or "", int(m.group(3) or 0))


def cairn(binary, project, args, extra):
    cmd = [binary, "-q", "-C", project, *extra, *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"run.py: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return json.loads(r.stdout)


def run_package(binary, package, chains, distractors, extra, limit, verbose):
    """Stores the package's decisions oldest first, asks each question;
    returns one result per chain and the package's wrong links."""
    root = tempfile.mkdtemp(prefix="cairn-decisions-")
    try:
        base = os.path.join(root, "base")
        os.makedirs(base)
        open(os.path.join(base, "cairn.toml"), "w").close()
        # (version, order, chain index or None, decision index, text)
        todo = []
        for ci, c in enumerate(chains):
            for di, d in enumerate(c["decisions"]):
                todo.append((version_key(d["version"]), len(todo), ci, di, d["text"]))
        for o in distractors:
            for d in o["distractors"]:
                todo.append((version_key(d["version"]), len(todo), None, 0, d["text"]))
        todo.sort(key=lambda t: (t[0], t[1]))
        ids = {}  # (ci, di) -> memory id
        stored = {}  # memory id -> (action, supersedes, (ci, di) or None)
        text_of = {}  # memory id -> text
        merged = 0
        for _, _, ci, di, text in todo:
            out = cairn(binary, base, ["remember", "--type", "decision", "--json", text], extra)
            m = out["memory"]
            action = out.get("action", "created")
            if action != "created":
                merged += 1
                if verbose:
                    print(f"    {action}: {text[:70]!r} -> {m['id']}")
            if ci is not None:
                ids[(ci, di)] = m["id"]
            stored[m["id"]] = (action, list(m.get("supersedes", [])), (ci, di) if ci is not None else None)
            text_of[m["id"]] = m["text"]
        # A memory's chain predecessor: the decision just before it.
        # Links to another chain's or a distractor's memory are wrong; a link
        # to an earlier decision of its own chain other than the previous one
        # skips a step (counted apart).
        chain_of = {v: k[0] for k, v in ids.items()}
        wrong, skips = [], 0
        for mid, (_, sup, key) in stored.items():
            want = ids.get((key[0], key[1] - 1)) if key and key[1] > 0 else None
            for s in sup:
                if s == want:
                    continue
                if key is not None and chain_of.get(s) == key[0]:
                    skips += 1
                else:
                    wrong.append({"memory": text_of.get(mid), "supersedes": text_of.get(s)})
        results = []
        for ci, c in enumerate(chains):
            n = len(c["decisions"])
            newest = ids[(ci, n - 1)]
            older = [ids[(ci, i)] for i in range(n - 1)]
            ask = os.path.join(root, f"q{ci}")
            shutil.copytree(base, ask)
            q = c["question"]
            shown = cairn(binary, ask, ["recall", q, "--json", "-n", str(limit)], extra)
            replaced = cairn(binary, ask, ["recall", q, "--json", "-n", str(limit), "--replaced"], extra)
            shutil.rmtree(ask, ignore_errors=True)
            shown_ids = [r["memory"]["id"] for r in shown]
            marked = {r["memory"]["id"] for r in replaced if r.get("superseded_by")}
            current = {r["memory"]["id"] for r in shown if not r.get("superseded_by")}
            pairs = [ids[(ci, i - 1)] in stored[ids[(ci, i)]][1] for i in range(1, n)]
            res = {
                "id": c["id"],
                "half": c["half"],
                "newest_first": bool(shown_ids) and shown_ids[0] == newest,
                "newest_in_top": newest in shown_ids,
                "old": [o not in current for o in older if o != newest],
                "old_marked": [o in marked for o in older if o != newest],
                "merged": any(o == newest for o in older),
                "link_chain": pairs[-1],
                "pairs": pairs,
                "top": shown[0]["memory"]["text"] if shown else None,
            }
            results.append(res)
            if verbose:
                flag = "ok " if res["newest_first"] else "MISS"
                print(f"  {flag} {c['id']}: link={res['link_chain']} old_not_shown={res['old']}")
                if not res["newest_first"]:
                    print(f"       top: {res['top']!r}")
        return results, wrong, merged, skips
    finally:
        shutil.rmtree(root, ignore_errors=True)


def rate(xs):
    xs = list(xs)
    return (sum(1 for x in xs if x) / len(xs)) if xs else float("nan"), len(xs)


def summary(results, wrong_by_half, merged_by_half, skips_by_half, halves):
    rows = []
    for half in halves:
        rs = [r for r in results if half == "all" or r["half"] == half]
        rows.append(
            {
                "half": half,
                "chains": len(rs),
                "newest_first": rate(r["newest_first"] for r in rs)[0],
                "newest_in_top": rate(r["newest_in_top"] for r in rs)[0],
                "old_not_shown": rate(x for r in rs for x in r["old"])[0],
                "old_decisions": rate(x for r in rs for x in r["old"])[1],
                "old_marked": rate(x for r in rs for x in r["old_marked"])[0],
                "link_chain": rate(r["link_chain"] for r in rs)[0],
                "link_pairs": rate(x for r in rs for x in r["pairs"])[0],
                "pairs": rate(x for r in rs for x in r["pairs"])[1],
                "wrong_links": sum(v for h, v in wrong_by_half.items() if half in ("all", h)),
                "merged": sum(v for h, v in merged_by_half.items() if half in ("all", h)),
                "skip_links": sum(v for h, v in skips_by_half.items() if half in ("all", h)),
            }
        )
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cairn", default=os.environ.get("CAIRN_BIN", "cairn"))
    ap.add_argument("--chains", default=os.path.join(HERE, "chains.jsonl"))
    ap.add_argument("--half", choices=["tune", "test", "all"], default="all")
    ap.add_argument("--mode", choices=["before", "after", "both"], default="both")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for both runs (passed to every cairn call)")
    ap.add_argument("-n", "--limit", type=int, default=5, help="memories recall returns (default 5)")
    ap.add_argument("--check", action="store_true", help="only check every quote is in its fetched file")
    ap.add_argument("--json", metavar="FILE", help="write the per-chain results and summaries here")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    chains, distractors = load(a.chains)
    if a.check:
        return check(chains, distractors)
    if shutil.which(a.cairn) is None and not os.path.exists(a.cairn):
        print(f"run.py: no cairn binary {a.cairn!r} (--cairn or CAIRN_BIN)", file=sys.stderr)
        return 2
    chains = [c for c in chains if a.half == "all" or c["half"] == a.half]
    packages = []
    for c in chains:
        if c["package"] not in packages:
            packages.append(c["package"])
    extra_common = [x for kv in a.set for x in ("--set", kv)]
    modes = ["before", "after"] if a.mode == "both" else [a.mode]
    halves = ["tune", "test", "all"] if a.half == "all" else [a.half]
    report = {}
    for mode in modes:
        extra = MODES[mode] + extra_common
        results, wrong_by_half, merged_by_half, skips_by_half, wrong_all = [], {}, {}, {}, []
        for p in packages:
            pc = [c for c in chains if c["package"] == p]
            pd = [o for o in distractors if o["package"] == p]
            if a.verbose:
                print(f"[{mode}] {p}: {len(pc)} chains")
            rs, wrong, merged, skips = run_package(a.cairn, p, pc, pd, extra, a.limit, a.verbose)
            results += rs
            h = pc[0]["half"]
            wrong_by_half[h] = wrong_by_half.get(h, 0) + len(wrong)
            merged_by_half[h] = merged_by_half.get(h, 0) + merged
            skips_by_half[h] = skips_by_half.get(h, 0) + skips
            for w in wrong:
                wrong_all.append({"package": p, **w})
        report[mode] = {
            "summary": summary(results, wrong_by_half, merged_by_half, skips_by_half, halves),
            "chains": results,
            "wrong_links": wrong_all,
        }
    print(f"{'mode':<7} {'half':<5} {'chains':>6} {'newest1st':>9} {'newestTop':>9} "
          f"{'oldNotShown':>11} {'oldMarked':>9} {'linkChain':>9} {'linkPairs':>9} {'wrong':>5} {'skip':>4} {'merged':>6}")
    for mode in modes:
        for s in report[mode]["summary"]:
            print(f"{mode:<7} {s['half']:<5} {s['chains']:>6} {s['newest_first']:>9.3f} {s['newest_in_top']:>9.3f} "
                  f"{s['old_not_shown']:>11.3f} {s['old_marked']:>9.3f} {s['link_chain']:>9.3f} "
                  f"{s['link_pairs']:>9.3f} {s['wrong_links']:>5} {s['skip_links']:>4} {s['merged']:>6}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
