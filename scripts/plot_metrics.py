#!/usr/bin/env python3
"""Render an agentrl metrics.jsonl into a PNG of reward, success and entropy curves.

Usage: scripts/plot_metrics.py runs/NAME/metrics.jsonl [--out metrics.png] [more.jsonl ...]
Several files are drawn into the same panels (e.g. several seeds).
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PANELS = [
    ("reward", ["rollout/reward_mean"]),
    ("success rate", ["rollout/success_rate", "eval/success_rate"]),
    ("entropy", ["actor/entropy", "rollout/entropy_mean"]),
]


def read(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: invalid JSON: {e}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default="metrics.png")
    args = ap.parse_args()
    fig, axes = plt.subplots(1, len(PANELS), figsize=(5 * len(PANELS), 3.6))
    for path in args.files:
        rows = read(path)
        label = path if len(args.files) > 1 else ""
        for ax, (title, keys) in zip(axes, PANELS):
            for key in keys:
                pts = [(r["step"], r[key]) for r in rows if key in r]
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, marker="o" if key.startswith("eval/") else None, markersize=3,
                            label=f"{key} {label}".strip())
            ax.set_title(title)
            ax.set_xlabel("iteration")
            ax.grid(alpha=0.3)
    for ax in axes:
        if ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
