// Streaming reader of the members of one large JSON array or object, such as
// WebShop's items_shuffle.json (1.18M products, several GB: more than a JS
// string can hold, so JSON.parse of the whole file is impossible).
//
// The scanner only tracks strings and bracket depth to find where each
// top-level member starts and ends; each member's text is then checked and
// parsed by JSON.parse. Memory is bounded by the largest member. Structural
// characters are ASCII and never occur inside multi-byte UTF-8 sequences, so
// scanning bytes is safe.
import fs from 'node:fs'

import { DataError } from './common.mjs'

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c
const OPEN = new Set([0x5b, 0x7b]), CLOSE = new Set([0x5d, 0x7d])
const isSpace = (b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

// Yields {index, key, value} for every member of the top-level container of
// `file`: for an array key is null, for an object it is the member's name.
// Throws DataError "<label>: FILE ..." on anything that is not one complete
// JSON array or object.
export async function* jsonMembers(file, label) {
  const where = `${label}: ${file}`
  let container = null      // '[' or '{' once the top-level value opened
  let closed = false        // the top-level value ended
  let depth = 0             // bracket depth; 1 = directly inside the container
  let inString = false, escaped = false
  let parts = [], memberStart = -1, index = 0, offset = 0

  // Parses the member whose bytes are `parts`; null when there is none.
  const finish = () => {
    const text = Buffer.concat(parts).toString('utf8').trim()
    parts = []
    if (!text) return null
    const noun = container === '[' ? 'record' : 'member'
    try {
      if (container === '[') return { index: index++, key: null, value: JSON.parse(text) }
      const object = JSON.parse(`{${text}}`)
      const key = Object.keys(object)[0]
      return { index: index++, key, value: object[key] }
    } catch (e) {
      throw new DataError(`${where} ${noun} ${index}: invalid JSON (${e.message})`)
    }
  }

  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    for (let i = 0; i < chunk.length; ++i) {
      const b = chunk[i]
      if (closed) {
        if (!isSpace(b)) throw new DataError(`${where}: unexpected data after the top-level JSON value (byte ${offset + i})`)
        continue
      }
      if (container === null) {
        if (isSpace(b) || (offset + i < 3 && [0xef, 0xbb, 0xbf][offset + i] === b)) continue  // blanks, BOM
        if (!OPEN.has(b))
          throw new DataError(`${where}: expected a JSON array or object, found '${String.fromCharCode(b)}' at byte ${offset + i}`)
        container = String.fromCharCode(b)
        depth = 1
        continue
      }
      if (inString) {
        if (escaped) escaped = false
        else if (b === BACKSLASH) escaped = true
        else if (b === QUOTE) inString = false
        continue
      }
      const ends = (b === COMMA && depth === 1) || (CLOSE.has(b) && depth === 1)
      if (ends) {
        if (memberStart >= 0) parts.push(chunk.subarray(memberStart, i))
        memberStart = -1
        const member = finish()
        if (member) yield member
        else if (b === COMMA) throw new DataError(`${where}: empty member before byte ${offset + i}`)
        if (b !== COMMA) closed = true
        continue
      }
      if (memberStart < 0 && !isSpace(b)) memberStart = i
      if (b === QUOTE) inString = true
      else if (OPEN.has(b)) ++depth
      else if (CLOSE.has(b)) --depth
    }
    if (memberStart >= 0) {
      parts.push(chunk.subarray(memberStart))
      memberStart = 0
    }
    offset += chunk.length
  }
  if (container === null) throw new DataError(`${where}: empty file (expected a JSON array or object)`)
  if (!closed)
    throw new DataError(`${where}: the file ends inside the top-level JSON value after ${index} complete members (truncated download?)`)
}
