// Writes the small parquet files of tests/data/prepare_data_test.sh into the
// folder given as argument, each in the schema of the original it stands for
// (nested list / struct columns as the originals' writers, pandas/pyarrow
// and Hugging Face datasets, lay them out), with hyparquet-writer.
//
//   searchr1_train.parquet   Search-R1 qa_search_train_merge.py output: FlashRAG
//                            columns + verl columns; 2 row groups
//   searchr1_verl.parquet    only the verl columns (no id/question/golden_answers),
//                            list elements named 'item' (older pyarrow)
//   searchr1_no_answers.parquet  neither golden_answers nor reward_model
//   searchr1_null_answers.parquet  row 1: golden_answers and reward_model null
//   math_verl.parquet        SimpleTIR / DeepScaleR layout: prompt, reward_model
//                            {ground_truth: string}, extra_info {index, split};
//                            bare, verl-wrapped (with and without the final
//                            period) and DAPO-wrapped problems
//   math500.parquet          MATH-500 on Hugging Face (gzip pages)
//   aime_hf.parquet          an AIME copy with capitalised columns and INT64 answers
//   math_bad_type.parquet    'problem' holds integers
import path from 'node:path'
import zlib from 'node:zlib'

import { importInstalled } from '../../scripts/data/parquet.mjs'

const { parquetWriteFile } = await importInstalled('hyparquet-writer')
const out = process.argv[2]

// Schema builders: each returns the flattened schema elements of one column.
const str = (name) => [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' }]
const i64 = (name) => [{ name, type: 'INT64', repetition_type: 'OPTIONAL' }]
const i32 = (name) => [{ name, type: 'INT32', repetition_type: 'OPTIONAL' }]
const struct = (name, ...children) => [{ name, repetition_type: 'OPTIONAL', num_children: children.length }, ...children.flat()]
// A LIST in the three-level layout <name> / list / element, as pyarrow >= 13
// writes it (older pyarrow names the element 'item': `itemName`).
const list = (name, element, itemName = 'element') => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  ...element(itemName),
]
const messages = (name) => list(name, (e) => struct(e, str('content'), str('role')))

// Writes `rows` (objects) with `columns` ([name, schema builder]) into out/file.
function write(file, columns, rows, options = {}) {
  const schema = [{ name: 'schema', num_children: columns.length }, ...columns.flatMap(([, s]) => s)]
  parquetWriteFile({
    filename: path.join(out, file),
    schema,
    columnData: columns.map(([name]) => ({ name, data: rows.map((r) => r[name] ?? null) })),
    ...options,
  })
}

// Search-R1's make_prefix (template 'base'), as its scripts/data_process/*.py write it.
const searchR1Prompt = (q) => [{
  role: 'user',
  content: 'Answer the given question. You must conduct reasoning inside <think> and </think> first every time you get new information. ' +
    'After reasoning, if you find you lack some knowledge, you can call a search engine by <search> query </search> and it will return the top searched results between <information> and </information>. ' +
    'You can search as many times as your want. If you find no further external knowledge needed, you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. ' +
    `For example, <answer> Beijing </answer>. Question: ${q}\n`,
}]
const searchR1Row = (id, q, answers, source, index, split) => ({
  id, question: q, golden_answers: answers, data_source: source, prompt: searchR1Prompt(q), ability: 'fact-reasoning',
  reward_model: { ground_truth: { target: answers }, style: 'rule' }, extra_info: { index: BigInt(index), split },
})
const searchR1Columns = [
  ['id', str('id')], ['question', str('question')], ['golden_answers', list('golden_answers', str)],
  ['data_source', str('data_source')], ['prompt', messages('prompt')], ['ability', str('ability')],
  ['reward_model', struct('reward_model', struct('ground_truth', list('target', str)), str('style'))],
  ['extra_info', struct('extra_info', i64('index'), str('split'))],
]

write('searchr1_train.parquet', searchR1Columns, [
  searchR1Row('train_0', 'total number of death row inmates in the us?', ['2,718'], 'nq', 0, 'train'),
  searchR1Row('train_1', 'big little lies season 2 how many episodes?', ['seven', '7'], 'nq', 1, 'train'),
  searchR1Row('train_2', 'Which magazine was started first Arthur\'s Magazine or First for Women?', ["Arthur's Magazine"], 'hotpotqa', 0, 'train'),
], { rowGroupSize: 2 })

// Only verl's columns, lists written by an older pyarrow ('item' elements).
const verlOnly = [
  ['data_source', str('data_source')], ['prompt', list('prompt', (e) => struct(e, str('content'), str('role')), 'item')],
  ['ability', str('ability')],
  ['reward_model', struct('reward_model', struct('ground_truth', list('target', str, 'item')), str('style'))],
  ['extra_info', struct('extra_info', i64('index'), str('split'))],
]
write('searchr1_verl.parquet', verlOnly, [
  searchR1Row(null, 'who got the first nobel prize in physics?', ['Wilhelm Conrad Röntgen'], 'nq', 0, 'test'),
  searchR1Row(null, 'when is the next deadpool movie being released?', ['May 18, 2018'], 'nq', 1, 'test'),
])

write('searchr1_no_answers.parquet', [['id', str('id')], ['question', str('question')], ['data_source', str('data_source')]],
  [{ id: 'a', question: 'q?', data_source: 'nq' }])

write('searchr1_null_answers.parquet', searchR1Columns, [
  searchR1Row('test_0', 'q0?', ['a0'], 'nq', 0, 'test'),
  { ...searchR1Row('test_1', 'q1?', ['a1'], 'nq', 1, 'test'), golden_answers: null, reward_model: null },
])

// SimpleTIR's datasets/deepscaler/aime.parquet columns, in its order.
const mathVerlColumns = [
  ['data_source', str('data_source')], ['prompt', messages('prompt')], ['ability', str('ability')],
  ['reward_model', struct('reward_model', str('ground_truth'), str('style'))],
  ['extra_info', struct('extra_info', i64('index'), str('split'))],
]
const mathVerlRow = (source, content, truth, index) => ({
  data_source: source, prompt: [{ content, role: 'user' }], ability: 'math',
  reward_model: { ground_truth: truth, style: 'rule' }, extra_info: { index: BigInt(index), split: 'test' },
})
write('math_verl.parquet', mathVerlColumns, [
  mathVerlRow('deepscaler', 'Find $xy$ if $x=3$ and $y=7$.', '21', 0),
  mathVerlRow('deepscaler', "What is $1+1$? Let's think step by step and output the final answer within \\boxed{}.", '2', 1),
  mathVerlRow('dapo', 'Solve the following math problem step by step. The last line of your response should be of the form ' +
    'Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\nCompute $2^{10}$.\n\n' +
    'Remember to put your answer on its own line after "Answer:".', '1024', 2),
  mathVerlRow('deepscaler', "Find $n$. Let's think step by step and output the final answer within \\boxed{}", '5', 3),
])

write('math500.parquet', [['problem', str('problem')], ['solution', str('solution')], ['answer', str('answer')],
  ['subject', str('subject')], ['level', i64('level')], ['unique_id', str('unique_id')]], [
  { problem: 'Convert the point $(0,3)$ to polar coordinates.', solution: 'So $\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}$.',
    answer: '\\left( 3, \\frac{\\pi}{2} \\right)', subject: 'Precalculus', level: 2n, unique_id: 'test/precalculus/807.json' },
  { problem: 'What is $\\frac{1}{2}+\\frac{1}{3}$?', solution: 'We get $\\boxed{\\frac{5}{6}}$.',
    answer: '\\frac{5}{6}', subject: 'Prealgebra', level: 1n, unique_id: 'test/prealgebra/1.json' },
], { codec: 'GZIP', compressors: { GZIP: (bytes) => zlib.gzipSync(bytes) } })

write('aime_hf.parquet', [['ID', str('ID')], ['Problem', str('Problem')], ['Solution', str('Solution')], ['Answer', i64('Answer')]], [
  { ID: '2024-I-1', Problem: 'Find the number of minutes.', Solution: 'It is 204.', Answer: 204n },
  { ID: '2024-I-2', Problem: 'Find $xy$.', Solution: 'It is 25.', Answer: 25n },
])

write('math_bad_type.parquet', [['problem', i32('problem')], ['answer', str('answer')]], [
  { problem: 7, answer: '7' },
])
