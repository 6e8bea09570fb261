// math: math problem sets -> the code-tool env's math JSONL
// (codetool.train_file / codetool.test_file), one object per line:
//   {"id": ..., "problem": ..., "answer": ..., "type": ...}
//
// Inputs, parquet or JSONL:
// * verl layout (SimpleTIR's datasets/deepscaler/{train,aime,aime25}.parquet,
//   datasets/simplelr_math_35/{train,test}.parquet, DeepScaleR, verl's
//   examples/data_preprocess/math_dataset.py): prompt [{role, content}],
//   reward_model {style, ground_truth: "<answer>"}, data_source, extra_info
//   {split, index, ...}.
// * plain columns: problem (or question), answer (or solution with a
//   \boxed{} answer), optional id / unique_id, type / subject (MATH500 on
//   Hugging Face: problem, solution, answer, subject, level, unique_id).
//
// problem: a 'problem'/'question' column, else extra_info.problem/question,
// else the last user message of 'prompt' with a known instruction wrapper
// removed (INSTRUCTION_WRAPPERS); a message without a known wrapper is kept
// whole. SimpleTIR's own files hold the bare problem in the user message.
// answer: reward_model.ground_truth, else an 'answer' column, else
// extra_info.answer, else the last \boxed{} of a 'solution' column.
// type: data_source, else a 'type' column, else 'subject'.
import path from 'node:path'

import { DataError, describe, formatCounts, increment, readLines, requireFile, scalarText, splitOf, writeJsonlAtomically } from './common.mjs'
import { jsonMembers } from './json_stream.mjs'
import { ParquetFile } from './parquet.mjs'
import { userMessage } from './search_r1.mjs'

const KIND = 'math'

// Instructions that preprocessing scripts wrap around the problem text
// (suffixes are matched with or without their final period).
export const INSTRUCTION_WRAPPERS = [
  // verl examples/data_preprocess/math_dataset.py, DeepScaleR's verl data
  { name: 'verl/DeepScaleR "Let\'s think step by step ... \\boxed{}."',
    suffix: "Let's think step by step and output the final answer within \\boxed{}." },
  // Qwen2.5-Math / lighteval
  { name: 'Qwen-Math "Please reason step by step ... \\boxed{}."',
    suffix: 'Please reason step by step, and put your final answer within \\boxed{}.' },
  // DAPO-Math-17k / open-r1: "Solve the following ...\n\n<problem>\n\nRemember ..."
  { name: 'DAPO "Solve the following math problem step by step ... Answer:"',
    prefix: 'Solve the following math problem step by step.',
    suffix: 'Remember to put your answer on its own line after "Answer:".' },
]

// `body` without `suffix` (or `suffix` less its final period) at its end;
// null when it does not end so.
function withoutSuffix(body, suffix) {
  const t = body.trimEnd()
  for (const s of [suffix, suffix.replace(/\.$/, '')])
    if (t.endsWith(s)) return t.slice(0, -s.length)
  return null
}

// {problem, wrapper} with the first matching wrapper removed; wrapper null
// when none matched (the text is returned trimmed).
export function stripInstruction(text) {
  const t = text.trim()
  for (const w of INSTRUCTION_WRAPPERS) {
    let body = t
    if (w.prefix) {
      const cut = body.indexOf('\n\n')
      if (!body.startsWith(w.prefix) || cut < 0) continue
      body = body.slice(cut + 2)
    }
    body = withoutSuffix(body, w.suffix)
    if (body !== null && body.trim()) return { problem: body.trim(), wrapper: w.name }
  }
  return { problem: t, wrapper: null }
}

// The text inside the last \boxed{...} (or \fbox{...}) of `text`, braces
// balanced, as the code-tool env's last_boxed does; null if none.
export function lastBoxed(text) {
  let best = -1, len = 0
  for (const cmd of ['\\boxed{', '\\fbox{']) {
    const p = text.lastIndexOf(cmd)
    if (p > best) { best = p; len = cmd.length }
  }
  if (best < 0) return null
  let depth = 0
  for (let i = best + len - 1; i < text.length; ++i) {
    if (text[i] === '{') ++depth
    if (text[i] === '}' && --depth === 0) return text.slice(best + len, i)
  }
  return null
}

// Case-insensitive field lookup: {key, value} of `name` in `row`, or null
// when the row has no such field (Hugging Face copies spell "Problem").
function field(row, name) {
  if (!row || typeof row !== 'object') return null
  if (name in row) return { key: name, value: row[name] }
  for (const k of Object.keys(row)) if (k.toLowerCase() === name) return { key: k, value: row[k] }
  return null
}

// A non-empty string field or an error naming it.
function stringField(f, where, label) {
  if (typeof f.value !== 'string' || !f.value.trim())
    throw new DataError(`${where}: ${label} '${f.key}' is ${describe(f.value)} (expected a non-empty string)`)
  return f.value.trim()
}

function problemOf(row, where) {
  for (const name of ['problem', 'question']) {
    const f = field(row, name)
    if (f) return { problem: stringField(f, where, 'column'), origin: `column '${f.key}'` }
  }
  for (const name of ['problem', 'question']) {
    const f = field(row.extra_info, name)
    if (f && f.value !== null) return { problem: stringField(f, where, 'extra_info field'), origin: `extra_info.${f.key}` }
  }
  if (field(row, 'prompt')) {
    const content = userMessage(row.prompt)
    if (content === null || !content.trim())
      throw new DataError(`${where}: column 'prompt' has no user message (expected a list of {role, content} with role 'user')`)
    const s = stripInstruction(content)
    return { problem: s.problem, origin: s.wrapper ? `prompt, instruction removed: ${s.wrapper}` : 'prompt, user message as is' }
  }
  throw new DataError(`${where}: no problem: expected a column 'problem' (or 'question'), or verl's 'prompt' message list`)
}

// The answer as text; numbers (AIME) become their decimal text.
function answerOf(row, where) {
  const truth = row.reward_model?.ground_truth
  if (truth !== undefined && truth !== null) {
    const one = Array.isArray(truth) && truth.length === 1 ? truth[0] : truth
    const text = scalarText(one)
    if (text === null)
      throw new DataError(`${where}: reward_model.ground_truth is ${describe(truth)} (expected a string answer)`)
    return text.trim()
  }
  for (const [f, label] of [[field(row, 'answer'), 'column'], [field(row.extra_info, 'answer'), 'extra_info field']]) {
    if (!f || f.value === null) continue
    const text = scalarText(f.value)
    if (text === null)
      throw new DataError(`${where}: ${label} '${f.key}' is ${describe(f.value)} (expected a string or a number)`)
    return text.trim()
  }
  const s = field(row, 'solution')
  if (s && typeof s.value === 'string') {
    const boxed = lastBoxed(s.value)
    if (boxed === null || !boxed.trim())
      throw new DataError(`${where}: column '${s.key}' has no \\boxed{...} answer and there is no 'answer' column`)
    return boxed.trim()
  }
  throw new DataError(`${where}: no answer: expected reward_model.ground_truth (verl), a column 'answer', or a column 'solution' with a \\boxed{} answer`)
}

function typeOf(row) {
  for (const name of ['data_source', 'type', 'subject']) {
    const f = field(row, name)
    if (f && typeof f.value === 'string' && f.value) return f.value
  }
  return ''
}

// id column, else unique_id, else <data_source>-<split>-<index> from
// extra_info, else <file stem>-<row>.
function idOf(row, rowIndex, stem) {
  for (const name of ['id', 'unique_id']) {
    const f = field(row, name)
    const text = f ? scalarText(f.value) : null
    if (text) return text
  }
  const index = scalarText(row.extra_info?.index)
  if (index !== null) return [row.data_source || stem, row.extra_info?.split, index].filter((p) => p).join('-')
  return `${stem}-${rowIndex}`
}

// Yields [label, number, row] from a parquet file (rows numbered from 0, as
// pandas), a JSONL file (lines numbered from 1) or a .json file holding one
// array of objects (records numbered from 0).
async function* inputRows(input) {
  if (input.endsWith('.parquet')) {
    const pq = await ParquetFile.open(KIND, input)
    for await (const [r, row] of pq.rows()) yield [`row ${r}`, r, row]
    return
  }
  const isObject = (v) => v && typeof v === 'object' && !Array.isArray(v)
  if (input.endsWith('.json')) {
    for await (const m of jsonMembers(input, KIND)) {
      if (m.key !== null) throw new DataError(`${KIND}: ${input}: expected a JSON array of problems, found an object`)
      if (!isObject(m.value)) throw new DataError(`${KIND}: ${input} record ${m.index}: expected an object, got ${describe(m.value)}`)
      yield [`record ${m.index}`, m.index, m.value]
    }
    return
  }
  for await (const [n, line] of readLines(input)) {
    if (!line.trim()) continue
    let row
    try {
      row = JSON.parse(line)
    } catch (e) {
      throw new DataError(`${KIND}: ${input} line ${n}: invalid JSON (${e.message})`)
    }
    if (!isObject(row)) throw new DataError(`${KIND}: ${input} line ${n}: expected a JSON object, got ${describe(row)}`)
    yield [`line ${n}`, n, row]
  }
}

export async function convertMath(input, out, { limit }) {
  requireFile(KIND, input, 'a .parquet (verl layout or problem/answer columns), .jsonl or .json math file')
  if (!/\.(parquet|jsonl|json)$/.test(input))
    throw new DataError(`${KIND}: ${input}: unknown file type (expected a name ending in .parquet, .jsonl or .json)`)
  const stem = path.basename(input).replace(/\.(parquet|jsonl|json)$/, '')
  const types = new Map(), origins = new Map(), splits = new Map(), seen = new Set()
  let duplicates = 0
  const emptyAnswers = []
  const lines = await writeJsonlAtomically(out, async (writer) => {
    for await (const [label, r, row] of inputRows(input)) {
      if (limit && writer.lines >= limit) break
      const where = `${KIND}: ${input} ${label}`
      const p = problemOf(row, where)
      const item = { id: idOf(row, r, stem), problem: p.problem, answer: answerOf(row, where), type: typeOf(row) }
      if (!item.answer) {  // a few rows of real sets have "" (2 of simplelr_math_35's train)
        emptyAnswers.push(label)
        continue
      }
      if (seen.has(item.id)) ++duplicates
      seen.add(item.id)
      writer.write(item)
      increment(types, item.type)
      increment(origins, p.origin)
      increment(splits, typeof row.extra_info?.split === 'string' ? row.extra_info.split : '')
    }
  })
  if (lines === 0) throw new DataError(`${KIND}: ${input}: no rows`)
  console.log(`${KIND}: wrote ${lines} problems to ${out} (from ${input})`)
  console.log(`  type: ${formatCounts(types)}`)
  console.log(`  problem from: ${formatCounts(origins, '; ')}`)
  if (emptyAnswers.length)
    console.log(`  skipped ${emptyAnswers.length} rows with an empty answer (${emptyAnswers.slice(0, 5).join(', ')}${emptyAnswers.length > 5 ? ', ...' : ''})`)
  if (duplicates) console.log(`  warning: ${duplicates} rows repeat an earlier id`)
  const abs = path.resolve(out)
  const split = splitOf(splits)
  if (split === 'train' || split === 'test') console.log(`  config key: codetool.${split}_file=${abs}`)
  else console.log(`  config key: codetool.train_file=${abs} (training) or codetool.test_file=${abs} (evaluation)`)
}
