#include "agentrl/core/jsonl.h"

#include <errno.h>
#include <string.h>

#include "agentrl/core/error.h"
#include "agentrl/core/strings.h"

namespace agentrl {

JsonlReader::JsonlReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
  if (!in_) throw IoError("cannot open '" + path + "': " + ::strerror(errno));
}

bool JsonlReader::next(nlohmann::json& out) {
  std::string text;
  while (std::getline(in_, text)) {
    ++line_;
    if (!text.empty() && text.back() == '\r') text.pop_back();  // CRLF files
    if (strings::is_blank(text)) continue;
    try {
      out = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      // e.what() starts with "[json.exception.parse_error.101] "; keep the
      // human part ("parse error at line 1, column 7: ...").
      std::string msg = e.what();
      const size_t close = msg.find("] ");
      if (msg.rfind("[json.exception", 0) == 0 && close != std::string::npos) msg = msg.substr(close + 2);
      throw FormatError(path_ + ":" + std::to_string(line_) + ": invalid JSON: " + msg);
    }
    return true;
  }
  if (in_.bad()) throw IoError("cannot read '" + path_ + "': read error");
  return false;
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> out;
  JsonlReader r(path);
  nlohmann::json v;
  while (r.next(v)) out.push_back(std::move(v));
  return out;
}

void for_each_jsonl(const std::string& path, const std::function<void(const nlohmann::json&, int64_t)>& fn) {
  JsonlReader r(path);
  nlohmann::json v;
  while (r.next(v)) fn(v, r.line());
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_text(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace agentrl
