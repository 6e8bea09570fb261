// Reading JSON Lines files (datasets, dumped rollouts, metrics.jsonl), and
// writing JSON text that holds model output.
//
// One JSON value per line; blank lines (only whitespace) are skipped. A
// malformed line throws FormatError "FILE:LINE: invalid JSON: <parser
// message>" (LINE is 1-based), so a bad record in a 100k-line dataset is
// found at once.
//
// Thread-safety: a JsonlReader is used by one thread at a time.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace agentrl {

class JsonlReader {
 public:
  // IoError "cannot open 'PATH': <reason>" if the file cannot be opened.
  explicit JsonlReader(const std::string& path);

  // Reads the next non-blank line into `out`; false at end of file.
  bool next(nlohmann::json& out);
  // 1-based line number of the value last returned by next().
  int64_t line() const { return line_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  int64_t line_ = 0;
};

// Every value of the file, in order.
std::vector<nlohmann::json> read_jsonl(const std::string& path);

// Calls fn(value, line) for every value; exceptions from fn propagate.
void for_each_jsonl(const std::string& path, const std::function<void(const nlohmann::json&, int64_t)>& fn);

// JSON text of `value` (one line for indent < 0). Bytes of strings that are
// not valid UTF-8 (a policy's byte-fallback tokens cut mid-character) are
// written as U+FFFD: nlohmann's plain dump() would throw and end a run.
std::string json_text(const nlohmann::json& value, int indent = -1);
// The same, keys in insertion order (metrics.jsonl puts step first).
std::string json_text(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace agentrl
