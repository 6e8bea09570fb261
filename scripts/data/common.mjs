// Shared pieces of the data converters (scripts/prepare_data.sh): the error
// type every converter throws, the atomic JSONL writer, line reading of plain
// or gzipped files, and small helpers for messages and summaries.
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import zlib from 'node:zlib'

// A problem with the user's input. The message is complete and is printed as
// it is ("KIND: FILE row N: ..."), without a stack trace.
export class DataError extends Error {}

// The JSON type of a value as a person would say it ("a string", "null", ...).
export function describe(value) {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'bigint') return 'an integer'
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string' && !value.trim()) return 'an empty string'
  return `a ${typeof value}`
}

// Text of a scalar (string, number, bigint: parquet INT64 values are BigInt);
// null for anything else.
export function scalarText(value) {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'bigint') return value.toString()
  return null
}

// Fails with a DataError when `file` is not a readable regular file.
export function requireFile(kind, file, expected) {
  let st
  try {
    st = fs.statSync(file)
  } catch {
    throw new DataError(`${kind}: ${file}: no such file (expected ${expected})`)
  }
  if (!st.isFile()) throw new DataError(`${kind}: ${file}: not a regular file (expected ${expected})`)
}

// Writes JSONL to `<out>.tmp-<pid>` and renames it onto `out` on commit(), so
// a failed or interrupted conversion never leaves a half-written OUT. Lines
// are buffered and written synchronously in ~1 MiB blocks.
export class AtomicJsonlWriter {
  constructor(out) {
    this.out = out
    fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true })
    this.tmp = `${out}.tmp-${process.pid}`
    this.fd = fs.openSync(this.tmp, 'w')
    this.buffer = []
    this.bufferedChars = 0
    this.lines = 0
  }

  write(object) {
    const line = JSON.stringify(object) + '\n'
    this.buffer.push(line)
    this.bufferedChars += line.length
    this.lines += 1
    if (this.bufferedChars >= 1 << 20) this.flush()
  }

  flush() {
    if (this.buffer.length) fs.writeSync(this.fd, this.buffer.join(''))
    this.buffer = []
    this.bufferedChars = 0
  }

  commit() {
    this.flush()
    fs.fsyncSync(this.fd)
    fs.closeSync(this.fd)
    this.fd = null
    fs.renameSync(this.tmp, this.out)
  }

  // Removes the temporary file (after an error).
  abort() {
    if (this.fd !== null) fs.closeSync(this.fd)
    this.fd = null
    fs.rmSync(this.tmp, { force: true })
  }
}

// Runs fill(writer) and commits, or removes the temporary file and rethrows.
export async function writeJsonlAtomically(out, fill) {
  const writer = new AtomicJsonlWriter(out)
  try {
    await fill(writer)
    writer.commit()
  } catch (e) {
    writer.abort()
    throw e
  }
  return writer.lines
}

// Yields [lineNumber, text] for every line of a plain or gzipped (*.gz)
// text file, streaming (constant memory).
export async function* readLines(file) {
  let stream = fs.createReadStream(file)
  if (file.endsWith('.gz')) {
    const gunzip = zlib.createGunzip()
    stream.on('error', (e) => gunzip.destroy(e))  // pipe() does not forward errors
    stream = stream.pipe(gunzip)
  }
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity })
  let n = 0
  try {
    for await (const line of lines) yield [++n, line]
  } catch (e) {
    const what = e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR' ? 'not valid gzip data' : e.message
    throw new DataError(`${file}: read failed after line ${n}: ${what}`)
  }
}

// "nq 3, hotpotqa 2" from a Map of counts, largest first.
export function formatCounts(counts, separator = ', ') {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([k, v]) => `${k || '(none)'} ${v}`)
    .join(separator)
}

export function increment(counts, key) {
  counts.set(key, (counts.get(key) || 0) + 1)
}

// Which config key a converted file belongs to, from the splits its rows
// name (verl's extra_info.split): "train" -> train_file, "test" -> test_file,
// ... ; null when the rows name none or several.
export function splitOf(splitCounts) {
  const named = [...splitCounts.keys()].filter((k) => k)
  return named.length === 1 ? named[0] : null
}
