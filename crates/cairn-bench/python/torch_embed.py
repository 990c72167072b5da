#!/usr/bin/env python3
"""PyTorch beside cairn's kernels, on the same texts, in one run.

For each thread count, times `cairn bench embed --index FILE` and
sentence-transformers (all-MiniLM-L6-v2 from cairn's own model cache: the same
weights, 256-token truncation, mean pooling, normalised) on the same distinct
chunk texts of an index file, one after the other, plus a short query's median
latency. Prints one JSON line per thread count and runtime.

Needs `pip install sentence-transformers` (torch comes with it) and a release
`cairn` on PATH or given with --cairn. Example (BENCHMARKS.md, issue 19):

    python3 crates/cairn-bench/python/torch_embed.py \
        --index ~/.cache/cairn/eval/scifact-*/index.sqlite --chunks 1000 --threads 1,2
"""

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import time

# The same query and texts `cairn bench embed --index` uses.
QUERY = "how long do sessions stay cached?"
NO_MODEL = "cairn-bench: no model"
SQL = """SELECT c.embed_hash, d.path, c.heading_path, c.level, c.start_line, c.end_line, c.text
         FROM chunks c JOIN documents d ON d.id = c.doc_id
         WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ?1 AND e.hash = c.embed_hash)
         GROUP BY c.embed_hash LIMIT ?2"""


def embed_text(heading_path, text):
    """cairn_core::Chunk::embed_text: the headings above, then the text."""
    lines = text.splitlines()
    first = lines[0].lstrip() if lines else ""
    context = heading_path[:-1] if first.startswith("#") and heading_path else heading_path
    return text if not context else " > ".join(context) + "\n\n" + text


def index_texts(path, limit):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(SQL, (NO_MODEL, limit if limit > 0 else 1 << 62)).fetchall()
    return [embed_text(json.loads(r[2]), r[6]) for r in rows]


def run_cairn(cairn, index, chunks, threads, kernel, precision):
    args = [cairn, "bench", "embed", "--index", index, "--chunks", str(chunks),
            "--threads", str(threads), "--precision", precision, "--json", "-q"]
    if kernel:
        args += ["--kernel", kernel]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)
    return [{"runtime": f"cairn {r['kernel']} {r['precision']}", "threads": threads, "chunks": r["chunks"],
             "avg_tokens": round(r["avg_tokens"], 1), "chunks_per_sec": round(r["chunks_per_sec"], 2),
             "query_median_ms": round(r["query_median_ms"], 2)} for r in rows]


def run_torch(model_dir, texts, threads, batch):
    import torch
    from sentence_transformers import SentenceTransformer, models

    torch.set_num_threads(threads)
    word = models.Transformer(model_dir, max_seq_length=256)
    pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    st = SentenceTransformer(modules=[word, pool, models.Normalize()], device="cpu")
    tok = word.tokenizer
    lens = [min(len(tok(t, add_special_tokens=True)["input_ids"]), 256) for t in texts]
    st.encode(texts[:batch], batch_size=batch)  # warm up
    start = time.perf_counter()
    st.encode(texts, batch_size=batch)
    secs = time.perf_counter() - start
    st.encode([QUERY])
    times = []
    for _ in range(50):
        t = time.perf_counter()
        st.encode([QUERY])
        times.append((time.perf_counter() - t) * 1000)
    return {"runtime": f"torch {torch.__version__}", "threads": threads, "chunks": len(texts),
            "avg_tokens": round(sum(lens) / len(lens), 1), "chunks_per_sec": round(len(texts) / secs, 2),
            "query_median_ms": round(statistics.median(times), 2), "batch": batch}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", required=True, help="an index file (.cairn/index.sqlite)")
    ap.add_argument("--chunks", type=int, default=1000, help="distinct texts (0: all)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--cairn", default="cairn", help="the cairn binary (release)")
    ap.add_argument("--kernel", default="", help="cairn kernel path (default: every one)")
    ap.add_argument("--precision", default="fp32", help="cairn's linear layers: fp32, int8 or both")
    ap.add_argument("--batch", type=int, default=32, help="sentence-transformers batch size")
    ap.add_argument("--model-dir", default=os.path.expanduser("~/.cache/cairn/models/all-MiniLM-L6-v2"))
    a = ap.parse_args()
    texts = index_texts(a.index, a.chunks)
    for t in [int(x) for x in a.threads.split(",")]:
        for row in run_cairn(a.cairn, a.index, a.chunks, t, a.kernel, a.precision):
            print(json.dumps(row), flush=True)
        print(json.dumps(run_torch(a.model_dir, texts, t, a.batch)), flush=True)


if __name__ == "__main__":
    main()
