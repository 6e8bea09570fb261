// webshop: checks WebShop's data files as its setup.sh downloads them into
// data/ and prints the config keys. agentrl reads them directly
// (src/envs/webshop/product.cpp, webshop_suite.cpp); nothing is converted.
//   products   items_shuffle_1000.json / items_shuffle.json: a JSON array of
//              product records (asin, name, pricing, ...); or a JSONL of
//              products / {"id", "contents", "product"} documents
//   attributes items_ins_v2_1000.json / items_ins_v2.json:
//              {asin: {attributes: [...], instruction?, instruction_attributes?}}
//   human      items_human_ins.json: {asin: [{instruction, instruction_attributes,
//              instruction_options, ...}]}
// Files are read as streams (items_shuffle.json holds 1.18M products).
import fs from 'node:fs'
import path from 'node:path'

import { DataError, describe, readLines, requireFile } from './common.mjs'
import { jsonMembers } from './json_stream.mjs'

const KIND = 'webshop'
const DIR_NAMES = {
  products: ['items_shuffle_1000.json', 'items_shuffle.json'],
  attributes: ['items_ins_v2_1000.json', 'items_ins_v2.json'],
  human: ['items_human_ins.json'],
}
const CONFIG_KEY = { products: 'products_file', attributes: 'attributes_file', human: 'human_instructions_file' }

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isStringList = (v) => Array.isArray(v) && v.every((e) => typeof e === 'string')

// Checks one product record as agentrl's loader reads it; returns its ASIN,
// or null for records WebShop skips (ASIN "nan" or longer than 10).
function checkProduct(r, where) {
  if (!isObject(r)) throw new DataError(`${where}: expected a product object, got ${describe(r)}`)
  if (typeof r.asin !== 'string') throw new DataError(`${where}: key 'asin' is ${r.asin === undefined ? 'missing' : describe(r.asin)} (expected a string)`)
  if (r.asin === 'nan' || r.asin.length > 10) return null
  if (typeof r.name !== 'string' && typeof r.Title !== 'string')
    throw new DataError(`${where} (asin ${r.asin}): no string 'name' (or 'Title')`)
  const p = r.pricing
  if (!(p === undefined || p === null || typeof p === 'string' || (Array.isArray(p) && p.every((x) => typeof x === 'number'))))
    throw new DataError(`${where} (asin ${r.asin}): 'pricing' is ${describe(p)} (expected a "$a - $b" string or a list of numbers)`)
  return r.asin
}

function checkAttributes(e, where) {
  if (!isObject(e)) throw new DataError(`${where}: expected an object {attributes, instruction?}, got ${describe(e)}`)
  if (e.attributes !== undefined && e.attributes !== null && !isStringList(e.attributes))
    throw new DataError(`${where}: 'attributes' must be a list of strings`)
  if (e.instruction !== undefined && e.instruction !== null && typeof e.instruction !== 'string')
    throw new DataError(`${where}: 'instruction' is ${describe(e.instruction)} (expected a string)`)
  return e.instruction ? 1 : 0
}

function checkHuman(list, where) {
  if (!Array.isArray(list)) throw new DataError(`${where}: expected a list of instructions, got ${describe(list)}`)
  list.forEach((h, k) => {
    if (!isObject(h) || typeof h.instruction !== 'string')
      throw new DataError(`${where}, instruction ${k}: expected an object with a string 'instruction'`)
  })
  return list.length
}

// A file's role from its first member: an array of records (products), or
// an object mapping ASINs to lists (human) or to objects (attributes).
function roleOf(first, where) {
  if (first.key === null) return 'products'
  if (Array.isArray(first.value)) return 'human'
  if (isObject(first.value)) return 'attributes'
  throw new DataError(`${where}: not a WebShop data file: its top-level object maps '${first.key}' to ${describe(first.value)} ` +
                      '(expected an array of products, {asin: {attributes, ...}} or {asin: [instructions]})')
}

// Reads one file: its role (products / attributes / human, from its shape)
// and counts. `expected` is the role the file's name promises, if any.
async function checkFile(file, expected) {
  requireFile(KIND, file, expected ? `WebShop's ${expected} file` : 'a WebShop data file')
  const s = { file, role: null, records: 0, usable: 0, duplicates: 0, instructions: 0, asins: new Set() }
  const setRole = (role, where) => {
    if (expected && role !== expected)
      throw new DataError(`${where}: this is shaped like a ${role} file, expected the ${expected} file (${DIR_NAMES[expected].join(' or ')})`)
    s.role = role
  }
  const addProduct = (asin) => {
    ++s.records
    if (asin === null) return
    if (s.asins.has(asin)) ++s.duplicates
    else ++s.usable
    s.asins.add(asin)
  }
  if (file.endsWith('.jsonl')) {
    setRole('products', `${KIND}: ${file}`)
    for await (const [n, line] of readLines(file)) {
      if (!line.trim()) continue
      const where = `${KIND}: ${file} line ${n}`
      let j
      try {
        j = JSON.parse(line)
      } catch (e) {
        throw new DataError(`${where}: invalid JSON (${e.message})`)
      }
      addProduct(checkProduct(isObject(j) && 'product' in j ? j.product : j, where))
    }
    return s
  }
  for await (const m of jsonMembers(file, KIND)) {
    const where = `${KIND}: ${file} ${m.key === null ? `record ${m.index}` : `asin ${m.key}`}`
    if (s.role === null) setRole(roleOf(m, `${KIND}: ${file}`), `${KIND}: ${file}`)
    if (s.role === 'products') {
      if (m.key !== null) throw new DataError(`${where}: expected an array of products`)
      addProduct(checkProduct(m.value, where))
      continue
    }
    if (m.key === null) throw new DataError(`${where}: expected an object {asin: ...}`)
    ++s.records
    s.asins.add(m.key)
    s.instructions += s.role === 'human' ? checkHuman(m.value, where) : checkAttributes(m.value, where)
  }
  if (s.role === null) throw new DataError(`${KIND}: ${file}: empty (expected WebShop data)`)
  return s
}

// The files of a WebShop data/ folder, by role; products are required.
function filesInDir(dir) {
  const found = {}
  for (const [role, names] of Object.entries(DIR_NAMES)) {
    const name = names.find((n) => fs.existsSync(path.join(dir, n)))
    if (name) found[role] = path.join(dir, name)
  }
  if (!found.products)
    throw new DataError(`${KIND}: ${dir}: no product file (expected ${DIR_NAMES.products.join(' or ')}, as WebShop's setup.sh downloads them into data/)`)
  if (!found.attributes && !found.human)
    throw new DataError(`${KIND}: ${dir}: no instruction file (expected ${[...DIR_NAMES.attributes, ...DIR_NAMES.human].join(', ')})`)
  return found
}

function describeFile(s, products) {
  if (s.role === 'products') {
    const skipped = s.records - s.usable - s.duplicates
    return `${s.usable} products (${s.records} records${skipped ? `, ${skipped} with a bad ASIN` : ''}${s.duplicates ? `, ${s.duplicates} duplicate ASINs` : ''})`
  }
  const inCatalog = products ? [...s.asins].filter((a) => products.asins.has(a)).length : null
  const cover = inCatalog === null ? '' : `, ${inCatalog} of them in the product file`
  return s.role === 'human'
    ? `${s.instructions} human instructions for ${s.records} ASINs${cover}`
    : `attributes of ${s.records} ASINs, ${s.instructions} synthetic instructions${cover}`
}

// `inputs`: one WebShop data/ folder, or the files themselves (roles told
// by their shape).
export async function checkWebshop(inputs) {
  let files
  if (inputs.length === 1 && fs.existsSync(inputs[0]) && fs.statSync(inputs[0]).isDirectory()) {
    files = Object.entries(filesInDir(inputs[0])).map(([role, file]) => ({ file, expected: role }))
  } else {
    files = inputs.map((file) => ({ file, expected: null }))
  }
  const checked = []
  for (const f of files) checked.push(await checkFile(f.file, f.expected))
  const byRole = {}
  for (const s of checked) {
    if (byRole[s.role]) throw new DataError(`${KIND}: ${s.file}: a second ${s.role} file (first: ${byRole[s.role].file})`)
    byRole[s.role] = s
  }
  if (!byRole.products) throw new DataError(`${KIND}: no product file among ${inputs.join(' ')} (expected items_shuffle*.json or a products .jsonl)`)
  if (byRole.products.usable === 0) throw new DataError(`${KIND}: ${byRole.products.file}: no usable products`)
  console.log(`${KIND}:`)
  for (const s of checked) console.log(`  ${s.role}: ${s.file}: ${describeFile(s, byRole.products)}`)
  console.log('  config keys:')
  for (const s of checked) console.log(`    webshop.${CONFIG_KEY[s.role]}=${path.resolve(s.file)}`)
  if (byRole.human) console.log('    webshop.goals=human (the default; WebShop\'s human instructions)')
  else console.log('    webshop.goals=synthetic (no items_human_ins.json: synthetic instructions of items_ins_v2)')
}
