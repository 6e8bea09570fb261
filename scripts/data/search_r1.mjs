// search-r1: Search-R1's parquet QA files -> FlashRAG QA JSONL for the Deep
// Search env (deepsearch.data: files).
//
// Search-R1 writes its files with scripts/data_process/qa_search_train_merge.py,
// qa_search_test_merge.py and nq_search.py: FlashRAG's columns (id, question,
// golden_answers, ...) kept, plus verl's columns
//   data_source                 "nq", "hotpotqa", ...
//   prompt                      [{role: "user", content: "<instruction> Question: <q>?\n"}]
//   ability                     "fact-reasoning"
//   reward_model                {style: "rule", ground_truth: {target: [answers]}}
//   extra_info                  {split, index}
// Output, one object per line:
//   {"id": ..., "question": ..., "golden_answers": [...], "data_source": ...}
// question: the 'question' column, else the text after the last "Question: "
// of the user message (Search-R1's template), else that whole message.
// golden_answers: the 'golden_answers' column, else reward_model.ground_truth.target.
import path from 'node:path'

import { DataError, describe, formatCounts, increment, requireFile, scalarText, splitOf, writeJsonlAtomically } from './common.mjs'
import { ParquetFile } from './parquet.mjs'

const KIND = 'search-r1'

// The content of the last user message of a verl 'prompt' list, or null.
export function userMessage(prompt) {
  if (!Array.isArray(prompt)) return null
  for (let i = prompt.length - 1; i >= 0; --i) {
    const m = prompt[i]
    if (m && typeof m === 'object' && m.role === 'user' && typeof m.content === 'string') return m.content
  }
  return null
}

// A list of answer strings (numbers accepted) or a message saying what is wrong.
function answerList(value) {
  if (typeof value === 'string') return { answers: [value] }
  if (!Array.isArray(value)) return { error: `is ${describe(value)}` }
  const answers = []
  for (const a of value) {
    const text = scalarText(a)
    if (text === null) return { error: `holds ${describe(a)}` }
    answers.push(text)
  }
  if (!answers.length) return { error: 'is an empty list' }
  return { answers }
}

// The question of one row, and where it came from (for the summary).
function question(row, where) {
  if (row.question !== undefined) {
    if (typeof row.question !== 'string' || !row.question.trim())
      throw new DataError(`${where}: column 'question' is ${describe(row.question)} (expected a non-empty string)`)
    return { text: row.question.trim(), origin: "column 'question'" }
  }
  const content = userMessage(row.prompt)
  if (content === null)
    throw new DataError(`${where}: column 'prompt' has no user message (expected a list of {role, content} with role 'user')`)
  const at = content.lastIndexOf('Question: ')
  if (at >= 0 && content.slice(at + 10).trim()) return { text: content.slice(at + 10).trim(), origin: "prompt after 'Question: '" }
  return { text: content.trim(), origin: 'prompt, whole user message (no "Question: " in it)' }
}

// The gold answers of one row.
function goldenAnswers(row, where) {
  if (row.golden_answers !== undefined && row.golden_answers !== null) {
    const r = answerList(row.golden_answers)
    if (r.error) throw new DataError(`${where}: column 'golden_answers' ${r.error} (expected a list of strings)`)
    return r.answers
  }
  const target = row.reward_model?.ground_truth?.target
  if (target !== undefined && target !== null) {
    const r = answerList(target)
    if (r.error) throw new DataError(`${where}: reward_model.ground_truth.target ${r.error} (expected a list of strings)`)
    return r.answers
  }
  const missing = row.golden_answers === undefined ? 'is missing' : 'is null'
  throw new DataError(`${where}: column 'golden_answers' ${missing} (expected a list of strings), and so is reward_model.ground_truth.target`)
}

// The item id: the 'id' column, else <data_source>_<split>_<index> from
// extra_info, else the row number.
function itemId(row, rowIndex) {
  const id = scalarText(row.id)
  if (id !== null && id !== '') return id
  const index = scalarText(row.extra_info?.index)
  if (index !== null) return [row.data_source, row.extra_info?.split, index].filter((p) => p).join('_')
  return String(rowIndex)
}

// Checks that the file has the columns a conversion needs, before reading rows.
function checkColumns(pq) {
  const has = (c) => pq.has(c)
  const found = [...pq.columns.keys()].join(', ')
  if (!has('question') && !has('prompt'))
    throw new DataError(`${KIND}: ${pq.file}: no column 'question' (a string) nor 'prompt' (verl's message list); columns: ${found}`)
  if (!has('golden_answers') && !has('reward_model'))
    throw new DataError(`${KIND}: ${pq.file}: column 'golden_answers' is missing (expected a list of strings), and there is no 'reward_model' either; columns: ${found}`)
}

export async function convertSearchR1(input, out, { limit }) {
  requireFile(KIND, input, "a Search-R1 parquet file such as train.parquet or test.parquet")
  const pq = await ParquetFile.open(KIND, input)
  checkColumns(pq)
  const wanted = ['id', 'question', 'golden_answers', 'data_source', 'prompt', 'reward_model', 'extra_info'].filter((c) => pq.has(c))
  const sources = new Map(), origins = new Map(), splits = new Map()
  const lines = await writeJsonlAtomically(out, async (writer) => {
    for await (const [r, row] of pq.rows(wanted)) {
      if (limit && writer.lines >= limit) break
      const where = `${KIND}: ${input} row ${r}`
      const q = question(row, where)
      const item = { id: itemId(row, r), question: q.text, golden_answers: goldenAnswers(row, where) }
      if (row.data_source !== undefined && row.data_source !== null) {
        if (typeof row.data_source !== 'string')
          throw new DataError(`${where}: column 'data_source' is ${describe(row.data_source)} (expected a string)`)
        item.data_source = row.data_source
      }
      writer.write(item)
      increment(sources, item.data_source ?? '')
      increment(origins, q.origin)
      increment(splits, typeof row.extra_info?.split === 'string' ? row.extra_info.split : '')
    }
  })
  if (lines === 0) throw new DataError(`${KIND}: ${input}: no rows`)
  const abs = path.resolve(out)
  console.log(`${KIND}: wrote ${lines} questions to ${out} (from ${input})`)
  console.log(`  data_source: ${formatCounts(sources)}`)
  console.log(`  question from: ${formatCounts(origins, '; ')}`)
  const split = splitOf(splits)
  const key = { train: 'train_file', dev: 'dev_file', test: 'test_file' }[split]
  console.log('  config keys (with a retriever index of the wiki-18 corpus: see the wiki18 kind):')
  if (key) console.log(`    deepsearch.data=files deepsearch.${key}=${abs} deepsearch.retriever.index_dir=INDEX_DIR`)
  else console.log(`    deepsearch.data=files deepsearch.train_file=${abs} (or test_file / dev_file) deepsearch.retriever.index_dir=INDEX_DIR`)
}
