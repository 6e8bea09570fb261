#include "agentrl/envs/deepsearch/qa.h"
#include "agentrl/envs/text_case.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/core/jsonl.h"
#include "agentrl/core/strings.h"

namespace agentrl::envs::deepsearch {
namespace {

using strings::trim;

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

double f1_one(const std::string& pred, const std::string& gold) {
  auto p = words(normalize_answer(pred)), g = words(normalize_answer(gold));
  if (p.empty() || g.empty()) return p == g ? 1.0 : 0.0;
  std::map<std::string, int> counts;
  for (auto& w : g) ++counts[w];
  int common = 0;
  for (auto& w : p)
    if (counts[w]-- > 0) ++common;
  if (common == 0) return 0.0;
  double precision = static_cast<double>(common) / p.size(), recall = static_cast<double>(common) / g.size();
  return 2 * precision * recall / (precision + recall);
}

}  // namespace

std::string normalize_answer(const std::string& s) {
  // lower (Python's, every letter) -> remove punctuation (ASCII, as Python's
  // string.punctuation) -> remove articles -> white-space fix, the order of
  // the SQuAD script and of Search-R1's qa_em.py.
  std::string t;
  for (char c : python_lower(s)) {
    if (std::ispunct(static_cast<unsigned char>(c))) continue;
    t += c;
  }
  std::string out;
  for (auto& w : words(t)) {
    if (w == "a" || w == "an" || w == "the") continue;
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

double exact_match(const std::string& prediction, const std::vector<std::string>& golds) {
  std::string p = normalize_answer(prediction);
  for (auto& g : golds)
    if (normalize_answer(g) == p) return 1.0;
  return 0.0;
}

double f1_score(const std::string& prediction, const std::vector<std::string>& golds) {
  double best = 0.0;
  for (auto& g : golds) best = std::max(best, f1_one(prediction, g));
  return best;
}

namespace {
// Search-R1's first match: the leftmost opening tag whose closing tag
// follows it (the lazy (.*?) ends at the first closing tag).
std::optional<ParsedAction> first_action(const std::string& response, bool allow_access) {
  const std::pair<const char*, ActionKind> tags[] = {
      {"search", ActionKind::kSearch}, {"access", ActionKind::kAccess}, {"answer", ActionKind::kAnswer}};
  for (size_t pos = response.find('<'); pos != std::string::npos; pos = response.find('<', pos + 1)) {
    for (auto& [tag, kind] : tags) {
      if (kind == ActionKind::kAccess && !allow_access) continue;
      const std::string open = std::string("<") + tag + ">", close = std::string("</") + tag + ">";
      if (response.compare(pos, open.size(), open) != 0) continue;
      const size_t end = response.find(close, pos + open.size());
      if (end == std::string::npos) continue;
      return ParsedAction{kind, trim(response.substr(pos + open.size(), end - pos - open.size()))};
    }
  }
  return std::nullopt;
}

// The last complete action tag (any kind; access is judged by the caller).
std::optional<ParsedAction> last_action(const std::string& response) {
  std::optional<ParsedAction> best;
  size_t best_pos = 0;
  const std::pair<const char*, ActionKind> tags[] = {
      {"search", ActionKind::kSearch}, {"access", ActionKind::kAccess}, {"answer", ActionKind::kAnswer}};
  for (auto& [tag, kind] : tags) {
    const std::string open = std::string("<") + tag + ">", close = std::string("</") + tag + ">";
    size_t end = response.rfind(close);
    if (end == std::string::npos) continue;
    size_t start = response.rfind(open, end);
    if (start == std::string::npos) continue;
    if (!best || end > best_pos) {
      best = ParsedAction{kind, trim(response.substr(start + open.size(), end - start - open.size()))};
      best_pos = end;
    }
  }
  return best;
}
}  // namespace

std::optional<ParsedAction> parse_action(const std::string& response, bool allow_access, bool first) {
  auto a = first ? first_action(response, allow_access) : last_action(response);
  if (a && a->kind == ActionKind::kAccess && !allow_access) return std::nullopt;
  // An empty query or doc id is no action (Search-R1 would send the empty
  // query as it is; agentrl's retrievers need one).
  if (a && a->content.empty() && a->kind != ActionKind::kAnswer) return std::nullopt;
  return a;
}

std::vector<QaItem> load_flashrag_qa(const std::string& path) {
  std::vector<QaItem> out;
  for_each_jsonl(path, [&](const nlohmann::json& j, int64_t line) {
    const std::string where = path + ":" + std::to_string(line) + ": ";
    if (!j.is_object()) throw FormatError(where + "expected a JSON object");
    if (!j.contains("question") || !j["question"].is_string())
      throw FormatError(where + "missing string field \"question\"");
    if (!j.contains("golden_answers") || !j["golden_answers"].is_array() || j["golden_answers"].empty())
      throw FormatError(where + "missing non-empty array field \"golden_answers\"");
    QaItem q;
    q.question = j["question"].get<std::string>();
    for (auto& a : j["golden_answers"]) {
      if (a.is_string()) q.golden_answers.push_back(a.get<std::string>());
      else if (a.is_number()) q.golden_answers.push_back(a.dump());
      else throw FormatError(where + "\"golden_answers\" must hold strings");
    }
    if (j.contains("id")) q.id = j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump();
    if (j.contains("data_source")) {
      if (!j["data_source"].is_string()) throw FormatError(where + "\"data_source\" must be a string");
      q.type = j["data_source"].get<std::string>();
    }
    if (q.id.empty()) q.id = std::to_string(out.size());
    out.push_back(std::move(q));
  });
  return out;
}

std::string Passage::title() const {
  size_t nl = contents.find('\n');
  return nl == std::string::npos ? contents : contents.substr(0, nl);
}
std::string Passage::text() const {
  size_t nl = contents.find('\n');
  return nl == std::string::npos ? "" : contents.substr(nl + 1);
}

struct CorpusReader::Impl {
  std::string path;
  std::ifstream in;
  int64_t line = 0;
  uint64_t bytes = 0, size = 0;
};

CorpusReader::CorpusReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->in.open(path, std::ios::binary);
  if (!impl_->in) throw IoError("cannot open corpus '" + path + "'");
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) impl_->size = static_cast<uint64_t>(st.st_size);
}
CorpusReader::~CorpusReader() = default;
int64_t CorpusReader::line() const { return impl_->line; }
uint64_t CorpusReader::bytes_read() const { return impl_->bytes; }
uint64_t CorpusReader::file_size() const { return impl_->size; }

bool CorpusReader::next(Passage& out) {
  std::string text;
  while (std::getline(impl_->in, text)) {
    ++impl_->line;
    impl_->bytes += text.size() + 1;
    if (strings::is_blank(text)) continue;
    const std::string where = impl_->path + ":" + std::to_string(impl_->line) + ": ";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw FormatError(where + "invalid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("contents") || !j["contents"].is_string())
      throw FormatError(where + "expected an object with a string field \"contents\" (wiki-18 format)");
    if (!j.contains("id")) throw FormatError(where + "missing field \"id\"");
    out.id = j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump();
    out.contents = j["contents"].get<std::string>();
    return true;
  }
  return false;
}

std::string format_passages(const std::vector<Passage>& docs, bool show_ids) {
  std::string out;
  for (size_t i = 0; i < docs.size(); ++i) {
    out += "Doc " + std::to_string(i + 1) + "(Title: " + docs[i].title();
    if (show_ids) out += ", id: " + docs[i].id;
    out += ") " + docs[i].text() + "\n";
  }
  return out;
}

}  // namespace agentrl::envs::deepsearch
