#!/usr/bin/env python3
"""SimpleTIR's void-turn filter, with and without, over seeds (issue #22).

Usage: scripts/experiments/filter_table.py NAME=runs/seeds/TAG[:SFT_SWEEP] [NAME=DIR ...]

Each DIR is a sweep of scripts/experiments/quickstart_seeds.sh (seedS/
metrics.jsonl of finished runs). Per sweep and seed: held-out accuracy after
SFT (the step-0 evaluation) and after RL (the last one), greedy and sampled;
the share of correct greedy answers reached through code
(eval/env/solved_with_code / eval/success_rate) after RL; then over the RL
iterations: the void-turn rate of the rollouts (void_turn/flagged_rate, or
rollout/void_turn_rate when the filter is off), the gradient norm before clipping
(largest actor/grad_norm_max of the run, mean and largest per-iteration
actor/grad_norm_p99) and the share of low-probability tokens in the update
(actor/low_prob_frac, mean). Last, mean +- sample std over the seeds.
A sweep whose runs started from another sweep's SFT checkpoints (no SFT
stage, so no step-0 evaluation; scripts/experiments/filter_ablation.sh)
names that sweep after a colon: its seed's step-0 evaluation is the "after
SFT" column.
"""
import pathlib
import re
import statistics
import sys

from metrics_rows import metrics_rows


def read(path):
    evals, iters = {}, []
    for row in metrics_rows(path):
        if "eval/success_rate" in row:
            evals[row["step"]] = row
        if row.get("step", 0) > 0 and "rollout/episodes" in row:
            iters.append(row)
    return evals, iters


def void_rate(row):
    for key in ("void_turn/flagged_rate", "rollout/void_turn_rate"):
        if key in row:
            return 100.0 * row[key]
    return float("nan")


def seed_row(d, sft_sweep=None):
    evals, iters = read(d / "metrics.jsonl")
    if sft_sweep is not None:
        sft_evals, _ = read(sft_sweep / d.name / "metrics.jsonl")
        if 0 not in sft_evals:
            return None
        evals[0] = sft_evals[0]
    if 0 not in evals or len(evals) < 2 or not iters:
        return None
    sft, rl = evals[0], evals[max(evals)]
    pct = lambda r, k: 100.0 * r.get(k, float("nan"))
    code_share = (100.0 * rl["eval/env/solved_with_code"] / rl["eval/success_rate"]
                  if rl.get("eval/success_rate", 0) > 0 and "eval/env/solved_with_code" in rl else float("nan"))
    trained = [r for r in iters if "actor/grad_norm_max" in r]
    gmax = max((r["actor/grad_norm_max"] for r in trained), default=float("nan"))
    p99 = [r["actor/grad_norm_p99"] for r in trained]
    low = [100.0 * r["actor/low_prob_frac"] for r in trained if "actor/low_prob_frac" in r]
    return {
        "sft_g": pct(sft, "eval/success_rate"), "sft_s": pct(sft, "eval_sampled/success_rate"),
        "rl_g": pct(rl, "eval/success_rate"), "rl_s": pct(rl, "eval_sampled/success_rate"),
        "code": code_share,
        "void": statistics.mean([void_rate(r) for r in iters]),
        "gmax": gmax,
        "p99_mean": statistics.mean(p99) if p99 else float("nan"),
        "p99_max": max(p99) if p99 else float("nan"),
        "low": statistics.mean(low) if low else float("nan"),
        "steps": len(trained),
    }


COLS = [("sft_g", "after SFT greedy %", 1), ("sft_s", "sampled %", 1), ("rl_g", "after RL greedy %", 1),
        ("rl_s", "sampled %", 1), ("code", "solved through code %", 0), ("void", "void-turn rate %", 2),
        ("gmax", "grad norm max", 3), ("p99_mean", "p99 per iteration: mean", 3), ("p99_max", "max", 3),
        ("low", "low-prob tokens %", 2)]


def fmt(x, digits):
    return "-" if x != x else f"{x:.{digits}f}"


def main():
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        sys.exit(__doc__)
    print("| run | seed | " + " | ".join(c[1] for c in COLS) + " |")
    print("|---|---|" + "---|" * len(COLS))
    for arg in sys.argv[1:]:
        name, root = arg.split("=", 1)
        root, _, sft_sweep = root.partition(":")
        root, sft_sweep = pathlib.Path(root), (pathlib.Path(sft_sweep) if sft_sweep else None)
        rows = []
        for d in sorted((d for d in root.glob("seed*") if d.is_dir()), key=lambda d: int(re.sub(r"\D", "", d.name) or 0)):
            if not (d / "wall_s.txt").exists():
                print(f"{name}/{d.name}: unfinished, left out", file=sys.stderr)
                continue
            r = seed_row(d, sft_sweep)
            if r is None:
                print(f"{name}/{d.name}: no evaluations or iterations, left out", file=sys.stderr)
                continue
            rows.append(r)
            print(f"| {name} | {d.name[4:]} | " + " | ".join(fmt(r[k], p) for k, _, p in COLS) + " |")
        if len(rows) > 1:
            cells = []
            for k, _, p in COLS:
                xs = [r[k] for r in rows if r[k] == r[k]]
                cells.append("-" if not xs else fmt(statistics.mean(xs), p) +
                             (f" ± {statistics.stdev(xs):.{p}f}" if len(xs) > 1 else ""))
            print(f"| {name} | mean ± std | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
