#!/usr/bin/env python3
"""The estimator comparison table (scripts/experiments/compare_estimators.sh).

Usage: compare_estimators.py [--seeds "1 2 3"] [--plot FILE.png] NAME=runs/seeds/TAG [NAME=DIR ...]

For each estimator NAME and seed S (DIR/seedS/metrics.jsonl of a finished
run): held-out success after SFT (step 0) and after RL (the last
evaluation), greedy and sampled; mean +- sample std over the seeds that every
estimator finished; the paired difference against grpo per seed (when grpo
is listed) and on how many seeds the estimator beat grpo; EMPG's diagnostics
(mean over iterations of empg/amplified_frac, empg/attenuated_frac,
empg/g_min, empg/g_max) and Li's logit-update norm (actor/logit_update_norm,
mean over iterations). --plot draws the learning curves (held-out success,
greedy and sampled, mean over the common seeds with the range as a band) of
every estimator in one figure (needs matplotlib).
"""
import pathlib
import statistics
import sys

from metrics_rows import metrics_rows


def read_run(d):
    """(evaluations by step, per-iteration rows, steps without an update) of a
    finished run, or None. A run whose last iterations had nothing to train
    (every group failed or was filtered) has no final evaluation when the
    binary predates the trainer fix of 2026-12-04: it is returned with only
    its step-0 evaluation."""
    m = d / "metrics.jsonl"
    if not m.exists() or not (d / "wall_s.txt").exists():
        return None
    evals, iters, idle, train = {}, [], [], {}
    for row in metrics_rows(m):
        if "eval/success_rate" in row:
            evals[row["step"]] = (100 * row["eval/success_rate"], 100 * row.get("eval_sampled/success_rate", float("nan")))
        if row.get("step", 0) > 0 and "rollout/success_rate" in row:
            train[row["step"]] = 100 * row["rollout/success_rate"]
        if row.get("step", 0) > 0 and "actor/logit_update_norm" in row:
            iters.append(row)
        elif row.get("step", 0) > 0 and "actor/pg_loss" not in row:
            idle.append(row["step"])
    if 0 not in evals:
        return None
    return evals, iters, idle, train


def ms(xs):
    if not xs:
        return "-"
    return f"{statistics.mean(xs):.1f}" + (f" ± {statistics.stdev(xs):.1f}" if len(xs) > 1 else "")


def mean_of(rows, key):
    xs = [r[key] for r in rows if key in r]
    return statistics.mean(xs) if xs else None


def plot(runs, common, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for name, found in runs.items():
        steps = sorted(set.intersection(*(set(found[s][3]) for s in common)))
        vals = [[found[s][3][t] for s in common] for t in steps]
        axes[0].plot(steps, [statistics.mean(v) for v in vals], marker=".", label=name)
    axes[0].set_title("training rollouts: success per iteration")
    axes[0].set_xlabel("RL iteration")
    for col, (ax, title) in enumerate(zip(axes[1:], ["greedy", "sampled"])):
        for name, found in runs.items():
            steps = sorted(set.intersection(*(set(found[s][0]) for s in common)))
            vals = [[found[s][0][t][col] for s in common] for t in steps]
            ax.plot(steps, [statistics.mean(v) for v in vals], marker="o", label=name)
            ax.fill_between(steps, [min(v) for v in vals], [max(v) for v in vals], alpha=0.1)
        ax.set_title(f"held-out, {title} (band: range over seeds)")
        ax.set_xlabel("RL iteration (0 = after SFT)")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"success (%), mean of seeds {' '.join(map(str, common))}")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"figure: {path}")


def main(argv):
    seeds = None
    plot_path = None
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--seeds":
            seeds = [int(s) for s in argv[i + 1].split()]
            i += 2
        elif argv[i] == "--plot":
            plot_path = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if not args or any("=" not in a for a in args):
        sys.exit(__doc__)
    runs = {}
    stuck = []
    for a in args:
        name, path = a.split("=", 1)
        root = pathlib.Path(path)
        found = {}
        for d in root.glob("seed*"):
            if d.is_dir() and d.name[4:].isdigit() and (seeds is None or int(d.name[4:]) in seeds):
                r = read_run(d)
                if r is None:
                    continue
                if len(r[0]) >= 2:
                    found[int(d.name[4:])] = r
                else:
                    stuck.append(f"{name} seed {d.name[4:]}: no final evaluation; no update in iterations "
                                 f"{' '.join(map(str, r[2]))} (every group failed or was filtered)")
        runs[name] = found
    common = sorted(set.intersection(*(set(r) for r in runs.values()))) if runs else []
    print(f"Seeds finished by every estimator: {' '.join(map(str, common)) or 'none'}")
    for line in stuck:
        print("  " + line)
    for name, found in runs.items():
        extra = sorted(set(found) - set(common))
        if extra:
            print(f"  {name} also finished seeds {' '.join(map(str, extra))} (left out of the table)")
    print()
    print("| estimator | after SFT: greedy | sampled | after RL: greedy | sampled | vs grpo: greedy | sampled | "
          "seeds above grpo (greedy / sampled) | logit-update norm | EMPG amplified / attenuated | EMPG g range |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    base = runs.get("grpo")
    for name, found in runs.items():
        sft_g = [found[s][0][0][0] for s in common]
        sft_s = [found[s][0][0][1] for s in common]
        last = {s: found[s][0][max(found[s][0])] for s in common}
        rl_g = [last[s][0] for s in common]
        rl_s = [last[s][1] for s in common]
        paired = "- | - | -"
        if base is not None and name != "grpo":
            bl = {s: base[s][0][max(base[s][0])] for s in common}
            dg = [last[s][0] - bl[s][0] for s in common]
            dsa = [last[s][1] - bl[s][1] for s in common]
            paired = (f"{ms(dg)} | {ms(dsa)} | {sum(x > 0 for x in dg)} / {sum(x > 0 for x in dsa)} of {len(common)}")
        rows = [r for s in common for r in found[s][1]]
        lun = mean_of(rows, "actor/logit_update_norm")
        amp, att = mean_of(rows, "empg/amplified_frac"), mean_of(rows, "empg/attenuated_frac")
        gmin, gmax = mean_of(rows, "empg/g_min"), mean_of(rows, "empg/g_max")
        empg = f"{amp:.2f} / {att:.2f}" if amp is not None else "-"
        grange = f"{gmin:.2f}–{gmax:.2f}" if gmin is not None else "-"
        print(f"| {name} | {ms(sft_g)} | {ms(sft_s)} | {ms(rl_g)} | {ms(rl_s)} | {paired} | "
              f"{lun:.4f} | {empg} | {grange} |" if lun is not None else
              f"| {name} | {ms(sft_g)} | {ms(sft_s)} | {ms(rl_g)} | {ms(rl_s)} | {paired} | - | {empg} | {grange} |")
    print()
    print("Per seed, after RL greedy / sampled (%):")
    print("| seed | " + " | ".join(runs) + " |")
    print("|---|" + "---|" * len(runs))
    for s in common:
        cells = []
        for found in runs.values():
            g, sa = found[s][0][max(found[s][0])]
            cells.append(f"{g:.1f} / {sa:.1f}")
        print(f"| {s} | " + " | ".join(cells) + " |")
    if plot_path and common:
        plot(runs, common, plot_path)


if __name__ == "__main__":
    main(sys.argv[1:])
