// Question answering utilities of the Deep Search env: answer scoring,
// response parsing and the data formats.
//
// Scoring follows the SQuAD v1.1 evaluation script (Rajpurkar et al. 2016),
// re-implemented: normalise = lowercase (Unicode, as Python's lower()),
// remove punctuation (ASCII), remove the
// articles a/an/the, collapse whitespace; exact match (EM) = equal normalised
// strings; F1 = word-overlap F1 of the normalised token bags. Against several
// gold answers the best score counts (Search-R1, FlashRAG).
//
// Response grammar (Search-R1 / ASearcher): the model writes <think>...</think>
// then exactly one action tag: <search> query </search>, <access> doc-id
// </access> or <answer> text </answer>. The action of a response is its last
// complete action tag, or (first = true) as Search-R1's
// re.search(r'<(search|answer)>(.*?)</\1>') finds it: the first opening tag
// that has its closing tag after it, up to the first such closing tag.
//
// Data formats:
//   FlashRAG QA JSONL:  {"id": ..., "question": ..., "golden_answers": [...]}
//                       optional "data_source" (Search-R1's dataset name,
//                       e.g. "nq"): the item's type, so evaluations report
//                       EM per data source
//   wiki-18 corpus JSONL: {"id": ..., "contents": "\"Title\"\ntext"}
// Malformed lines throw FormatError naming the file and the line.
//
// Thread-safety: pure functions; CorpusReader is used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace agentrl::envs::deepsearch {

std::string normalize_answer(const std::string& s);
double exact_match(const std::string& prediction, const std::vector<std::string>& golds);
double f1_score(const std::string& prediction, const std::vector<std::string>& golds);

enum class ActionKind { kSearch, kAccess, kAnswer };
struct ParsedAction {
  ActionKind kind;
  std::string content;  // trimmed text inside the tag
};
// The last complete <search>/<access>/<answer> tag; nullopt if none (or,
// with allow_access = false, when the last one is <access>).
std::optional<ParsedAction> parse_action(const std::string& response, bool allow_access, bool first = false);

struct QaItem {
  std::string id;
  std::string question;
  std::vector<std::string> golden_answers;
  std::string type;  // "1-hop", ... or "" for external data
};
std::vector<QaItem> load_flashrag_qa(const std::string& path);

// One wiki-18 passage. contents = "\"Title\"\ntext" (the title line is kept
// as in the corpus, quotes included, as Search-R1 shows it).
struct Passage {
  std::string id;
  std::string contents;
  std::string title() const;  // first line of contents
  std::string text() const;   // the rest
};
// Streaming reader of a wiki-18 JSONL corpus (constant memory).
class CorpusReader {
 public:
  explicit CorpusReader(const std::string& path);  // IoError if unreadable
  ~CorpusReader();
  bool next(Passage& out);  // FormatError "FILE:LINE: ..." on a bad line
  int64_t line() const;
  // Bytes read so far / file size (for progress reporting).
  uint64_t bytes_read() const;
  uint64_t file_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Search-R1's rendering of retrieved passages:
//   "Doc 1(Title: <title>) <text>\nDoc 2(...)..."
// With show_ids the id is added after the title ("Doc 1(Title: <t>, id: <id>)").
std::string format_passages(const std::vector<Passage>& docs, bool show_ids);

}  // namespace agentrl::envs::deepsearch
