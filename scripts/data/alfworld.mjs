// alfworld: checks an ALFWorld download as `alfworld-download` lays it out
// ($ALFWORLD_DATA/json_2.1.1/<split>/<task>-<Obj>-<MRecep>-<Recep>-<scene>/
// <trial>/{traj_data.json, initial_state.pddl, game.tw-pddl}) and prints the
// config keys. agentrl reads the game.tw-pddl files directly
// (src/envs/alfworld/game_dir.cpp); this check applies the same rules:
// games at depth <split>/<task>/<trial>/game.tw-pddl, JSON objects with string
// 'pddl_problem' and 'grammar', ALFWorld's filters (paths with "movable" or
// "Sliced" skipped, "solvable": true required). Nothing is converted.
import fs from 'node:fs'
import path from 'node:path'

import { DataError } from './common.mjs'

const KIND = 'alfworld'
// Playable games per split in ALFWorld's json_2.1.1 (its papers' counts).
const ALFWORLD_COUNTS = { train: 3553, valid_seen: 140, valid_unseen: 134 }
const LAYOUT = '<split>/<task>/<trial>/game.tw-pddl'

const subdirs = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort()

// The json_2.1.1 folder: `dir` itself, or its json_2.1.1 sub-folder when
// `dir` is the whole $ALFWORLD_DATA.
function gamesRoot(dir) {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw new DataError(`${KIND}: ${dir}: no such directory (expected ALFWorld's json_2.1.1 folder, as alfworld-download lays it out)`)
  const names = subdirs(dir)
  if (!names.some((n) => n in ALFWORLD_COUNTS) && names.includes('json_2.1.1')) return path.join(dir, 'json_2.1.1')
  return dir
}

// Counts of one split folder; throws on a malformed game file or one at the
// wrong depth.
function checkSplit(root, split) {
  const s = { games: 0, filtered: 0, unsolvable: 0, noGameFile: 0 }
  const walk = (dir, depth) => {
    const entries = fs.readdirSync(dir, { withFileTypes: true })
    const hasGame = entries.some((e) => e.isFile() && e.name === 'game.tw-pddl')
    if (hasGame && depth !== 2)
      throw new DataError(`${KIND}: ${path.join(dir, 'game.tw-pddl')} is not at ${LAYOUT} under ${root}; ` +
                          `pass the folder that holds train/, valid_seen/, valid_unseen/`)
    if (hasGame) checkGame(root, path.join(dir, 'game.tw-pddl'), s)
    else if (entries.some((e) => e.isFile() && e.name === 'traj_data.json')) ++s.noGameFile
    for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name), depth + 1)
  }
  walk(path.join(root, split), 0)
  return s
}

// One game.tw-pddl: filtered by path, parsed, its fields and 'solvable' read.
function checkGame(root, file, s) {
  const rel = path.relative(root, file)
  if (rel.includes('movable') || rel.includes('Sliced')) {
    ++s.filtered
    return
  }
  let j
  try {
    j = JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch (e) {
    throw new DataError(`${KIND}: ${file}: malformed game.tw-pddl JSON (${e.message})`)
  }
  if (!j || typeof j !== 'object' || typeof j.pddl_problem !== 'string' || typeof j.grammar !== 'string')
    throw new DataError(`${KIND}: ${file}: expected a JSON object with string fields 'pddl_problem' and 'grammar'`)
  if (j.solvable === true) ++s.games
  else ++s.unsolvable
}

export function checkAlfworld(dir, { evalOnly }) {
  const root = gamesRoot(dir)
  const present = subdirs(root)
  const required = evalOnly ? ['valid_seen', 'valid_unseen'] : ['train', 'valid_seen', 'valid_unseen']
  for (const split of required)
    if (!present.includes(split))
      throw new DataError(`${KIND}: ${root}: split folder '${split}' is missing (expected ${path.join(root, split)}/<task>/<trial>/game.tw-pddl` +
                          (split === 'train' ? '; pass --eval-only to check a download without train' : '') + ')')
  console.log(`${KIND}: ${root}`)
  let total = 0
  for (const split of present) {
    const s = checkSplit(root, split)
    if (s.games === 0 && !required.includes(split)) continue
    if (s.games === 0) {
      const why = s.noGameFile
        ? `${s.noGameFile} trials have traj_data.json but no game.tw-pddl (alfworld-download's json_2.1.1_tw-pddl.zip part is missing)`
        : `no ${LAYOUT} files`
      throw new DataError(`${KIND}: ${path.join(root, split)}: no playable games: ${why}`)
    }
    total += s.games
    const ref = ALFWORLD_COUNTS[split] ? ` (ALFWorld: ${ALFWORLD_COUNTS[split]})` : ''
    const notes = []
    if (s.filtered) notes.push(`${s.filtered} movable/Sliced skipped`)
    if (s.unsolvable) notes.push(`${s.unsolvable} not solvable skipped`)
    if (s.noGameFile) notes.push(`${s.noGameFile} trials without game.tw-pddl`)
    console.log(`  ${split}: ${s.games} games${ref}${notes.length ? '; ' + notes.join(', ') : ''}`)
    if (ALFWORLD_COUNTS[split] && s.games !== ALFWORLD_COUNTS[split])
      console.log(`  warning: ${split} has ${s.games} games, ALFWorld's json_2.1.1 has ${ALFWORLD_COUNTS[split]}`)
  }
  console.log(`  ${total} games in all; config keys:`)
  console.log(`    alfworld.data_dir=${path.resolve(root)}`)
  console.log('    alfworld.eval_split=valid_seen (in distribution) or valid_unseen (out of distribution)')
  if (evalOnly && !present.includes('train')) console.log('  note: no train split: evaluation only (agentrl trains on train)')
}
