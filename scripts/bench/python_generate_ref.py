#!/usr/bin/env python3
"""Python reference for the generation-engine benchmark.

An HF-style greedy generate loop with a KV cache (prefill the [B, 64] prompt
batch, then one token per step with past key/values), written directly in
PyTorch for the same Qwen2 architecture as agentrl's TransformerLM (GQA,
RoPE rotate_half, RMSNorm, SiLU MLP, q/k/v bias, tied embeddings), random
weights. It runs on Debian's python3-torch, i.e. the same LibTorch 1.13 CPU
backend as agentrl, so the comparison isolates the engine (C++ loop, ragged
batching, no Python overhead) from the math library.

  python3 scripts/bench/python_generate_ref.py --shape tiny --batch 1 8 32 64 --new 64
  python3 scripts/bench/python_generate_ref.py --shape qwen0.5b --batch 1 8 --new 8
  python3 scripts/bench/python_generate_ref.py --shape tiny --batch 8 --new 2 --prompt 512   # engine_bench BM_EnginePrefill/0/8/512

Prints one line per batch size: prefill tokens/s (the mean over prefill calls repeated for at least
--prefill-seconds) and decode tokens/s.
"""
import argparse
import math
import time

import torch

SHAPES = {
    "tiny": dict(vocab=4096, hidden=256, layers=4, heads=4, kv_heads=2, inter=768, tie=False),
    "qwen0.5b": dict(vocab=151936, hidden=896, layers=24, heads=14, kv_heads=2, inter=4864, tie=True),
}


class Model:
    def __init__(self, s, theta=1e6, eps=1e-6):
        g = torch.Generator().manual_seed(0)
        H, D = s["hidden"], s["hidden"] // s["heads"]
        self.s, self.D, self.eps = s, D, eps
        r = lambda *shape: torch.randn(*shape, generator=g) * 0.02
        self.embed = r(s["vocab"], H)
        self.lm_head = self.embed if s["tie"] else r(s["vocab"], H)
        self.layers = []
        for _ in range(s["layers"]):
            self.layers.append(dict(
                ln1=torch.ones(H), ln2=torch.ones(H),
                wq=r(s["heads"] * D, H), bq=torch.zeros(s["heads"] * D),
                wk=r(s["kv_heads"] * D, H), bk=torch.zeros(s["kv_heads"] * D),
                wv=r(s["kv_heads"] * D, H), bv=torch.zeros(s["kv_heads"] * D),
                wo=r(H, s["heads"] * D),
                wg=r(s["inter"], H), wu=r(s["inter"], H), wd=r(H, s["inter"])))
        self.norm = torch.ones(H)
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))

    def rms(self, x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    @staticmethod
    def rotate_half(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    def forward(self, ids, pos, past):
        """ids/pos [B, T]; past: list of (k, v) [B, kvh, L, D] or None. Returns logits of the last token."""
        s, D = self.s, self.D
        B, T = ids.shape
        x = self.embed[ids]
        f = pos[..., None].float() * self.inv_freq
        emb = torch.cat((f, f), dim=-1)
        cos, sin = emb.cos()[:, None], emb.sin()[:, None]
        new_past = []
        for i, L in enumerate(self.layers):
            h = self.rms(x, L["ln1"])
            q = torch.nn.functional.linear(h, L["wq"], L["bq"]).view(B, T, s["heads"], D).transpose(1, 2)
            k = torch.nn.functional.linear(h, L["wk"], L["bk"]).view(B, T, s["kv_heads"], D).transpose(1, 2)
            v = torch.nn.functional.linear(h, L["wv"], L["bv"]).view(B, T, s["kv_heads"], D).transpose(1, 2)
            q = q * cos + self.rotate_half(q) * sin
            k = k * cos + self.rotate_half(k) * sin
            if past is not None:
                k = torch.cat((past[i][0], k), dim=2)
                v = torch.cat((past[i][1], v), dim=2)
            new_past.append((k, v))
            rep = s["heads"] // s["kv_heads"]  # HF repeat_kv
            kr, vr = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
            att = torch.matmul(q, kr.transpose(2, 3)) / math.sqrt(D)
            if T > 1:
                att = att + torch.full((T, T), float("-inf")).triu(1)
            att = torch.softmax(att, dim=-1, dtype=torch.float32)
            o = torch.matmul(att, vr).transpose(1, 2).reshape(B, T, -1)
            x = x + torch.nn.functional.linear(o, L["wo"])
            h = self.rms(x, L["ln2"])
            x = x + torch.nn.functional.linear(
                torch.nn.functional.silu(torch.nn.functional.linear(h, L["wg"])) * torch.nn.functional.linear(h, L["wu"]),
                L["wd"])
        x = self.rms(x[:, -1], self.norm)
        return torch.nn.functional.linear(x, self.lm_head), new_past


def run(m, B, n, prompt=64, prefill_seconds=0.0):
    """Prefill tokens/s (the prompt's forward repeated for at least prefill_seconds, as engine_bench's
    BM_Engine repeats its prefill), then decode tokens/s of n - 1 steps."""
    ids = (torch.arange(B)[:, None] * 131 + torch.arange(prompt)[None] * 7) % m.s["vocab"]
    with torch.no_grad():
        calls, t0 = 0, time.perf_counter()
        while True:
            logits, past = m.forward(ids, torch.arange(prompt).expand(B, prompt), None)
            calls += 1
            t1 = time.perf_counter()
            if t1 - t0 >= prefill_seconds:
                break
        tok = logits.argmax(-1, keepdim=True)
        for i in range(n - 1):
            logits, past = m.forward(tok, torch.full((B, 1), prompt + i), past)
            tok = logits.argmax(-1, keepdim=True)
        t2 = time.perf_counter()
    return B * prompt * calls / (t1 - t0), B * (n - 1) / (t2 - t1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="tiny", choices=SHAPES)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8, 32, 64])
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--prompt", type=int, default=64, help="prompt tokens per sequence")
    ap.add_argument("--prefill-seconds", type=float, default=0.5,
                    help="repeat the prefill for at least this long and report the mean (0: one call)")
    a = ap.parse_args()
    m = Model(SHAPES[a.shape])
    for B in a.batch:
        run(m, B, 2, min(a.prompt, 64))  # untimed warm-up, as engine_bench does
        pf, dc = run(m, B, a.new, a.prompt, a.prefill_seconds)
        print(f"shape={a.shape} batch={B} prompt={a.prompt} new={a.new} prefill_tok/s={pf:.1f} decode_tok/s={dc:.1f} threads={torch.get_num_threads()}")


if __name__ == "__main__":
    main()
