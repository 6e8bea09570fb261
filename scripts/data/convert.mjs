// Entry point of scripts/prepare_data.sh: turns the files a user downloaded
// with the original projects' own instructions into what agentrl reads, or
// checks them where agentrl reads the originals directly.
//
//   node convert.mjs search-r1 IN.parquet OUT.jsonl [--limit N]
//   node convert.mjs math IN.parquet|IN.jsonl|IN.json OUT.jsonl [--limit N]
//   node convert.mjs wiki18 IN.jsonl[.gz] OUT.jsonl [--limit N]
//   node convert.mjs alfworld DIR [--eval-only]
//   node convert.mjs webshop DIR | FILE...
//
// Exit status: 0 done, 1 bad input (one message on stderr naming the file,
// the row or line, the column or key and what was expected), 2 bad usage.
import { checkAlfworld } from './alfworld.mjs'
import { DataError } from './common.mjs'
import { convertMath } from './math.mjs'
import { convertSearchR1 } from './search_r1.mjs'
import { checkWebshop } from './webshop.mjs'
import { convertWiki18 } from './wiki18.mjs'

class UsageError extends Error {}

// Splits argv into positional arguments and the flags a kind allows.
function parseArgs(args, allowed) {
  const positional = [], flags = {}
  for (let i = 0; i < args.length; ++i) {
    const a = args[i]
    if (!a.startsWith('--')) {
      positional.push(a)
    } else if (a === '--limit' && allowed.includes('limit')) {
      const n = Number(args[++i])
      if (!Number.isInteger(n) || n < 1) throw new UsageError(`--limit needs a positive integer, got '${args[i] ?? ''}'`)
      flags.limit = n
    } else if (a === '--eval-only' && allowed.includes('evalOnly')) {
      flags.evalOnly = true
    } else {
      throw new UsageError(`unknown option '${a}'`)
    }
  }
  return { positional, flags }
}

// A converter of IN to OUT: exactly two positional arguments.
const converter = (fn) => async (args) => {
  const { positional, flags } = parseArgs(args, ['limit'])
  if (positional.length !== 2) throw new UsageError('expected IN and OUT')
  await fn(positional[0], positional[1], flags)
}

const KINDS = {
  'search-r1': converter(convertSearchR1),
  math: converter(convertMath),
  wiki18: converter(convertWiki18),
  alfworld: async (args) => {
    const { positional, flags } = parseArgs(args, ['evalOnly'])
    if (positional.length !== 1) throw new UsageError('expected one DIR (the json_2.1.1 folder)')
    checkAlfworld(positional[0], flags)
  },
  webshop: async (args) => {
    const { positional } = parseArgs(args, [])
    if (positional.length === 0) throw new UsageError("expected WebShop's data/ folder or its files")
    await checkWebshop(positional)
  },
}

async function main() {
  const [kind, ...args] = process.argv.slice(2)
  try {
    if (!KINDS[kind]) throw new UsageError(`unknown kind '${kind ?? ''}' (expected ${Object.keys(KINDS).join(', ')})`)
    await KINDS[kind](args)
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`prepare_data: ${kind ?? ''}: ${e.message} (see scripts/prepare_data.sh --help)\n`)
      process.exit(2)
    }
    if (e instanceof DataError) {
      process.stderr.write(`error: ${e.message}\n`)
      process.exit(1)
    }
    if (e?.syscall) {  // a file system error: ENOSPC, EACCES, ...
      process.stderr.write(`error: ${kind}: ${e.message}\n`)
      process.exit(1)
    }
    throw e
  }
}

await main()
