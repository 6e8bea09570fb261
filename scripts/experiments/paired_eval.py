#!/usr/bin/env python3
"""Paired comparison of two evaluations of the same tasks (`agentrl eval --out`).

    scripts/experiments/paired_eval.py BEFORE:AFTER [BEFORE:AFTER ...] [--names N1,N2,...]

Each BEFORE and AFTER is an evaluation folder holding trajectories.jsonl (one
line per episode, with task_id and success). Per task, the success rate over
its episodes (1 for a greedy evaluation, N for `--sampled N`); then, over the
tasks both folders evaluated, the mean of AFTER - BEFORE, its standard error
and 95% interval (normal, over tasks), how many tasks went up and down, and
the two-sided sign test's p-value over the tasks that moved. One markdown row
a pair, then one for all pairs pooled (tasks of different pairs counted apart).
A paired difference is what separates a change from the noise of which
questions a run happened to get right: two runs over the same 500 questions
differ far less than two independent 500-question samples.
"""
import argparse
import json
import math
import os
import sys


def per_task(folder):
    path = os.path.join(folder, "trajectories.jsonl")
    if not os.path.isfile(path):
        sys.exit(f"paired_eval: {path}: no such file (expected an `agentrl eval --out` folder)")
    wins, n = {}, {}
    with open(path) as f:
        for line_no, line in enumerate(f, 1):
            try:
                ep = json.loads(line)
                task, ok = ep["task_id"], bool(ep["success"])
            except (ValueError, KeyError) as e:
                sys.exit(f"paired_eval: {path}:{line_no}: expected a JSON episode with task_id and success ({e})")
            wins[task] = wins.get(task, 0) + ok
            n[task] = n.get(task, 0) + 1
    return {t: wins[t] / n[t] for t in n}, sum(n.values())


def sign_test(up, down):
    """Two-sided exact binomial p-value of up vs down at p = 1/2."""
    m = up + down
    if m == 0:
        return 1.0
    k = min(up, down)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2.0**m
    return min(1.0, 2.0 * tail)


def compare(diffs):
    n = len(diffs)
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    se = math.sqrt(var / n)
    up = sum(d > 0 for d in diffs)
    down = sum(d < 0 for d in diffs)
    return mean, se, up, down, sign_test(up, down)


def row(name, before, after, diffs, episodes):
    mean, se, up, down, p = compare(diffs)
    return (f"| {name} | {len(diffs)} | {episodes[0]} / {episodes[1]} | {100 * before:.1f}% | {100 * after:.1f}% | "
            f"{100 * mean:+.1f} ± {100 * se:.1f} ({100 * (mean - 1.96 * se):+.1f} .. {100 * (mean + 1.96 * se):+.1f}) | "
            f"{up} / {down} | {'< 0.001' if p < 0.001 else f'{p:.3f}'} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs", nargs="+", help="BEFORE:AFTER evaluation folders")
    ap.add_argument("--names", default="", help="comma-separated row names (default: the AFTER folders)")
    a = ap.parse_args()
    names = a.names.split(",") if a.names else []
    if names and len(names) != len(a.pairs):
        sys.exit(f"paired_eval: --names has {len(names)} names for {len(a.pairs)} pairs")
    rows, pooled, pb, pa, pe = [], [], [], [], [0, 0]
    for i, pair in enumerate(a.pairs):
        if pair.count(":") != 1:
            sys.exit(f"paired_eval: '{pair}': expected BEFORE:AFTER")
        fb, fa = pair.split(":")
        (b, nb), (c, na) = per_task(fb), per_task(fa)
        tasks = sorted(set(b) & set(c))
        if not tasks:
            sys.exit(f"paired_eval: {fb} and {fa} share no task_id")
        diffs = [c[t] - b[t] for t in tasks]
        before = sum(b[t] for t in tasks) / len(tasks)
        after = sum(c[t] for t in tasks) / len(tasks)
        rows.append(row(names[i] if names else fa, before, after, diffs, (nb, na)))
        pooled += diffs
        pb += [b[t] for t in tasks]
        pa += [c[t] for t in tasks]
        pe = [pe[0] + nb, pe[1] + na]
    if len(a.pairs) > 1:
        rows.append(row("pooled", sum(pb) / len(pb), sum(pa) / len(pa), pooled, pe))
    print("| pair | tasks | episodes before / after | before | after | after - before (95% interval) "
          "| tasks up / down | sign test p |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
