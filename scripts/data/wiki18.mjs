// wiki18: Search-R1's wiki-18 corpus (wiki-18.jsonl.gz from the
// PeterJinGo/wiki-18-corpus dataset, or the file gunzipped) -> the plain
// JSONL corpus that `agentrl index build --corpus` reads:
//   {"id": "0", "contents": "\"Evan Morris\"\nEvan Morris Evan L. Morris ..."}
// Every line is checked (a JSON object, an "id" string or number, a
// "contents" string); FlashRAG-style {"id", "title", "text"} lines become
// contents = "\"<title>\"\n<text>". Streaming: the real corpus is 21M
// passages (14 GB unpacked), never held in memory.
import path from 'node:path'

import { DataError, describe, readLines, requireFile, scalarText, writeJsonlAtomically } from './common.mjs'

const KIND = 'wiki18'
const PROGRESS_EVERY = 1_000_000

// The {id, contents} passage of one parsed line; `where` names the line.
function passage(j, where) {
  if (!j || typeof j !== 'object' || Array.isArray(j))
    throw new DataError(`${where}: expected a JSON object, got ${describe(j)}`)
  const id = scalarText(j.id)
  if (id === null)
    throw new DataError(`${where}: key 'id' is ${j.id === undefined ? 'missing' : describe(j.id)} (expected a string or a number)`)
  if (typeof j.contents === 'string') return { id, contents: j.contents, fromTitleText: false }
  if (j.contents === undefined && typeof j.title === 'string' && typeof j.text === 'string')
    return { id, contents: `"${j.title}"\n${j.text}`, fromTitleText: true }
  const got = j.contents === undefined ? 'missing' : describe(j.contents)
  throw new DataError(`${where}: key 'contents' is ${got} (expected a string "\\"Title\\"\\ntext", or keys 'title' and 'text')`)
}

export async function convertWiki18(input, out, { limit }) {
  requireFile(KIND, input, 'the wiki-18 corpus, wiki-18.jsonl.gz or wiki-18.jsonl')
  if (out.endsWith('.gz'))
    throw new DataError(`${KIND}: ${out}: the output is plain JSONL (agentrl index build reads it uncompressed); name it *.jsonl`)
  if (path.resolve(out) === path.resolve(input))
    throw new DataError(`${KIND}: ${out}: the output must not be the input file`)
  let blank = 0, fromTitleText = 0
  const started = Date.now()
  const lines = await writeJsonlAtomically(out, async (writer) => {
    for await (const [n, text] of readLines(input)) {
      if (limit && writer.lines >= limit) break
      if (!text.trim()) {
        ++blank
        continue
      }
      const where = `${KIND}: ${input} line ${n}`
      let j
      try {
        j = JSON.parse(text)
      } catch (e) {
        throw new DataError(`${where}: invalid JSON (${e.message})`)
      }
      const p = passage(j, where)
      if (p.fromTitleText) ++fromTitleText
      writer.write({ id: p.id, contents: p.contents })
      if (writer.lines % PROGRESS_EVERY === 0)
        process.stderr.write(`${KIND}: ${writer.lines} passages (${((Date.now() - started) / 1000).toFixed(0)} s)\n`)
    }
  })
  if (lines === 0) throw new DataError(`${KIND}: ${input}: no passages`)
  console.log(`${KIND}: wrote ${lines} passages to ${out} (from ${input})`)
  if (blank) console.log(`  skipped ${blank} blank lines`)
  if (fromTitleText) console.log(`  ${fromTitleText} passages built from 'title' + 'text'`)
  console.log('  next: build the BM25 index, then point the Deep Search env at it:')
  console.log(`    build/agentrl index build --corpus ${path.resolve(out)} --out INDEX_DIR`)
  console.log('    deepsearch.retriever.index_dir=INDEX_DIR')
}
