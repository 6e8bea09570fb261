#!/usr/bin/env python3
"""Where an ALFWorld policy goes wrong: its invalid actions by kind, from
`agentrl eval` trajectories.

    alfworld_failures.py EVAL_DIR...

Each EVAL_DIR holds the trajectories.jsonl that `agentrl eval --out EVAL_DIR`
wrote (window or full context, built-in or real games). Every invalid turn
(the env answered "Nothing happens.") falls in exactly one kind, checked in
this order:
  unterminated   the response never closed its action tag (it ran to
                 rollout.max_new_tokens, usually repeating a phrase)
  go: here       "go to X" while standing at X
  go: absent     "go to X" where the room has no X
  take: unseen   "take O from R" where the current observation does not
                 name O (a wrong instance number or an object elsewhere)
  take: away     "take O from R" where R is not the place the agent stands at
  other          any other command the env refused
and every lost episode is marked "stuck" when its last 10 actions are at most
2 distinct commands. "revisits" is the share of the accepted "go to"
commands of the lost episodes that go back to a place the episode went to
before (a policy that cannot remember where it searched walks in circles
without being "stuck"). "foreign" is the share of the lost episodes that
carried out a step of another task type: an accepted clean / heat / cool /
use command where the task's own type does not call for it (heating the
object of a cooling task, using a lamp in a cleaning task): a policy that
does not read its task. The place the agent stands at is followed through its
accepted "go to" commands; the room's receptacles come from the first
observation. Prints one markdown row per directory.
"""
import json
import re
import sys
from collections import Counter
from pathlib import Path

KINDS = ["unterminated", "go: here", "go: absent", "take: unseen", "take: away", "other"]
# The task-type steps and the task types whose games call for them.
TYPE_STEPS = {"clean ": "pick_clean_then_place_in_recep", "heat ": "pick_heat_then_place_in_recep",
              "cool ": "pick_cool_then_place_in_recep", "use ": "look_at_obj_in_light"}


def room_receptacles(first_observation):
    room = first_observation.split("Your task is to:")[0]
    return set(re.findall(r"\ban? ([a-z]+ \d+)", room))


def invalid_kind(turn, here, receptacles):
    action = turn["action"]
    if "</action>" not in turn.get("response", "</action>"):
        return "unterminated"
    if action.startswith("go to "):
        target = action[len("go to "):]
        if target == here:
            return "go: here"
        if target not in receptacles:
            return "go: absent"
        return "other"
    m = re.match(r"take (.+) from (.+)$", action)
    if m:
        if m.group(1) not in turn["observation_before"]:
            return "take: unseen"
        if m.group(2) != here:
            return "take: away"
    return "other"


def analyse(path):
    kinds, turns, lost, stuck, won_steps = Counter(), 0, 0, 0, []
    goes, revisits = 0, 0  # accepted "go to" of lost episodes, and those to a place seen before
    foreign = 0  # lost episodes with an accepted step of another task type
    with open(path) as f:
        for line in f:
            ep = json.loads(line)
            ts = ep["turns"]
            if not ts:
                continue
            receptacles, here = room_receptacles(ts[0]["observation_before"]), None
            visited, ep_goes, ep_revisits, ep_foreign = set(), 0, 0, False
            for t in ts:
                turns += 1
                if t["invalid_action"]:
                    kinds[invalid_kind(t, here, receptacles)] += 1
                    continue
                ep_foreign |= any(t["action"].startswith(v) and ep["task_type"] != tt for v, tt in TYPE_STEPS.items())
                if t["action"].startswith("go to "):
                    here = t["action"][len("go to "):]
                    ep_goes += 1
                    ep_revisits += here in visited
                    visited.add(here)
            if ep["success"]:
                won_steps.append(len(ts))
            else:
                lost += 1
                goes += ep_goes
                revisits += ep_revisits
                foreign += ep_foreign
                stuck += len({t["action"] for t in ts[-10:]}) <= 2 and len(ts) >= 10
    return kinds, turns, lost, stuck, won_steps, (revisits, goes), foreign


def main(dirs):
    if not dirs:
        sys.exit(__doc__)
    print("| run | turns | invalid | " + " | ".join(KINDS) + " | lost | stuck | revisits | foreign | steps to win |")
    print("|---|" + "---|" * (len(KINDS) + 7))
    for d in dirs:
        path = Path(d) / "trajectories.jsonl"
        try:
            kinds, turns, lost, stuck, won, (revisits, goes), foreign = analyse(path)
        except (OSError, json.JSONDecodeError, KeyError) as e:
            sys.exit(f"alfworld_failures: {path}: {e}")
        invalid = sum(kinds.values())
        share = lambda n, of: f"{n / of:.2f}" if of else "-"
        row = [Path(d).name, str(turns), share(invalid, turns)] + [share(kinds[k], invalid) for k in KINDS]
        row += [str(lost), share(stuck, lost), share(revisits, goes), share(foreign, lost), f"{sum(won) / len(won):.1f}" if won else "-"]
        print("| " + " | ".join(row) + " |")
    print("\ninvalid: share of turns; kinds: share of the invalid turns; stuck, foreign: shares of the lost episodes; revisits: share of the lost episodes' go-to commands")


if __name__ == "__main__":
    main(sys.argv[1:])
