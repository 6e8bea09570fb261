#!/usr/bin/env python3
"""The table of scripts/bench/compare.sh (issue #20) from the files it wrote.

    compare_table.py DIR SHAPE_INDEX

DIR holds gemm.json (model_bench BM_Matmul), ops.json (engine_bench
BM_DecodeStepOps and BM_DecodeMatmulFloor), engine_R.json (engine_bench
BM_Engine, Google Benchmark's JSON) and python_R.txt
(python_generate_ref.py's lines) for rounds R = 1, 2, ..., and before_R.json
(BM_Engine against earlier libraries) when compare.sh had --before, and
long_engine_R.json (BM_EnginePrefill) with long_python_R.txt when it had
--long; SHAPE_INDEX is
the benchmarks' shape argument (0 tiny, 1 the 0.5B shape). Prints the GEMM
peak, the decode-step op counts, and per batch size the engine's and the
Python loop's prefill and decode tokens/s (medians over rounds) with their
ratio (median and range over rounds, each from one round), and the decode
step against its pure matmul time where that was measured; with --long's
files, also prefill tokens/s per batch x prompt length on both sides.
"""
import json
import re
import statistics
import sys
from pathlib import Path


def benchmarks(path):
    try:
        return json.loads(path.read_text())["benchmarks"]
    except (OSError, json.JSONDecodeError, KeyError) as e:
        sys.exit(f"compare_table: {path}: {e}")


def args_of(name):
    """'BM_Engine/0/8/64' -> [0, 8, 64] (a trailing '/real_time' is dropped)."""
    return [int(x) for x in name.split("/")[1:] if x.isdigit()]


def engine_round(path):
    out = {}
    for b in benchmarks(path):
        _, batch, _ = args_of(b["name"])
        out[batch] = {"prefill": b["prefill_tok/s"], "decode": b["decode_tok/s"], "step_ms": b["step_ms"]}
    return out


def python_round(path):
    out = {}
    for line in path.read_text().splitlines():
        m = re.search(r"batch=(\d+) .*prefill_tok/s=([\d.]+) decode_tok/s=([\d.]+)", line)
        if m:
            out[int(m.group(1))] = {"prefill": float(m.group(2)), "decode": float(m.group(3))}
    if not out:
        sys.exit(f"compare_table: {path}: no result lines from python_generate_ref.py")
    return out


def long_rounds(d, n):
    """Per round, {(batch, prompt): (engine prefill tok/s, Python prefill tok/s)}."""
    out = []
    for r in range(1, n + 1):
        eng = {tuple(args_of(b["name"])[1:3]): b["prefill_tok/s"] for b in benchmarks(d / f"long_engine_{r}.json")}
        py = {}
        for line in (d / f"long_python_{r}.txt").read_text().splitlines():
            m = re.search(r"batch=(\d+) prompt=(\d+) .*prefill_tok/s=([\d.]+)", line)
            if m:
                py[(int(m.group(1)), int(m.group(2)))] = float(m.group(3))
        out.append({k: (eng[k], py[k]) for k in eng if k in py})
    return out


def print_long(rounds):
    print("\nlong prompts (--long): prefill tokens/s, medians over rounds; ratio median (min-max) over rounds\n")
    print("| batch x prompt | prefill engine | prefill Python | engine / Python |")
    print("|---|---|---|---|")
    for k in sorted(rounds[0], key=lambda k: (-k[1], k[0])):
        e = [r[k][0] for r in rounds]
        p = [r[k][1] for r in rounds]
        rs = [a / b for a, b in zip(e, p)]
        print(f"| {k[0]} x {k[1]} | {statistics.median(e):,.0f} | {statistics.median(p):,.0f} "
              f"| {statistics.median(rs):.2f}x ({min(rs):.2f}-{max(rs):.2f}) |")


def ratio_cell(rounds_e, rounds_p, batch, key):
    rs = [e[batch][key] / p[batch][key] for e, p in zip(rounds_e, rounds_p)]
    med = statistics.median(rs)
    return f"{med:.2f}x ({min(rs):.2f}-{max(rs):.2f})" if len(rs) > 1 else f"{med:.2f}x"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    d, which = Path(sys.argv[1]), int(sys.argv[2])
    peak = max(b["GFLOP/s"] for b in benchmarks(d / "gemm.json"))  # the counter is a rate in GFLOP/s
    print(f"\nGEMM peak (BM_Matmul, 512-row products, best of the shapes): {peak:.1f} GFLOP/s")
    floors, ops = {}, {1: {}, 0: {}}
    for b in benchmarks(d / "ops.json"):
        a = args_of(b["name"])
        if b["name"].startswith("BM_DecodeStepOps"):  # {batch, fused kernels 1 / ATen ops 0}
            ops[a[1] if len(a) > 1 else 1][a[0]] = (int(b["top_level_ops"]), int(b["all_ops"]))
        elif a[0] == which:
            floors[a[1]] = b["real_time"]  # ms (the benchmark's unit)
    for fused, label in ((1, "fused kernels"), (0, "ATen ops, engine.fused_kernels=false")):
        print(f"tensor ops per decode step, tiny config, {label} (top level / all): "
              + ", ".join(f"batch {k}: {t} / {n}" for k, (t, n) in sorted(ops[fused].items())))
    n = len(list(d.glob("engine_*.json")))
    eng = [engine_round(d / f"engine_{r}.json") for r in range(1, n + 1)]
    py = [python_round(d / f"python_{r}.txt") for r in range(1, n + 1)]
    med = lambda rounds, b, k: statistics.median(r[b][k] for r in rounds)
    print(f"\n{n} rounds; tokens/s are medians over rounds, ratios median (min-max) over rounds\n")
    print("| batch | prefill engine | prefill Python | engine / Python | decode engine | decode Python | engine / Python "
          "| decode step ms | matmul floor ms | step / floor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for b in sorted(eng[0]):
        step = med(eng, b, "step_ms")
        floor = floors.get(b)
        print(f"| {b} | {med(eng, b, 'prefill'):,.0f} | {med(py, b, 'prefill'):,.0f} | {ratio_cell(eng, py, b, 'prefill')} "
              f"| {med(eng, b, 'decode'):,.1f} | {med(py, b, 'decode'):,.1f} | {ratio_cell(eng, py, b, 'decode')} "
              f"| {step:.2f} | {f'{floor:.2f}' if floor else '-'} | {f'{step / floor:.2f}x' if floor else '-'} |")
    if (d / "long_engine_1.json").exists():
        print_long(long_rounds(d, n))
    if (d / "before_1.json").exists():
        old = [engine_round(d / f"before_{r}.json") for r in range(1, n + 1)]
        print("\nthe engine against the --before libraries, same rounds\n")
        print("| batch | prefill before | prefill after | after / before | decode before | decode after | after / before |")
        print("|---|---|---|---|---|---|---|")
        for b in sorted(eng[0]):
            print(f"| {b} | {med(old, b, 'prefill'):,.0f} | {med(eng, b, 'prefill'):,.0f} | {ratio_cell(eng, old, b, 'prefill')} "
                  f"| {med(old, b, 'decode'):,.1f} | {med(eng, b, 'decode'):,.1f} | {ratio_cell(eng, old, b, 'decode')} |")


if __name__ == "__main__":
    main()
