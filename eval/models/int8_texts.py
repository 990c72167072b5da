"""Texts to measure how far the int8 layers move a model's vectors from its
f32 ones, drawn from no eval set (so choosing a quantization on them tunes
nothing that `cairn eval` scores): 150 windows of the PowerShell docs scale
corpus, 150 windows of Cairn's own Rust sources, 10 questions. The same
commit and seed give the same texts on every machine.

    python3 eval/models/int8_texts.py --corpus ../shared/corpora/windows-powershell-docs-ws2022-ws2025.tar.xz \
        --out target/eval-models/int8-texts.json
    CAIRN_INT8_TEXTS=$PWD/target/eval-models/int8-texts.json \
        cargo test --release -p cairn-embed --test int8 -- --ignored --nocapture distance_on_a_text_file

The test prints, per int8 path this CPU runs, the mean and lowest cosine of
each text's int8 vector to its f32 vector and the mean of 1 - cosine.
"""
import argparse, glob, json, os, random, tarfile

ap = argparse.ArgumentParser()
ap.add_argument("--corpus", required=True, help="the PowerShell docs tarball")
ap.add_argument("--out", required=True)
ap.add_argument("--seed", type=int, default=7)
args = ap.parse_args()
rng = random.Random(args.seed)


def window(text, size):
    start = rng.randint(0, max(0, len(text) - size))
    return text[start:start + size]


texts = []
with tarfile.open(args.corpus) as tar:
    docs = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith(".md")), key=lambda m: m.name)
    rng.shuffle(docs)
    for m in docs:
        text = tar.extractfile(m).read().decode("utf-8", "ignore")
        if len(text) >= 400:
            texts.append(window(text, 1500))
        if len(texts) == 150:
            break

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sources = sorted(glob.glob(os.path.join(root, "crates", "*", "src", "**", "*.rs"), recursive=True))
rng.shuffle(sources)
code = []
for path in sources:
    text = open(path, encoding="utf-8", errors="ignore").read()
    if len(text) >= 1500:
        code.append(window(text, 1200))
    if len(code) == 150:
        break
texts += code
texts += [
    "how do I set the execution policy",
    "which cmdlet lists services",
    "how does the lexer handle escapes",
    "where is the retry limit checked",
    "what does the parser do with trailing commas",
    "how to configure a proxy",
    "why does the connection time out",
    "how is the hash table resized",
    "which flag disables colors",
    "how are errors reported to the caller",
]
os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
with open(args.out, "w") as f:
    json.dump(texts, f)
print(f"{len(texts)} texts -> {args.out}")
