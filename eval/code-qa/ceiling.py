"""How far can the signals Cairn has go on the code-QA set? A ceiling check.

    eval/code-qa/fetch
    pip install numpy scikit-learn
    python3 eval/code-qa/ceiling.py --cairn target/release/cairn \
        [--work DIR] [--variant chunk1000] [--variant bge] [--variant rerank]

`cairn eval eval/code-qa --split test` gives the test half's MRR@10 of the
shipped ranking. This script asks whether any ranking built from the same
evidence could reach a goal above it, in three ways, each on both halves:

1. The best of the four modes per question: for every question, whichever of
   hybrid+graph, hybrid, BM25 alone and vectors alone puts a right file
   highest (read from `cairn eval --json --misses`): what choosing among the
   rankings we have would give with foresight of the answer. (A fusion could
   still put a right file first where all four miss; the learned rankers
   below measure what fusing them does.)
2. A learned ranker over each question's candidate files: features of every
   file among the first 60 hits of `cairn search --json --explain` (each
   retriever's rank and contribution, the cosine, the boosts, the graph, how
   many of the file's chunks came up, doc or code, the question's words in
   the file's path and breadcrumbs, ...), a linear model fitted on pairs
   (right file above a wrong one) with logistic loss. Fitted on the tuning
   half and scored on both; fitted on every project but one and scored on
   that one (leave one project out: trained on more projects than the
   tuning half holds, test projects included); and fitted on the test half
   itself and scored there (in sample: what such a ranker reaches when it
   has seen the answers it is scored on).
3. The same with more evidence (`--variant`), each another ranking whose
   best rank and cosine for a file are two more features, and the best per
   question over every ranking: the vector ranking of the same projects
   indexed with 1,000-character chunks (`chunk1000`) and with bge-small as
   the embedder (`bge`); the cross-encoder's order of the default's first 30
   hits (`rerank`, int8, about 1.5 s a question here).

Each project is copied to WORK/<copy>/<project>/<project> (WORK: `--work`,
by default the repository's `target/ceiling`, which git ignores) and indexed
there (paths then read `<project>/...`, as in the eval's own index) with a
cairn.toml holding the variant's settings; embeddings come from the user
cache when they are already there. Nothing git tracks is written.
"""
import argparse
import collections
import json
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression

HERE = os.path.dirname(os.path.abspath(__file__))
# name: (the copy it searches, that copy's cairn.toml, search arguments,
# how many of its first hits count as its ranking).
VARIANTS = {
    "base": ("base", "", [], 60),
    "chunk1000": ("chunk1000", "[chunk]\nmax_chars = 1000\n", ["--mode", "vector"], 60),
    "bge": ("bge", '[embed]\nmodel = "bge-small-en-v1.5-int8dq"\nprecision = "int8"\n',
            ["--mode", "vector"], 60),
    # The cross-encoder's own order of the default's first 30 (int8).
    "rerank": ("base", "", ["--rerank", "--set", "search.rerank_precision=int8", "--set",
                            "search.rerank_blend=rerank", "--set", "search.rerank_k=30"], 30),
}
DEPTH = 60  # hits per question: the candidate files are theirs
PAIRS_FROM = 20  # candidate files a question's training pairs are drawn from
STOP = set(
    "a an the of to in on for and or is are be by it its do does how what where when which why "
    "can i my me with from as at this that into if not no than then get set".split()
)


def doc_id(path):
    return path[:-3] if path.endswith(".md") else path


def load_set():
    queries = [json.loads(line) for line in open(os.path.join(HERE, "queries.jsonl"))]
    rel = collections.defaultdict(set)
    for line in open(os.path.join(HERE, "qrels.tsv")):
        cols = line.rstrip("\n").split("\t")
        if cols[0] != "query-id" and int(cols[2]) > 0:
            rel[cols[0]].add(cols[1])
    half, language = {}, {}
    for line in open(os.path.join(HERE, "split.tsv")):
        cols = line.strip().split("\t")
        if cols[0] != "project":
            half[cols[0]], language[cols[0]] = cols[1], cols[2]
    return queries, rel, half, language


def group(qid):
    return qid.rsplit("_q", 1)[0]


def index_variant(cairn, work, variant):
    """Copies every project into WORK/<copy> and indexes it there."""
    variant, toml = VARIANTS[variant][:2]
    corpus = os.path.join(HERE, "corpus")
    for g in sorted(os.listdir(corpus)):
        if g.startswith(".") or not os.path.isdir(os.path.join(corpus, g)):
            continue
        root = os.path.join(work, variant, g)
        if not os.path.isdir(os.path.join(root, g)):
            os.makedirs(root, exist_ok=True)
            shutil.copytree(os.path.join(corpus, g), os.path.join(root, g), symlinks=True)
        with open(os.path.join(root, "cairn.toml"), "w") as f:
            f.write(toml)
        run = subprocess.run([cairn, "-q", "index"], cwd=root, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"cairn index failed in {root}: {run.stderr.strip()}")


def search_all(cairn, work, variant, queries):
    """Every question's first hits (DEPTH, or fewer where the variant says
    so), with --explain's signals."""
    copy, _, extra, depth = VARIANTS[variant]
    out = {}
    for q in queries:
        args = [cairn, "-q", "search", "-n", str(DEPTH), "--json", "--explain", *extra]
        run = subprocess.run(
            args + [q["text"]], cwd=os.path.join(work, copy, group(q["id"])),
            capture_output=True, text=True,
        )
        if run.returncode != 0:
            sys.exit(f"cairn search failed for {q['id']}: {run.stderr.strip()}")
        out[q["id"]] = json.loads(run.stdout)[:depth]
    return out


def files_of(hits):
    seen, out = set(), []
    for h in hits:
        d = doc_id(h["path"])
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def mrr10(files, relevant):
    for i, f in enumerate(files[:10]):
        if f in relevant:
            return 1.0 / (i + 1)
    return 0.0


def words(text):
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in STOP or len(w) < 2:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        out.add(w)
    return out


FEATURES = [
    "fused score / best", "1 / file rank", "1 / best chunk rank", "second chunk / best",
    "log chunks", "bm25 contribution", "1 / bm25 rank", "vector contribution",
    "1 / vector rank", "cosine", "graph contribution", "1 / graph rank", "doc",
    "doc × behaviour", "doc × use", "test file", "generated", "changelog",
    "header on a behaviour question", "question words in path",
    "question words in breadcrumbs", "interface in name", "lines / 100",
]


def features(text, hits):
    """Candidate files (in first-hit order) and one feature row each."""
    if not hits:
        return [], np.zeros((0, len(FEATURES)))
    top = hits[0]["score"]
    q = words(text)
    reasons_all = {b["reason"] for h in hits for b in h["boosts"]}
    behaviour = any(r.startswith("behaviour question") for r in reasons_all)
    use = any(r.startswith("use question") for r in reasons_all)
    files = collections.OrderedDict()
    for rank, h in enumerate(hits):
        files.setdefault(doc_id(h["path"]), []).append((rank, h))
    names, rows = [], []
    for frank, (d, hs) in enumerate(files.items()):
        r0, h0 = hs[0]
        signals = [s for _, h in hs for s in h["signals"]]

        def best(retriever, key):
            v = [s[key] for s in signals if s["retriever"] == retriever]
            return max(v) if v else 0.0

        def inv_rank(retriever):
            v = [s["rank"] for s in signals if s["retriever"] == retriever]
            return 1.0 / min(v) if v else 0.0

        reasons = {b["reason"] for _, h in hs for b in h["boosts"]}
        is_doc = d != h0["path"]
        crumbs = set().union(*(words(h["breadcrumb"]) for _, h in hs[:3]))
        rows.append([
            h0["score"] / top, 1.0 / (frank + 1), 1.0 / (r0 + 1),
            hs[1][1]["score"] / top if len(hs) > 1 else 0.0, math.log1p(len(hs)),
            best("bm25", "contribution"), inv_rank("bm25"),
            best("vector", "contribution"), inv_rank("vector"), best("vector", "raw"),
            best("graph", "contribution"), inv_rank("graph"), float(is_doc),
            float(is_doc and behaviour), float(is_doc and use),
            float("test file" in reasons), float("generated" in reasons),
            float("changelog" in reasons), float("behaviour question, header" in reasons),
            len(q & words(d.split("/", 1)[-1])) / max(1, len(q)),
            len(q & crumbs) / max(1, len(q)), float("interface" in d.lower()),
            (h0["end_line"] - h0["start_line"] + 1) / 100.0,
        ])
        names.append(d)
    return names, np.array(rows)


def extra_features(names, hits):
    """1 / rank and cosine of each file's best chunk in another ranking."""
    best = {}
    for rank, h in enumerate(hits):
        best.setdefault(doc_id(h["path"]), (rank, h.get("similarity") or 0.0))
    return np.array([[1.0 / (best[n][0] + 1), best[n][1]] if n in best else [0.0, 0.0] for n in names])


class Ranker:
    """A linear scorer fitted on (right file − wrong file) differences."""

    def __init__(self, data, ids, c=0.1):
        diffs, labels = [], []
        for k in ids:
            _, x, y = data[k]
            x, y = x[:PAIRS_FROM], y[:PAIRS_FROM]
            for i in np.where(y == 1)[0]:
                for j in np.where(y == 0)[0]:
                    diffs += [x[i] - x[j], x[j] - x[i]]
                    labels += [1, 0]
        diffs = np.array(diffs)
        scale = np.abs(diffs).mean(0) + 1e-9
        model = LogisticRegression(C=c, max_iter=5000, fit_intercept=False)
        model.fit(diffs / scale, labels)
        self.w = model.coef_[0] / scale

    def __call__(self, x):
        return x @ self.w


def score(data, rel, ids, scorer):
    """MRR@10 and hit@1 of a scorer over the questions `ids`."""
    mrr = []
    for k in ids:
        names, x, _ = data[k]
        order = np.argsort(-scorer(x), kind="stable") if len(names) else []
        mrr.append(mrr10([names[i] for i in order], rel[k]))
    return np.mean(mrr), np.mean([m == 1.0 for m in mrr])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cairn", default="cairn", help="the cairn binary")
    ap.add_argument("--work", default=os.path.join(HERE, "..", "..", "target", "ceiling"),
                    help="a folder for the project copies (default: target/ceiling)")
    ap.add_argument("--variant", action="append", default=[], choices=["chunk1000", "bge", "rerank"])
    args = ap.parse_args()
    cairn = os.path.abspath(shutil.which(args.cairn) or args.cairn)
    queries, rel, half, language = load_set()
    ids = [q["id"] for q in queries]
    halves = {h: [k for k in ids if half[group(k)] == h] for h in ("tune", "test")}
    rows = []

    def row(label, values):
        rows.append((label, values))
        print(f"  {label:<52} " + "   ".join(
            f"{h} {values[h][0]:.4f} / {values[h][1]:.3f}" if h in values else f"{h}      –      "
            for h in ("tune", "test")), file=sys.stderr)

    # 1. The shipped ranking and the best mode per question, from the eval.
    run = subprocess.run(
        [cairn, "-q", "eval", os.path.join(HERE), "--json", "--misses"],
        capture_output=True, text=True,
    )
    if run.returncode != 0:
        sys.exit(f"cairn eval failed: {run.stderr.strip()}")
    per_mode = collections.defaultdict(dict)
    for m in json.loads(run.stdout)["modes"]:
        name = m["mode"] + ("+graph" if m.get("graph") else "")
        for q in m["queries"]:
            fr = q["first_relevant"]
            per_mode[q["id"]][name] = 1.0 / fr if fr and fr <= 10 else 0.0

    def mean_of(f):
        return {h: (np.mean([f(k) for k in v]), np.mean([f(k) == 1.0 for k in v]))
                for h, v in halves.items()}

    row("default (cairn eval)", mean_of(lambda k: per_mode[k]["hybrid+graph"]))
    row("best of the 4 modes per question", mean_of(lambda k: max(per_mode[k].values())))
    for h, v in halves.items():
        by_lang = collections.defaultdict(list)
        for k in v:
            by_lang[language[group(k)]].append(k)
        print(f"  {h}, per language, default → best of the 4 modes: " + ", ".join(
            f"{lang} {np.mean([per_mode[k]['hybrid+graph'] for k in ks]):.4f} → "
            f"{np.mean([max(per_mode[k].values()) for k in ks]):.4f}"
            for lang, ks in sorted(by_lang.items())), file=sys.stderr)

    # 2. Learned rankers over the candidate files of the default search.
    print("indexing and searching (base) ...", file=sys.stderr)
    index_variant(cairn, args.work, "base")
    hits = search_all(cairn, args.work, "base", queries)
    data = {}
    for q in queries:
        names, x = features(q["text"], hits[q["id"]])
        data[q["id"]] = (names, x, np.array([1 if n in rel[q["id"]] else 0 for n in names]))
    row("default (cairn search, these copies)", {h: score(data, rel, v, lambda x: x[:, 1])
                                                 for h, v in halves.items()})

    def learned(label, data):
        fit = Ranker(data, halves["tune"])
        row(f"{label}: fitted on tune", {h: score(data, rel, v, fit) for h, v in halves.items()})
        lopo = collections.defaultdict(list)
        for g in sorted(half):
            held = [k for k in ids if group(k) == g]
            fit = Ranker(data, [k for k in ids if group(k) != g])
            mrr, hit1 = score(data, rel, held, fit)
            lopo[half[g]].append((len(held), mrr, hit1))
        row(f"{label}: leave one project out", {
            h: (sum(n * m for n, m, _ in v) / sum(n for n, _, _ in v),
                sum(n * x for n, _, x in v) / sum(n for n, _, _ in v))
            for h, v in lopo.items()})
        fit = Ranker(data, halves["test"])
        row(f"{label}: fitted on test (in sample)", {"test": score(data, rel, halves["test"], fit)})

    learned("linear ranker", data)

    # 3. More evidence: other rankings as features.
    if args.variant:
        rankings = [hits]
        for v in args.variant:
            print(f"indexing and searching ({v}) ...", file=sys.stderr)
            index_variant(cairn, args.work, v)
            vh = search_all(cairn, args.work, v, queries)
            rankings.append(vh)
            for k in ids:
                names, x, y = data[k]
                if len(names):
                    data[k] = (names, np.hstack([x, extra_features(names, vh[k])]), y)
        learned("linear ranker + " + ", ".join(args.variant), data)
        row("best per question of the default, the 4 modes and " + ", ".join(args.variant),
            mean_of(lambda k: max([max(per_mode[k].values())]
                                  + [mrr10(files_of(r[k]), rel[k]) for r in rankings])))
    print(json.dumps([{"ranking": label, **{h: {"mrr_at_10": round(v[0], 4), "hit_at_1": round(v[1], 4)}
                                            for h, v in values.items()}} for label, values in rows], indent=1))


if __name__ == "__main__":
    main()
