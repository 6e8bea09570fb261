#!/usr/bin/env python3
"""Render an agentrl metrics.jsonl into a PNG of reward, success and entropy curves.

Usage: scripts/plot_metrics.py runs/NAME/metrics.jsonl [--out metrics.png] [more.jsonl ...]
Several files are drawn into the same panels (e.g. several seeds).
"""
import argparse
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PANELS = [
    ("reward", ["rollout/reward_mean"]),
    ("success rate", ["rollout/success_rate", "eval/success_rate", "eval_sampled/success_rate"]),
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


def run_label(path):
    """runs/NAME/metrics.jsonl -> NAME; other files -> their name without .jsonl."""
    p = pathlib.Path(path)
    return p.parent.name if p.name == "metrics.jsonl" and p.parent.name else p.name.removesuffix(".jsonl")


# One colour per file, one line style per metric of a panel.
STYLES = [dict(linestyle="-", linewidth=1.0, alpha=0.6), dict(linestyle="-", marker="o", linewidth=1.8),
          dict(linestyle=":", marker="s", linewidth=1.8)]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default="metrics.png")
    args = ap.parse_args()
    fig, axes = plt.subplots(1, len(PANELS), figsize=(5.5 * len(PANELS), 4.0))
    for i, path in enumerate(args.files):
        rows = read(path)
        label = run_label(path) if len(args.files) > 1 else ""
        colour = f"C{i % 10}"
        for ax, (title, keys) in zip(axes, PANELS):
            for j, key in enumerate(keys):
                pts = [(r["step"], r[key]) for r in rows if key in r]
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, color=colour, markersize=3.5, label=f"{key} {label}".strip(),
                            **STYLES[j % len(STYLES)])
            ax.set_title(title)
            ax.set_xlabel("iteration")
            ax.grid(alpha=0.3)
    for ax in axes:
        if ax.lines:
            ax.legend(fontsize=6.5)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
