// Reference token ids from an independent implementation of HF tokenizers:
// @lenml/tokenizers (a port of transformers.js). Used by bpe_tokenizer_test
// to check agentrl's BPE tokenizer id-for-id; never used at run time.
//
//   node reference_ids.js NODE_MODULES_DIR MODEL_DIR CORPUS_JSON ADD_SPECIAL(0|1)
//
// CORPUS_JSON is a JSON array of strings. Prints one JSON array of ids per
// corpus entry, one per line, in order.
"use strict";
const fs = require("fs");
const path = require("path");

const [nodeModules, modelDir, corpusPath, addSpecial] = process.argv.slice(2);
const { TokenizerLoader } = require(path.join(nodeModules, "@lenml", "tokenizers"));
const tokenizer = TokenizerLoader.fromPreTrained({
  tokenizerJSON: JSON.parse(fs.readFileSync(path.join(modelDir, "tokenizer.json"), "utf8")),
  tokenizerConfig: JSON.parse(fs.readFileSync(path.join(modelDir, "tokenizer_config.json"), "utf8")),
});
const corpus = JSON.parse(fs.readFileSync(corpusPath, "utf8"));
const lines = corpus.map((text) =>
  JSON.stringify(tokenizer.encode(text, { add_special_tokens: addSpecial === "1" })));
process.stdout.write(lines.join("\n") + "\n");
