"""Train the small Llama-style decoder of bench/train on packed
variable-length documents with one attention variant, then measure it
(docs/training.md). Every variant sees the same seed, batches and steps.

  python bench/train/train.py --data data/train --attention flamia \\
      --steps 600 --log out/flamia.jsonl

The log is JSON lines: {"kind": "train"|"eval"|"summary", ...}. The summary
holds the final held-out loss, the tokens per second of the whole step and
of the attention calls alone, and the leak study: on the first
--leak-docs held-out documents (their first --leak-len tokens), the loss
under teacher forcing next to the loss when every token is scored from its
causal prefix alone (one forward per prefix, prefixes packed as documents).
A causal model scores both the same; a model whose outputs see later tokens
does not.
"""
from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from attention import VARIANTS, errors_vs_float32, make_attention  # noqa: E402
from model import Config, Decoder, document_loss  # noqa: E402

CONFIGS = {
    "small": Config(),
    # For the CPU tests: the same code at a size a CPU trains in seconds.
    "tiny": Config(vocab=8192, layers=2, d_model=64, heads=2, kv_heads=1,
                   head_dim=32, ffn=128),
}


def load_split(data: pathlib.Path, split: str):
    ids = np.fromfile(data / f"{split}.bin", dtype=np.uint16)
    bounds = np.load(data / f"{split}_docs.npy")
    if bounds[0] != 0 or bounds[-1] != ids.size or np.any(np.diff(bounds) <= 0):
        sys.exit(f"train: {data}/{split}_docs.npy does not partition "
                 f"{split}.bin")
    return ids, bounds


def chunk_documents(bounds: np.ndarray, max_tokens: int):
    """(start, end) of every document, those longer than max_tokens cut into
    max_tokens pieces (each piece then is a document of its own)."""
    out = []
    for s, e in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        for c in range(s, e, max_tokens):
            out.append((c, min(c + max_tokens, e)))
    return out


def pack(docs, budget: int):
    """Documents, in order, into batches of at most `budget` tokens."""
    batches, cur, used = [], [], 0
    for s, e in docs:
        if cur and used + (e - s) > budget:
            batches.append(cur)
            cur, used = [], 0
        cur.append((s, e))
        used += e - s
    if cur:
        batches.append(cur)
    return batches


def training_batches(bounds, budget, steps, seed):
    """`steps` batches: each epoch the documents in a seeded random order,
    packed greedily. Depends only on the data, budget, steps and seed."""
    docs = chunk_documents(bounds, budget)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < steps:
        order = rng.permutation(len(docs))
        out.extend(pack([docs[i] for i in order], budget))
    return out[:steps]


def to_device(ids, batch, device):
    tokens = np.concatenate([ids[s:e] for s, e in batch]).astype(np.int64)
    lens = [e - s for s, e in batch]
    cu_host = torch.tensor([0] + np.cumsum(lens).tolist(), dtype=torch.int32)
    return (torch.from_numpy(tokens).to(device, non_blocking=True),
            cu_host.to(device), cu_host, max(lens))


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


@torch.no_grad()
def held_out_loss(model, ids, batches, device):
    total, count = 0.0, 0
    for batch in batches:
        tokens, cu, cu_host, max_len = to_device(ids, batch, device)
        with torch.autocast(device, dtype=torch.bfloat16):
            logits = model(tokens, cu, max_len, cu_host)
        loss, valid = document_loss(logits, tokens, cu, reduction="none")
        total += loss[valid].double().sum().item()
        count += int(valid.sum())
    return total / count


@torch.no_grad()
def leak_study(model, ids, bounds, n_docs, length, device, budget):
    """Loss of the same tokens under teacher forcing and from causal
    prefixes only (see the module docstring)."""
    docs = [(s, min(e, s + length)) for s, e in
            zip(bounds[:-1].tolist(), bounds[1:].tolist()) if e - s >= 2]
    docs = docs[:n_docs]
    teacher, prefix = [], []
    # float32 outside the attention (no autocast): the layers' own rounding
    # then hardly differs between a document and its prefixes.
    for batch in pack(docs, budget):
        tokens, cu, cu_host, max_len = to_device(ids, batch, device)
        logits = model(tokens, cu, max_len, cu_host)
        loss, valid = document_loss(logits, tokens, cu, reduction="none")
        teacher.append(loss[valid].double().cpu())
    # Prefix j of document (s, e) is tokens [s, s + j + 1): its last logit
    # scores token s + j + 1. Packed as documents, each limited to budget.
    prefixes = [(s, s + j + 1) for s, e in docs for j in range(e - s - 1)]
    for batch in pack(prefixes, budget):
        tokens, cu, cu_host, max_len = to_device(ids, batch, device)
        logits = model(tokens, cu, max_len, cu_host)
        last = (cu[1:] - 1).long()
        target = torch.tensor([ids[e] for _, e in batch], device=device,
                              dtype=torch.int64)
        prefix.append(torch.nn.functional.cross_entropy(
            logits[last].float(), target, reduction="none").double().cpu())
    t, p = torch.cat(teacher), torch.cat(prefix)
    assert t.numel() == p.numel()
    return {"documents": len(docs), "tokens": int(t.numel()),
            "teacher_forcing_loss": t.mean().item(),
            "causal_prefix_loss": p.mean().item(),
            "mean_difference": (t - p).mean().item(),
            "max_abs_token_difference": (t - p).abs().max().item()}


def attention_error(model, attention, ids, batch, device, layers=(0, -1)):
    """Relative L2 error of the variant's O, dQ, dK, dV against float32
    attention, on the operands the trained model gives its attention at
    `layers` on one held-out batch (a fixed random dO)."""
    captured = {}
    blocks = [model.blocks[i] for i in layers]
    saved = [b.attention for b in blocks]
    for i, b in zip(layers, blocks):
        def capture(q, k, v, cu, max_len, cu_host=None, i=i, f=b.attention):
            captured[i] = (q.detach(), k.detach(), v.detach())
            return f(q, k, v, cu, max_len, cu_host)
        b.attention = capture
    tokens, cu, cu_host, max_len = to_device(ids, batch, device)
    with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16):
        model(tokens, cu, max_len, cu_host)
    for b, f in zip(blocks, saved):
        b.attention = f
    out = {}
    gen = torch.Generator(device=device).manual_seed(1)
    for i, (q, k, v) in captured.items():
        do = torch.randn(q.shape, generator=gen, device=device).bfloat16()
        out[f"layer{i % len(model.blocks)}"] = errors_vs_float32(
            attention, q, k, v, do, cu, max_len, cu_host)
    return out


def attention_speed(attention, cfg, ids, batches, device, reps=3):
    """Tokens per second of the attention calls alone, forward and forward
    + backward, on the training batches' document layouts with the model's
    head shapes (random bf16 operands)."""
    if device != "cuda":
        return None
    gen = torch.Generator(device="cuda").manual_seed(0)
    cases = []
    for batch in batches:
        _, cu, cu_host, max_len = to_device(ids, batch, device)
        T = int(cu_host[-1])
        mk = lambda h: torch.randn(T, h, cfg.head_dim, device="cuda",  # noqa: E731
                                   generator=gen, dtype=torch.bfloat16)
        q, k, v = mk(cfg.heads), mk(cfg.kv_heads), mk(cfg.kv_heads)
        cases.append((q, k, v, mk(cfg.heads), cu, cu_host, max_len, T))
    result = {}
    for mode in ("fwd", "fwd+bwd"):
        def once(c):
            q, k, v, do, cu, cu_host, max_len, _ = c
            if mode == "fwd":
                with torch.no_grad():
                    attention(q, k, v, cu, max_len, cu_host)
                return
            q, k, v = (t.requires_grad_() for t in (q, k, v))
            attention(q, k, v, cu, max_len, cu_host).backward(do)
            q.grad = k.grad = v.grad = None
        for c in cases:  # warm up (kernel loads, allocator)
            once(c)
        sync(device)
        start = time.perf_counter()
        for _ in range(reps):
            for c in cases:
                once(c)
        sync(device)
        elapsed = time.perf_counter() - start
        tokens = reps * sum(c[-1] for c in cases)
        result[f"{mode}_tokens_per_s"] = tokens / elapsed
        result[f"{mode}_ms_per_call"] = 1e3 * elapsed / (reps * len(cases))
    return result


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, type=pathlib.Path)
    ap.add_argument("--attention", required=True,
                    choices=VARIANTS)
    ap.add_argument("--config", default="small", choices=sorted(CONFIGS))
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--tokens-per-step", type=int, default=16384)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--warmup", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--eval-docs", type=int, default=0,
                    help="held-out documents per evaluation (0: all)")
    ap.add_argument("--leak-docs", type=int, default=64)
    ap.add_argument("--leak-len", type=int, default=256)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available()
                    else "cpu")
    ap.add_argument("--log", required=True, type=pathlib.Path)
    args = ap.parse_args(argv)
    if args.steps < 1 or args.tokens_per_step < 64:
        ap.error("--steps must be >= 1 and --tokens-per-step >= 64")

    cfg = CONFIGS[args.config]
    attention, attention_name = make_attention(args.attention, args.device)
    train_ids, train_bounds = load_split(args.data, "train")
    val_ids, val_bounds = load_split(args.data, "val")
    batches = training_batches(train_bounds, args.tokens_per_step, args.steps,
                               args.seed)
    val_docs = chunk_documents(val_bounds, args.tokens_per_step)
    if args.eval_docs:
        val_docs = val_docs[:args.eval_docs]
    val_batches = pack(val_docs, args.tokens_per_step)

    torch.manual_seed(args.seed)
    model = Decoder(cfg, attention).to(args.device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": other, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95),
                            fused=args.device == "cuda")

    def lr_at(step):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        frac = (step - args.warmup) / max(1, args.steps - args.warmup)
        return args.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * frac)))

    args.log.parent.mkdir(parents=True, exist_ok=True)
    log = open(args.log, "w")

    def emit(record):
        log.write(json.dumps(record) + "\n")
        log.flush()
        print(json.dumps(record), flush=True)

    emit({"kind": "config", "attention": args.attention,
          "implementation": attention_name, "model": vars(cfg),
          "parameters": sum(p.numel() for p in model.parameters()),
          "args": {k: str(v) for k, v in vars(args).items()},
          "train_tokens": int(train_ids.size), "val_tokens": int(val_ids.size)})
    tokens_seen, nonfinite, step_time, timed_tokens = 0, 0, 0.0, 0
    for step, batch in enumerate(batches):
        if step % args.eval_every == 0 and step:
            emit({"kind": "eval", "step": step, "tokens": tokens_seen,
                  "val_loss": held_out_loss(model, val_ids, val_batches,
                                            args.device)})
        sync(args.device)
        t0 = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        tokens, cu, cu_host, max_len = to_device(train_ids, batch, args.device)
        with torch.autocast(args.device, dtype=torch.bfloat16):
            logits = model(tokens, cu, max_len, cu_host)
        loss = document_loss(logits, tokens, cu)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss_value = loss.item()  # synchronizes
        dt = time.perf_counter() - t0
        tokens_seen += tokens.numel()
        if step >= 5:  # steady state: kernels loaded, allocator warm
            step_time += dt
            timed_tokens += tokens.numel()
        if not math.isfinite(loss_value):
            nonfinite += 1
        if step % 10 == 0 or step == args.steps - 1:
            emit({"kind": "train", "step": step, "tokens": tokens_seen,
                  "loss": loss_value, "grad_norm": float(grad_norm),
                  "lr": lr_at(step), "step_ms": 1e3 * dt})
        if nonfinite:
            emit({"kind": "error", "step": step,
                  "message": f"loss is {loss_value}: training stopped"})
            break
    final = held_out_loss(model, val_ids, val_batches, args.device)
    emit({"kind": "eval", "step": args.steps, "tokens": tokens_seen,
          "val_loss": final})
    model.eval()
    summary = {
        "kind": "summary", "attention": args.attention,
        "implementation": attention_name, "steps": args.steps,
        "tokens": tokens_seen, "final_val_loss": final,
        "nonfinite_steps": nonfinite,
        "step_tokens_per_s": timed_tokens / step_time if step_time else None,
        "attention_speed": attention_speed(attention, cfg, train_ids,
                                           batches[:8], args.device),
        "attention_error_vs_float32": attention_error(
            model, attention, val_ids, val_batches[0], args.device),
        "leak_study": leak_study(model, val_ids, val_bounds, args.leak_docs,
                                 args.leak_len, args.device,
                                 args.tokens_per_step)}
    emit(summary)
    log.close()
    return summary


if __name__ == "__main__":
    main()
