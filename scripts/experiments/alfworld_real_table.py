#!/usr/bin/env python3
"""Per-task-type success table of `agentrl eval` runs on ALFWorld's real games.

    alfworld_real_table.py EVAL_DIR...

Each EVAL_DIR holds the metrics.json that `agentrl eval --out EVAL_DIR`
wrote; its name is the row label (e.g. seed1_sft_valid_unseen). Prints one
markdown row per directory with the columns the GiGPO/EMPG papers use (all,
pick, look, clean, heat, cool, pick2), as success rate and successes/episodes,
then, for labels that differ only in their seed ("seedN_..."), the mean and
standard deviation over seeds of the "all" column.
"""
import json
import re
import statistics
import sys
from pathlib import Path

COLUMNS = [
    ("pick", "pick_and_place_simple"),
    ("look", "look_at_obj_in_light"),
    ("clean", "pick_clean_then_place_in_recep"),
    ("heat", "pick_heat_then_place_in_recep"),
    ("cool", "pick_cool_then_place_in_recep"),
    ("pick2", "pick_two_obj_and_place"),
]


def cell(successes, episodes):
    if episodes == 0:
        return "-"
    return f"{successes / episodes:.3f} ({successes}/{episodes})"


def main(dirs):
    if not dirs:
        sys.exit(__doc__)
    print("| run | all | " + " | ".join(c for c, _ in COLUMNS) + " | invalid actions | mean steps | context cut |")
    print("|---|" + "---|" * (len(COLUMNS) + 4))
    by_label = {}
    for d in dirs:
        path = Path(d) / "metrics.json"
        try:
            m = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            sys.exit(f"alfworld_real_table: {path}: {e}")
        per = m.get("per_task_type", {})
        ok = round(m["success_rate"] * m["episodes"])
        row = [Path(d).name, cell(ok, m["episodes"])]
        for _, name in COLUMNS:
            t = per.get(name, {"successes": 0, "episodes": 0})
            row.append(cell(t["successes"], t["episodes"]))
        row += [f"{m.get('invalid_action_ratio', 0):.3f}", f"{m.get('mean_turns', 0):.1f}", str(m.get("context_cut", 0))]
        print("| " + " | ".join(row) + " |")
        label = re.sub(r"^seed\d+_", "", Path(d).name)
        by_label.setdefault(label, []).append(m["success_rate"])
    print()
    for label, rates in by_label.items():
        if len(rates) > 1:
            print(f"{label}: {statistics.mean(rates) * 100:.1f} +- {statistics.stdev(rates) * 100:.1f} % over {len(rates)} seeds")


if __name__ == "__main__":
    main(sys.argv[1:])
