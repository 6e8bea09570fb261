// Reading parquet files row by row with hyparquet (a maintained pure-JS
// parquet reader) and hyparquet-compressors (gzip, zstd, brotli, lz4 pages;
// snappy is built in). scripts/install_data_tools.sh installs both into
// third_party/npm; AGENTRL_NPM_DIR points elsewhere.
//
// Rows are read one row group at a time, so memory is bounded by the largest
// row group, not the file. Nested columns come back as JS values: a LIST
// column as an array, a struct as an object, INT64 as BigInt.
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { DataError } from './common.mjs'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const npmDir = process.env.AGENTRL_NPM_DIR || path.join(repoRoot, 'third_party', 'npm')

// Imports an npm package installed under npmDir (ES modules do not search
// NODE_PATH, so the package is resolved explicitly).
export async function importInstalled(name) {
  const require = createRequire(path.join(npmDir, 'package.json'))
  let resolved
  try {
    resolved = require.resolve(name)
  } catch {
    throw new DataError(`the npm package '${name}' is not installed in ${npmDir}: run scripts/install_data_tools.sh (needs node and npm)`)
  }
  return import(pathToFileURL(resolved).href)
}

let libraries = null
async function loadLibraries() {
  if (!libraries) {
    const hyparquet = await importInstalled('hyparquet')
    const { compressors } = await importInstalled('hyparquet-compressors')
    libraries = { hyparquet, compressors }
  }
  return libraries
}

// An open parquet file: its row count, the names of its top-level columns
// and, for each, the names of its struct fields (for messages and checks).
export class ParquetFile {
  static async open(kind, file) {
    const { hyparquet } = await loadLibraries()
    const head = Buffer.alloc(4)
    const fd = fs.openSync(file, 'r')
    try {
      fs.readSync(fd, head, 0, 4, 0)
    } finally {
      fs.closeSync(fd)
    }
    if (head.toString('latin1') !== 'PAR1')
      throw new DataError(`${kind}: ${file}: not a parquet file (it does not start with 'PAR1')`)
    const buffer = await hyparquet.asyncBufferFromFile(file)
    let metadata
    try {
      metadata = await hyparquet.parquetMetadataAsync(buffer)
    } catch (e) {
      throw new DataError(`${kind}: ${file}: unreadable parquet metadata (${e.message})`)
    }
    return new ParquetFile(kind, file, buffer, metadata, hyparquet)
  }

  constructor(kind, file, buffer, metadata, hyparquet) {
    this.kind = kind
    this.file = file
    this.buffer = buffer
    this.metadata = metadata
    this.hyparquet = hyparquet
    this.rowCount = Number(metadata.num_rows)
    const schema = hyparquet.parquetSchema(metadata)
    this.columns = new Map(schema.children.map((c) => [c.element.name, c]))
  }

  has(column) {
    return this.columns.has(column)
  }

  // The top-level column whose name matches `name` ignoring case, or null
  // (some Hugging Face copies capitalise: "Problem", "Answer").
  find(name) {
    if (this.columns.has(name)) return name
    for (const c of this.columns.keys()) if (c.toLowerCase() === name.toLowerCase()) return c
    return null
  }

  // Yields [rowIndex, row] for every row (row = {column: value}) of the
  // `columns` given (all when omitted), one row group at a time.
  async *rows(columns) {
    const { compressors } = await loadLibraries()
    let start = 0
    for (const group of this.metadata.row_groups) {
      const end = start + Number(group.num_rows)
      let rows
      try {
        rows = await this.hyparquet.parquetReadObjects({
          file: this.buffer, metadata: this.metadata, columns, rowStart: start, rowEnd: end, compressors,
        })
      } catch (e) {
        throw new DataError(`${this.kind}: ${this.file} rows ${start}-${end - 1}: cannot decode (${e.message})`)
      }
      for (let i = 0; i < rows.length; ++i) yield [start + i, rows[i]]
      start = end
    }
  }
}
