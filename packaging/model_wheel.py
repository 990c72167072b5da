#!/usr/bin/env python3
"""Writes the wheel of Cairn's model package, `cairn-kb-model-minilm-l6-v2`.

The `cairn-kb` wheel (the `cairn` binary) depends on this one: it carries the
all-MiniLM-L6-v2 files the binary embeds with, and nothing else, so that
`pipx install cairn-kb` / `uv tool install cairn-kb` gives a `cairn` that
never downloads its model. The model packages already published depend on
sentence-transformers, hence on PyTorch (gigabytes); this one has no
dependencies. It is a universal wheel (`py3-none-any`), published once per
set of model files, not once per platform or per Cairn release.

The files come from a folder a `cairn` binary fetched and checked
(`cairn model fetch`, then `cairn model status --json` names the folder);
the binary checks them again against its pinned SHA-256s before it uses the
installed package (cairn-embed's `locate_beside_binary`), so a wheel holding
other bytes is never used, only ignored.

The wheel is written directly (a zip with a `.dist-info`), byte for byte the
same for the same files: no build backend, nothing to install first.

    python3 packaging/model_wheel.py --model-dir DIR --out DIST
"""

import argparse
import base64
import hashlib
import sys
import zipfile
from pathlib import Path

NAME = "cairn-kb-model-minilm-l6-v2"
VERSION = "0.1.0"
# Must match `bundle_dir` of ModelSpec::MINILM_L6_V2 (crates/cairn-embed/src/fetch.rs).
PACKAGE = "cairn_kb_model_minilm_l6_v2"
FILES = ["model.safetensors", "tokenizer.json", "config.json"]

README = """\
# cairn-kb-model-minilm-l6-v2

The files of the sentence-transformers model all-MiniLM-L6-v2
(`model.safetensors`, `tokenizer.json`, `config.json`), packaged for Cairn:
the `cairn-kb` wheel depends on this package, and its `cairn` binary finds
the files here (beside itself, in the same environment), checks their
SHA-256 against the values it pins, and copies or links them into its
cache. No Python code depends on them and the package has no dependencies.

The model is sentence-transformers/all-MiniLM-L6-v2, by the
sentence-transformers authors, under the Apache License 2.0; the files are
unchanged. `import cairn_kb_model_minilm_l6_v2; cairn_kb_model_minilm_l6_v2.MODEL_DIR`
is the folder holding them.
"""

INIT = '''\
"""The all-MiniLM-L6-v2 files Cairn embeds with (see the package README)."""

from pathlib import Path

MODEL_DIR = Path(__file__).resolve().parent / "model"
'''


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def metadata() -> str:
    return (
        "Metadata-Version: 2.4\n"
        f"Name: {NAME}\n"
        f"Version: {VERSION}\n"
        "Summary: The all-MiniLM-L6-v2 embedding model files for Cairn "
        "(the cairn-kb wheel's model), with no Python dependencies\n"
        "License-Expression: Apache-2.0\n"
        "Keywords: embeddings,all-MiniLM-L6-v2,cairn\n"
        "Classifier: Topic :: Scientific/Engineering :: Artificial Intelligence\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + README
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, required=True,
                        help="folder holding " + ", ".join(FILES))
    parser.add_argument("--out", type=Path, required=True, help="where the .whl goes")
    args = parser.parse_args()

    dist_info = f"{PACKAGE}-{VERSION}.dist-info"
    members = [(f"{PACKAGE}/__init__.py", INIT.encode())]
    for name in FILES:
        path = args.model_dir / name
        if not path.is_file():
            print(f"model_wheel: {path} is missing", file=sys.stderr)
            return 1
        members.append((f"{PACKAGE}/model/{name}", path.read_bytes()))
    members += [
        (f"{dist_info}/METADATA", metadata().encode()),
        (
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: cairn packaging/model_wheel.py\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n",
        ),
    ]
    record = "".join(f"{n},{record_hash(d)},{len(d)}\n" for n, d in members)
    record += f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode()))

    args.out.mkdir(parents=True, exist_ok=True)
    wheel = args.out / f"{PACKAGE}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in members:
            # A fixed date and mode: the same files give the same wheel.
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    for name, data in members:
        if "/model/" in name:
            print(f"model_wheel: {name} sha256 {hashlib.sha256(data).hexdigest()}")
    print(f"model_wheel: wrote {wheel} ({wheel.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
