#!/usr/bin/env python3
"""Seed table of a sweep directory (scripts/experiments/quickstart_seeds.sh).

Usage: scripts/experiments/seed_table.py runs/seeds/TAG [--markdown-only]

For every seedS/metrics.jsonl: held-out success after SFT (the evaluation at
step 0) and after RL (the last evaluation), greedy (eval/success_rate) and
sampled (eval_sampled/success_rate), the gains, and the run's wall time;
then mean +- sample std over seeds and on how many seeds RL beat SFT.
"""
import math
import pathlib
import re
import statistics
import sys

from metrics_rows import metrics_rows


def evals(path):
    """step -> {greedy, sampled} for every metrics row with an evaluation."""
    out = {}
    for row in metrics_rows(path):
        if "eval/success_rate" in row:
            out[row["step"]] = {
                "greedy": 100.0 * row["eval/success_rate"],
                "sampled": 100.0 * row.get("eval_sampled/success_rate", float("nan")),
            }
    return out


def pct(x, sign=False):
    """x as a table cell; "-" where the run has no such evaluation (nan)."""
    if math.isnan(x):
        return "-"
    return f"{x:+.1f}" if sign else f"{x:.1f}%"


def mean_std(xs):
    xs = [x for x in xs if not math.isnan(x)]  # configs without a sampled evaluation
    if not xs:
        return "-"
    if len(xs) == 1:
        return f"{xs[0]:.1f}"
    return f"{statistics.mean(xs):.1f} ± {statistics.stdev(xs):.1f}"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    dirs = sorted((d for d in root.glob("seed*") if d.is_dir()), key=lambda d: int(re.sub(r"\D", "", d.name) or 0))
    rows = []
    for d in dirs:
        m = d / "metrics.jsonl"
        if not m.exists() or not (d / "wall_s.txt").exists():
            print(f"{d.name}: unfinished, left out", file=sys.stderr)
            continue
        e = evals(m)
        if 0 not in e or len(e) < 2:
            print(f"{d.name}: needs an evaluation at step 0 and a later one, left out", file=sys.stderr)
            continue
        last = max(e)
        wall = float((d / "wall_s.txt").read_text()) / 60.0
        rows.append((d.name.replace("seed", ""), e[0], e[last], last, wall))
    if not rows:
        sys.exit(f"{root}: no finished seed runs")
    print("| seed | after SFT: greedy | sampled | after RL (iteration N): greedy | sampled | gain greedy | gain sampled | wall min |")
    print("|---|---|---|---|---|---|---|---|")
    cols = {k: [] for k in ("sg", "ss", "rg", "rs", "dg", "ds", "w")}
    for seed, sft, rl, last, wall in rows:
        dg, ds = rl["greedy"] - sft["greedy"], rl["sampled"] - sft["sampled"]
        print(f"| {seed} | {pct(sft['greedy'])} | {pct(sft['sampled'])} | {pct(rl['greedy'])} ({last}) | "
              f"{pct(rl['sampled'])} | {pct(dg, True)} | {pct(ds, True)} | {wall:.1f} |")
        for k, v in zip(cols, (sft["greedy"], sft["sampled"], rl["greedy"], rl["sampled"], dg, ds, wall)):
            cols[k].append(v)
    print(f"| mean ± std | {mean_std(cols['sg'])} | {mean_std(cols['ss'])} | {mean_std(cols['rg'])} | "
          f"{mean_std(cols['rs'])} | {mean_std(cols['dg'])} | {mean_std(cols['ds'])} | {mean_std(cols['w'])} |")
    n = len(rows)
    greedy = f"greedy on {sum(g > 0 for g in cols['dg'])} of {n} seeds"
    if any(math.isnan(s) for s in cols["ds"]):
        print(f"\nRL above SFT: {greedy} (no sampled evaluation in every run).")
        return
    both = sum(1 for g, s in zip(cols["dg"], cols["ds"]) if g > 0 and s > 0)
    print(f"\nRL above SFT: {greedy}, sampled on {sum(s > 0 for s in cols['ds'])} of {n}, both on {both} of {n}.")


if __name__ == "__main__":
    main()
