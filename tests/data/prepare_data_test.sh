#!/usr/bin/env bash
# Tests of scripts/prepare_data.sh (issue #19 part 3): each converter on small
# files written here in the original's schema (parquet by
# tests/data/write_parquet_fixtures.mjs with hyparquet-writer), the exact
# lines it writes, the error cases (one message naming the file, the row or
# line and what was expected; exit 1; no OUT left behind), and that agentrl
# itself accepts what was converted (when the agentrl binary exists). The
# ALFWorld / WebShop checks also run on ../shared/data when it exists.
#
# usage: tests/data/prepare_data_test.sh [--agentrl PATH]
# Exit: 0 all passed, 1 a failure, 77 skipped (node or the npm packages of
# scripts/install_data_tools.sh missing).
# shellcheck disable=SC2016,SC2028  # literal $ and \n in the JSON written below
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
agentrl="${AGENTRL_BIN:-$root/build/agentrl}"
[[ "${1:-}" == "--agentrl" ]] && agentrl="$2"
shared="$root/../shared/data"

skip() { echo "SKIP: $*"; exit 77; }
command -v node > /dev/null || skip "node not found (apt-get install nodejs npm, then scripts/install_data_tools.sh)"
npm_dir="${AGENTRL_NPM_DIR:-$root/third_party/npm}"
for p in hyparquet hyparquet-compressors hyparquet-writer; do
  [[ -f "$npm_dir/node_modules/$p/package.json" ]] || skip "npm package $p not in $npm_dir: run scripts/install_data_tools.sh"
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
current=""
pass() { passed=$((passed + 1)); }
fail() { echo "FAIL [$current]: $*" >&2; failed=$((failed + 1)); }
prep() { "$root/scripts/prepare_data.sh" "$@"; }

# expect_lines FILE < expected: FILE holds exactly the expected lines.
expect_lines() {
  if [[ ! -f "$1" ]]; then fail "$1 was not written"; return; fi
  if diff -u <(cat) "$1" > "$tmp/diff"; then pass; else fail "$1 differs from the expected lines:"; cat "$tmp/diff" >&2; fi
}
# expect_output_has TEXT: the last command's stdout ($tmp/out) contains TEXT.
expect_output_has() {
  if grep -qF -- "$1" "$tmp/out"; then pass; else fail "output lacks '$1':"; cat "$tmp/out" >&2; fi
}
# run_ok CMD...: runs CMD (stdout -> $tmp/out), which must succeed.
run_ok() {
  local rc=0
  "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  if [[ $rc -eq 0 ]]; then pass; else fail "'$*' exited $rc: $(cat "$tmp/err")"; fi
}
# expect_error STATUS MESSAGE CMD...: CMD exits STATUS with MESSAGE as its whole stderr.
expect_error() {
  local status="$1" message="$2" rc=0
  shift 2
  "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  if [[ $rc -ne $status ]]; then fail "'$*' exited $rc, expected $status (stderr: $(cat "$tmp/err"))"
  elif [[ "$(cat "$tmp/err")" != "$message" ]]; then fail "stderr was:"$'\n'"  $(cat "$tmp/err")"$'\n'"expected:"$'\n'"  $message"
  else pass; fi
}
# expect_error_start STATUS PREFIX CMD...: as expect_error, for messages that
# end in node's own JSON.parse text (which differs between node versions).
expect_error_start() {
  local status="$1" prefix="$2" rc=0
  shift 2
  "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  if [[ $rc -ne $status ]]; then fail "'$*' exited $rc, expected $status (stderr: $(cat "$tmp/err"))"
  elif [[ "$(cat "$tmp/err")" != "$prefix"* ]]; then fail "stderr was:"$'\n'"  $(cat "$tmp/err")"$'\n'"expected it to start with:"$'\n'"  $prefix"
  else pass; fi
}
# expect_no_output OUT: neither OUT nor a temporary OUT.tmp-* is left.
expect_no_output() {
  if compgen -G "$1*" > /dev/null; then fail "left behind: $(ls "$1"*)"; else pass; fi
}

node "$root/tests/data/write_parquet_fixtures.mjs" "$tmp"

# ---------------------------------------------------------------- search-r1

test_search_r1_keeps_flashrag_columns_and_data_source() {
  run_ok prep search-r1 "$tmp/searchr1_train.parquet" "$tmp/qa_train.jsonl"
  expect_lines "$tmp/qa_train.jsonl" <<'EOF'
{"id":"train_0","question":"total number of death row inmates in the us?","golden_answers":["2,718"],"data_source":"nq"}
{"id":"train_1","question":"big little lies season 2 how many episodes?","golden_answers":["seven","7"],"data_source":"nq"}
{"id":"train_2","question":"Which magazine was started first Arthur's Magazine or First for Women?","golden_answers":["Arthur's Magazine"],"data_source":"hotpotqa"}
EOF
  expect_output_has "data_source: nq 2, hotpotqa 1"
  expect_output_has "deepsearch.data=files deepsearch.train_file=$tmp/qa_train.jsonl"
}

test_search_r1_reads_question_from_prompt_and_answers_from_reward_model() {
  run_ok prep search-r1 "$tmp/searchr1_verl.parquet" "$tmp/qa_test.jsonl"
  expect_lines "$tmp/qa_test.jsonl" <<'EOF'
{"id":"nq_test_0","question":"who got the first nobel prize in physics?","golden_answers":["Wilhelm Conrad Röntgen"],"data_source":"nq"}
{"id":"nq_test_1","question":"when is the next deadpool movie being released?","golden_answers":["May 18, 2018"],"data_source":"nq"}
EOF
  expect_output_has "deepsearch.test_file=$tmp/qa_test.jsonl"
}

test_search_r1_errors() {
  expect_error 1 "error: search-r1: $tmp/none.parquet: no such file (expected a Search-R1 parquet file such as train.parquet or test.parquet)" \
    prep search-r1 "$tmp/none.parquet" "$tmp/e.jsonl"
  echo "id,question" > "$tmp/text.parquet"
  expect_error 1 "error: search-r1: $tmp/text.parquet: not a parquet file (it does not start with 'PAR1')" \
    prep search-r1 "$tmp/text.parquet" "$tmp/e.jsonl"
  expect_error 1 "error: search-r1: $tmp/searchr1_no_answers.parquet: column 'golden_answers' is missing (expected a list of strings), and there is no 'reward_model' either; columns: id, question, data_source" \
    prep search-r1 "$tmp/searchr1_no_answers.parquet" "$tmp/e.jsonl"
  expect_error 1 "error: search-r1: $tmp/searchr1_null_answers.parquet row 1: column 'golden_answers' is null (expected a list of strings), and so is reward_model.ground_truth.target" \
    prep search-r1 "$tmp/searchr1_null_answers.parquet" "$tmp/e.jsonl"
  expect_no_output "$tmp/e.jsonl"
}

test_failed_conversion_keeps_the_previous_output() {
  echo "previous" > "$tmp/kept.jsonl"
  expect_error 1 "error: search-r1: $tmp/searchr1_null_answers.parquet row 1: column 'golden_answers' is null (expected a list of strings), and so is reward_model.ground_truth.target" \
    prep search-r1 "$tmp/searchr1_null_answers.parquet" "$tmp/kept.jsonl"
  expect_lines "$tmp/kept.jsonl" <<< "previous"
  if compgen -G "$tmp/kept.jsonl.tmp-*" > /dev/null; then fail "temporary file left behind"; else pass; fi
}

# --------------------------------------------------------------------- math

test_math_verl_layout_strips_known_instructions() {
  run_ok prep math "$tmp/math_verl.parquet" "$tmp/math_verl.jsonl"
  expect_lines "$tmp/math_verl.jsonl" <<'EOF'
{"id":"deepscaler-test-0","problem":"Find $xy$ if $x=3$ and $y=7$.","answer":"21","type":"deepscaler"}
{"id":"deepscaler-test-1","problem":"What is $1+1$?","answer":"2","type":"deepscaler"}
{"id":"dapo-test-2","problem":"Compute $2^{10}$.","answer":"1024","type":"dapo"}
{"id":"deepscaler-test-3","problem":"Find $n$.","answer":"5","type":"deepscaler"}
EOF
  expect_output_has "codetool.test_file=$tmp/math_verl.jsonl"
  expect_output_has "prompt, user message as is 1"
}

test_math_plain_columns_gzip_pages_and_integer_answers() {
  run_ok prep math "$tmp/math500.parquet" "$tmp/math500.jsonl"
  expect_lines "$tmp/math500.jsonl" <<'EOF'
{"id":"test/precalculus/807.json","problem":"Convert the point $(0,3)$ to polar coordinates.","answer":"\\left( 3, \\frac{\\pi}{2} \\right)","type":"Precalculus"}
{"id":"test/prealgebra/1.json","problem":"What is $\\frac{1}{2}+\\frac{1}{3}$?","answer":"\\frac{5}{6}","type":"Prealgebra"}
EOF
  run_ok prep math "$tmp/aime_hf.parquet" "$tmp/aime.jsonl"
  expect_lines "$tmp/aime.jsonl" <<'EOF'
{"id":"2024-I-1","problem":"Find the number of minutes.","answer":"204","type":""}
{"id":"2024-I-2","problem":"Find $xy$.","answer":"25","type":""}
EOF
}

test_math_jsonl_and_json_inputs() {
  cat > "$tmp/math500_hf.jsonl" <<'EOF'
{"problem": "What is $2+3$?", "solution": "It is $\\boxed{5}$.", "answer": "5", "subject": "Algebra", "level": 1, "unique_id": "test/algebra/1.json"}

{"problem": "What is $\\frac{6}{4}$?", "solution": "We get $\\boxed{\\frac{3}{2}}$.", "subject": "Algebra"}
EOF
  run_ok prep math "$tmp/math500_hf.jsonl" "$tmp/m.jsonl"
  expect_lines "$tmp/m.jsonl" <<'EOF'
{"id":"test/algebra/1.json","problem":"What is $2+3$?","answer":"5","type":"Algebra"}
{"id":"math500_hf-3","problem":"What is $\\frac{6}{4}$?","answer":"\\frac{3}{2}","type":"Algebra"}
EOF
  echo '[{"id": 60, "problem": "Find $n$.", "answer": 23}]' > "$tmp/aime.json"
  run_ok prep math "$tmp/aime.json" "$tmp/a.jsonl"
  expect_lines "$tmp/a.jsonl" <<< '{"id":"60","problem":"Find $n$.","answer":"23","type":""}'
}

test_math_errors() {
  expect_error 1 "error: math: $tmp/math_bad_type.parquet row 0: column 'problem' is an integer (expected a non-empty string)" \
    prep math "$tmp/math_bad_type.parquet" "$tmp/e.jsonl"
  printf '{"problem": "a", "answer": "1"}\n{"problem": "b", "answer": \n' > "$tmp/bad.jsonl"
  expect_error_start 1 "error: math: $tmp/bad.jsonl line 2: invalid JSON (" \
    prep math "$tmp/bad.jsonl" "$tmp/e.jsonl"
  echo '{"problem": "no answer here"}' > "$tmp/noanswer.jsonl"
  expect_error 1 "error: math: $tmp/noanswer.jsonl line 1: no answer: expected reward_model.ground_truth (verl), a column 'answer', or a column 'solution' with a \\boxed{} answer" \
    prep math "$tmp/noanswer.jsonl" "$tmp/e.jsonl"
  echo 'problem,answer' > "$tmp/m.csv"
  expect_error 1 "error: math: $tmp/m.csv: unknown file type (expected a name ending in .parquet, .jsonl or .json)" \
    prep math "$tmp/m.csv" "$tmp/e.jsonl"
  expect_error 1 "error: math: $tmp/none.jsonl: no such file (expected a .parquet (verl layout or problem/answer columns), .jsonl or .json math file)" \
    prep math "$tmp/none.jsonl" "$tmp/e.jsonl"
  expect_no_output "$tmp/e.jsonl"
}

# ------------------------------------------------------------------- wiki18

write_corpus() {
  cat > "$tmp/wiki-18.jsonl" <<'EOF'
{"id": "0", "contents": "\"Evan Morris\"\nEvan Morris Evan L. Morris (January 26, 1977 \u2013 July 9, 2015) was a lobbyist for Genentech."}
{"id": "1", "contents": "\"Big Little Lies (TV series)\"\nThe second season of seven episodes premiered on June 9, 2019."}

{"id": 2, "title": "Arthur's Magazine", "text": "Arthur's Magazine (1844\u20131846) was an American literary periodical."}
EOF
}

test_wiki18_reads_gzip_and_normalises_lines() {
  write_corpus
  gzip -k "$tmp/wiki-18.jsonl"
  run_ok prep wiki18 "$tmp/wiki-18.jsonl.gz" "$tmp/corpus.jsonl"
  expect_lines "$tmp/corpus.jsonl" <<'EOF'
{"id":"0","contents":"\"Evan Morris\"\nEvan Morris Evan L. Morris (January 26, 1977 – July 9, 2015) was a lobbyist for Genentech."}
{"id":"1","contents":"\"Big Little Lies (TV series)\"\nThe second season of seven episodes premiered on June 9, 2019."}
{"id":"2","contents":"\"Arthur's Magazine\"\nArthur's Magazine (1844–1846) was an American literary periodical."}
EOF
  expect_output_has "skipped 1 blank lines"
  run_ok prep wiki18 "$tmp/wiki-18.jsonl" "$tmp/corpus2.jsonl" --limit 2
  if [[ $(wc -l < "$tmp/corpus2.jsonl") -eq 2 ]]; then pass; else fail "--limit 2 wrote $(wc -l < "$tmp/corpus2.jsonl") lines"; fi
}

test_wiki18_errors() {
  printf '{"id": "0", "contents": "\\"A\\"\\ntext"}\n{"id": "1", "contents": "\\"B\\"\\ntext"}\n{"id": "2", "contents": "\\"C\\"\\n\n' > "$tmp/broken.jsonl"
  expect_error_start 1 "error: wiki18: $tmp/broken.jsonl line 3: invalid JSON (" \
    prep wiki18 "$tmp/broken.jsonl" "$tmp/e.jsonl"
  echo '{"id": "0", "text": "no contents"}' > "$tmp/nocontents.jsonl"
  expect_error 1 "error: wiki18: $tmp/nocontents.jsonl line 1: key 'contents' is missing (expected a string \"\\\"Title\\\"\\ntext\", or keys 'title' and 'text')" \
    prep wiki18 "$tmp/nocontents.jsonl" "$tmp/e.jsonl"
  echo '{"contents": "\"A\"\ntext"}' > "$tmp/noid.jsonl"
  expect_error 1 "error: wiki18: $tmp/noid.jsonl line 1: key 'id' is missing (expected a string or a number)" \
    prep wiki18 "$tmp/noid.jsonl" "$tmp/e.jsonl"
  echo 'plain text, not gzip' > "$tmp/fake.jsonl.gz"
  expect_error 1 "error: $tmp/fake.jsonl.gz: read failed after line 0: not valid gzip data" \
    prep wiki18 "$tmp/fake.jsonl.gz" "$tmp/e.jsonl"
  expect_no_output "$tmp/e.jsonl"
}

# ----------------------------------------------------------------- alfworld

# make_game SPLIT_DIR TASK TRIAL SOLVABLE: a game.tw-pddl as ALFWorld lays it out.
make_game() {
  mkdir -p "$1/$2/$3"
  printf '{"pddl_domain": "(define (domain alfred))", "grammar": "{}", "pddl_problem": "(define (problem p))", "solvable": %s}' "$4" \
    > "$1/$2/$3/game.tw-pddl"
  echo '{"task_type": "pick_and_place_simple"}' > "$1/$2/$3/traj_data.json"
}
make_alfworld() {  # $1 = the folder that will hold json_2.1.1
  local d="$1/json_2.1.1"
  for s in train valid_seen valid_unseen; do
    make_game "$d/$s" pick_and_place_simple-Mug-None-Shelf-1 trial_T0001 true
    make_game "$d/$s" look_at_obj_in_light-Book-None-DeskLamp-301 trial_T0002 true
  done
  make_game "$d/train" pick_and_place_simple-AppleSliced-None-Fridge-2 trial_T0003 true
  make_game "$d/train" pick_cool_then_place_in_recep-Egg-None-Fridge-3 trial_T0004 false
}

test_alfworld_check_counts_games_and_prints_data_dir() {
  make_alfworld "$tmp/alf"
  run_ok prep alfworld "$tmp/alf"   # the $ALFWORLD_DATA folder: json_2.1.1 found inside
  expect_lines "$tmp/out" <<EOF
alfworld: $tmp/alf/json_2.1.1
  train: 2 games (ALFWorld: 3553); 1 movable/Sliced skipped, 1 not solvable skipped
  warning: train has 2 games, ALFWorld's json_2.1.1 has 3553
  valid_seen: 2 games (ALFWorld: 140)
  warning: valid_seen has 2 games, ALFWorld's json_2.1.1 has 140
  valid_unseen: 2 games (ALFWorld: 134)
  warning: valid_unseen has 2 games, ALFWorld's json_2.1.1 has 134
  6 games in all; config keys:
    alfworld.data_dir=$tmp/alf/json_2.1.1
    alfworld.eval_split=valid_seen (in distribution) or valid_unseen (out of distribution)
EOF
}

test_alfworld_errors() {
  local d="$tmp/alf2/json_2.1.1"
  make_alfworld "$tmp/alf2"
  rm -r "$d/train"
  expect_error 1 "error: alfworld: $d: split folder 'train' is missing (expected $d/train/<task>/<trial>/game.tw-pddl; pass --eval-only to check a download without train)" \
    prep alfworld "$d"
  run_ok prep alfworld "$d" --eval-only
  echo '{"pddl_problem": "(define' > "$d/valid_seen/pick_and_place_simple-Mug-None-Shelf-1/trial_T0001/game.tw-pddl"
  expect_error_start 1 "error: alfworld: $d/valid_seen/pick_and_place_simple-Mug-None-Shelf-1/trial_T0001/game.tw-pddl: malformed game.tw-pddl JSON (" \
    prep alfworld "$d" --eval-only
  rm -r "$d/valid_seen"/*
  mkdir -p "$d/valid_seen/pick_and_place_simple-Mug-None-Shelf-1/trial_T0001"
  echo '{}' > "$d/valid_seen/pick_and_place_simple-Mug-None-Shelf-1/trial_T0001/traj_data.json"
  expect_error 1 "error: alfworld: $d/valid_seen: no playable games: 1 trials have traj_data.json but no game.tw-pddl (alfworld-download's json_2.1.1_tw-pddl.zip part is missing)" \
    prep alfworld "$d" --eval-only
  make_game "$d" valid_seen pick_and_place_simple-Mug-None-Shelf-1 true   # one level too high
  expect_error 1 "error: alfworld: $d/valid_seen/pick_and_place_simple-Mug-None-Shelf-1/game.tw-pddl is not at <split>/<task>/<trial>/game.tw-pddl under $d; pass the folder that holds train/, valid_seen/, valid_unseen/" \
    prep alfworld "$d" --eval-only
  expect_error 1 "error: alfworld: $tmp/nowhere: no such directory (expected ALFWorld's json_2.1.1 folder, as alfworld-download lays it out)" \
    prep alfworld "$tmp/nowhere"
}

# ------------------------------------------------------------------ webshop

make_webshop() {  # $1 = WebShop's data/ folder
  mkdir -p "$1"
  cat > "$1/items_shuffle_1000.json" <<'EOF'
[{"asin": "B000000001", "name": "Sulfate Free Shampoo for Dry Hair, 16 Fl Oz", "full_description": "A gentle shampoo.",
  "pricing": "$12.99", "images": ["https://example.invalid/1.jpg"], "product_category": "Beauty & Personal Care \u203a Hair Care",
  "average_rating": "4.5 out of 5 stars", "small_description": ["sulfate free", "for dry hair"],
  "customization_options": {"Size": [{"value": "16 Fl Oz", "image": null}, {"value": "32 Fl Oz", "image": null}]},
  "category": "beauty", "query": "shampoo", "page": 1},
 {"asin": "B000000002", "name": "Vegan Protein Shake, Chocolate", "full_description": "Plant based.", "pricing": "$24.99 - $39.99",
  "images": [], "product_category": "Grocery", "small_description": "plant based protein", "customization_options": {},
  "category": "grocery", "query": "protein shake", "page": 1},
 {"asin": "nan", "name": "broken record", "pricing": ""},
 {"asin": "B000000001", "name": "a duplicate", "pricing": "$1.00"}]
EOF
  cat > "$1/items_ins_v2_1000.json" <<'EOF'
{"B000000001": {"attributes": ["sulfate free", "dry hair"], "instruction": "Find me sulfate free shampoo for dry hair",
                "instruction_attributes": ["sulfate free", "dry hair"]},
 "B000000002": {"attributes": ["plant based"]},
 "B999999999": {"attributes": []}}
EOF
  cat > "$1/items_human_ins.json" <<'EOF'
{"B000000001": [{"asin": "B000000001", "instruction": "i need a sulfate free shampoo for dry hair in 16 fl oz, and price lower than 20.00 dollars",
                 "attributes": ["sulfate free", "dry hair"], "options": ["16 fl oz"], "instruction_attributes": ["sulfate free", "dry hair"],
                 "instruction_options": ["16 fl oz"], "assignment_id": "A1", "worker_id": "W1"}],
 "B000000002": [{"asin": "B000000002", "instruction": "i want a vegan chocolate protein shake", "attributes": ["plant based"],
                 "options": [], "instruction_attributes": ["plant based"], "instruction_options": [], "assignment_id": "A2", "worker_id": "W2"}]}
EOF
}

test_webshop_check_of_a_data_folder() {
  make_webshop "$tmp/ws"
  run_ok prep webshop "$tmp/ws"
  expect_lines "$tmp/out" <<EOF
webshop:
  products: $tmp/ws/items_shuffle_1000.json: 2 products (4 records, 1 with a bad ASIN, 1 duplicate ASINs)
  attributes: $tmp/ws/items_ins_v2_1000.json: attributes of 3 ASINs, 1 synthetic instructions, 2 of them in the product file
  human: $tmp/ws/items_human_ins.json: 2 human instructions for 2 ASINs, 2 of them in the product file
  config keys:
    webshop.products_file=$tmp/ws/items_shuffle_1000.json
    webshop.attributes_file=$tmp/ws/items_ins_v2_1000.json
    webshop.human_instructions_file=$tmp/ws/items_human_ins.json
    webshop.goals=human (the default; WebShop's human instructions)
EOF
}

test_webshop_errors() {
  make_webshop "$tmp/ws2"
  printf '<!DOCTYPE html><html>Google Drive - quota exceeded</html>\n' > "$tmp/ws2/items_human_ins.json"
  expect_error 1 "error: webshop: $tmp/ws2/items_human_ins.json: expected a JSON array or object, found '<' at byte 0" \
    prep webshop "$tmp/ws2"
  head -c 300 "$tmp/ws2/items_shuffle_1000.json" > "$tmp/truncated.json"
  expect_error 1 "error: webshop: $tmp/truncated.json: the file ends inside the top-level JSON value after 0 complete members (truncated download?)" \
    prep webshop "$tmp/truncated.json"
  echo '[{"name": "no asin"}]' > "$tmp/noasin.json"
  expect_error 1 "error: webshop: $tmp/noasin.json record 0: key 'asin' is missing (expected a string)" \
    prep webshop "$tmp/noasin.json"
  mkdir -p "$tmp/ws3" && cp "$tmp/ws/items_human_ins.json" "$tmp/ws3/"
  expect_error 1 "error: webshop: $tmp/ws3: no product file (expected items_shuffle_1000.json or items_shuffle.json, as WebShop's setup.sh downloads them into data/)" \
    prep webshop "$tmp/ws3"
  cp "$tmp/ws/items_human_ins.json" "$tmp/ws3/items_shuffle_1000.json"
  expect_error 1 "error: webshop: $tmp/ws3/items_shuffle_1000.json: this is shaped like a human file, expected the products file (items_shuffle_1000.json or items_shuffle.json)" \
    prep webshop "$tmp/ws3"
}

# -------------------------------------------------------------------- usage

test_usage_errors_exit_2() {
  expect_error 2 "prepare_data: unknown kind 'parquet' (expected search-r1, math, wiki18, alfworld or webshop; see --help)" prep parquet x
  expect_error 2 "prepare_data: math: expected IN and OUT (see scripts/prepare_data.sh --help)" prep math "$tmp/math500.parquet"
  run_ok prep --help
  expect_output_has "scripts/prepare_data.sh search-r1 data/nq_hotpotqa_train/train.parquet"
}

# ------------------------------------------- agentrl reads what was converted

test_agentrl_accepts_the_converted_files() {
  if [[ ! -x "$agentrl" ]]; then echo "note: $agentrl not built: agentrl checks skipped"; return; fi
  run_ok "$agentrl" index build --corpus "$tmp/corpus.jsonl" --out "$tmp/index"
  run_ok bash -c "printf '<answer> seven </answer>\n.\n' | '$agentrl' env play deepsearch --set deepsearch.data=files \
    --set deepsearch.test_file='$tmp/qa_train.jsonl' --set deepsearch.retriever.index_dir='$tmp/index' --split test --task 1"
  expect_output_has "episode over: success=1"
  run_ok "$agentrl" env bench deepsearch --set deepsearch.data=files --set deepsearch.test_file="$tmp/qa_train.jsonl" \
    --set deepsearch.retriever.index_dir="$tmp/index" --split test --policy random
  expect_output_has "hotpotqa"   # data_source became the task type
  run_ok bash -c "printf 'So \\\\boxed{1024}.\n.\n' | '$agentrl' env play codetool --set codetool.test_file='$tmp/math_verl.jsonl' --split test --task 2"
  expect_output_has "episode over: success=1"
  run_ok bash -c "printf 'search[sulfate free shampoo]\n' | '$agentrl' env play webshop --set webshop.products_file='$tmp/ws/items_shuffle_1000.json' \
    --set webshop.attributes_file='$tmp/ws/items_ins_v2_1000.json' --set webshop.human_instructions_file='$tmp/ws/items_human_ins.json' \
    --set webshop.index_dir='$tmp/ws_index' --split test --task 0"
  expect_output_has "B000000001"
}

# ------------------------------------------------ the real data in shared/

test_checks_of_the_real_shared_data() {
  if [[ ! -d "$shared" ]]; then echo "note: $shared absent: real-data checks skipped"; return; fi
  local alf="$shared/alfworld/json_2.1.1" ws="$shared/webshop"
  run_ok prep alfworld "$alf" --eval-only
  expect_output_has "valid_seen: 140 games (ALFWorld: 140)"
  expect_output_has "valid_unseen: 134 games (ALFWorld: 134)"
  run_ok prep webshop "$ws/resources_100_documents.jsonl" "$ws/items_ins_v2_1000.json" "$ws/items_human_ins_record_B07FYPSNH8.json"
  expect_output_has "100 products (100 records)"
  expect_output_has "attributes of 1000 ASINs, 415 synthetic instructions, 100 of them in the product file"
  if [[ -x "$agentrl" ]]; then
    run_ok "$agentrl" env bench alfworld --set "alfworld.data_dir=$alf" --split valid_seen --policy expert --episodes 1
    expect_output_has "success 1.0000 (1/1)"
  fi
}

tests=(
  test_search_r1_keeps_flashrag_columns_and_data_source
  test_search_r1_reads_question_from_prompt_and_answers_from_reward_model
  test_search_r1_errors
  test_failed_conversion_keeps_the_previous_output
  test_math_verl_layout_strips_known_instructions
  test_math_plain_columns_gzip_pages_and_integer_answers
  test_math_jsonl_and_json_inputs
  test_math_errors
  test_wiki18_reads_gzip_and_normalises_lines
  test_wiki18_errors
  test_alfworld_check_counts_games_and_prints_data_dir
  test_alfworld_errors
  test_webshop_check_of_a_data_folder
  test_webshop_errors
  test_usage_errors_exit_2
  test_agentrl_accepts_the_converted_files
  test_checks_of_the_real_shared_data
)
# Tests run in this order: the agentrl checks read files converted before.
tests_passed=0
tests_failed=0
for t in "${tests[@]}"; do
  current="$t"
  before=$failed
  "$t"
  if [[ $failed -eq $before ]]; then
    echo "ok   $t"
    tests_passed=$((tests_passed + 1))
  else
    echo "FAIL $t"
    tests_failed=$((tests_failed + 1))
  fi
done
echo "($passed checks passed, $failed failed)"
echo "prepare_data: $tests_passed passed, $tests_failed failed"
[[ $tests_failed -eq 0 ]]
