#include "agentrl/envs/deepsearch/retriever.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "agentrl/core/error.h"
#include "agentrl/envs/search/bm25_index.h"

namespace agentrl::envs::deepsearch {

using nlohmann::json;

// ---- local ----------------------------------------------------------------

LocalRetriever::LocalRetriever(const std::string& dir, double k1, double b)
    : index_(search::Bm25Index::open(dir, search::Bm25Params{k1, b})) {}

std::vector<std::vector<RetrievedPassage>> LocalRetriever::search_batch(const std::vector<std::string>& queries,
                                                                        size_t k) const {
  std::vector<std::vector<RetrievedPassage>> out;
  out.reserve(queries.size());
  for (auto& q : queries) {
    std::vector<RetrievedPassage> hits;
    for (auto& h : index_->search(q, k)) hits.push_back({Passage{h.id, h.stored}, h.score});
    out.push_back(std::move(hits));
  }
  return out;
}

std::optional<Passage> LocalRetriever::get(const std::string& id) const {
  auto h = index_->get(id);
  if (!h) return std::nullopt;
  return Passage{h->id, h->stored};
}

size_t LocalRetriever::size() const { return index_->size(); }

// ---- index building -----------------------------------------------------

int64_t build_corpus_index(const std::string& corpus_path, const std::string& out_dir, bool overwrite,
                           const std::function<void(int64_t, uint64_t, uint64_t)>& progress) {
  CorpusReader reader(corpus_path);
  search::Bm25IndexWriter writer(out_dir, overwrite);
  Passage p;
  int64_t n = 0;
  while (reader.next(p)) {
    writer.add({p.id, p.contents, p.contents});
    if (++n % 5000 == 0 && progress) progress(n, reader.bytes_read(), reader.file_size());
  }
  writer.commit();
  if (progress) progress(n, reader.file_size(), reader.file_size());
  return n;
}

void build_passage_index(const std::vector<Passage>& passages, const std::string& out_dir, bool overwrite) {
  search::Bm25IndexWriter writer(out_dir, overwrite);
  for (auto& p : passages) writer.add({p.id, p.contents, p.contents});
  writer.commit();
}

// ---- http client -----------------------------------------------------------

HttpReply http_post(const std::string& scheme_host_port, const std::string& path, const std::string& json_body,
                    double connect_timeout_s, double read_timeout_s) {
  // One client per call: httplib::Client is not safe for concurrent use.
  httplib::Client cli(scheme_host_port);
  auto split = [](double s) {
    return std::make_pair(static_cast<time_t>(s), static_cast<time_t>((s - static_cast<double>(static_cast<time_t>(s))) * 1e6));
  };
  auto [cs, cu] = split(connect_timeout_s);
  auto [rs, ru] = split(read_timeout_s);
  cli.set_connection_timeout(cs, cu);
  cli.set_read_timeout(rs, ru);
  cli.set_write_timeout(rs, ru);
  HttpReply reply;
  auto res = cli.Post(path.c_str(), json_body, "application/json");
  if (!res) {
    reply.error = httplib::to_string(res.error());
    return reply;
  }
  reply.status = res->status;
  reply.body = res->body;
  return reply;
}

HttpRetriever::HttpRetriever(HttpRetrieverOptions options) : options_(std::move(options)) {
  const std::string& u = options_.url;
  if (u.rfind("http://", 0) != 0 && u.rfind("https://", 0) != 0)
    throw ConfigError("deepsearch.retriever.url: '" + u + "' must start with http:// or https://");
  scheme_host_port_ = u;
  while (!scheme_host_port_.empty() && scheme_host_port_.back() == '/') scheme_host_port_.pop_back();
  // Search-R1's scripts name the endpoint itself (http://host:8000/retrieve):
  // both that and the bare server address are accepted.
  const std::string endpoint = "/retrieve";
  if (scheme_host_port_.size() > endpoint.size() &&
      scheme_host_port_.compare(scheme_host_port_.size() - endpoint.size(), endpoint.size(), endpoint) == 0)
    scheme_host_port_.resize(scheme_host_port_.size() - endpoint.size());
  if (scheme_host_port_.find('/', scheme_host_port_.find("//") + 2) != std::string::npos)
    throw ConfigError("deepsearch.retriever.url: '" + u +
                      "' must be scheme://host:port or scheme://host:port/retrieve (no other path)");
}
HttpRetriever::~HttpRetriever() = default;

std::string HttpRetriever::post(const std::string& path, const std::string& body) const {
  std::string last_error;
  double backoff = options_.backoff_s;
  for (int64_t attempt = 0; attempt <= options_.retries; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
      backoff *= 2;
    }
    HttpReply res = http_post(scheme_host_port_, path, body, options_.connect_timeout_s, options_.read_timeout_s);
    if (res.status == 0) {
      last_error = res.error;
      continue;
    }
    if (res.status == 200) return res.body;
    last_error = "HTTP " + std::to_string(res.status) + ": " + res.body.substr(0, 200);
    if (res.status >= 400 && res.status < 500) break;  // our request is wrong; retrying will not help
  }
  throw IoError("deepsearch retriever at " + scheme_host_port_ + path + " failed after " +
                std::to_string(options_.retries + 1) + " attempt(s): " + last_error +
                " (is `agentrl retriever serve` or Search-R1's retrieval_server.py running there?)");
}

namespace {
Passage passage_from_json(const json& doc, const std::string& where) {
  if (!doc.is_object() || !doc.contains("contents") || !doc["contents"].is_string())
    throw FormatError(where + ": document without string \"contents\"");
  Passage p;
  if (doc.contains("id")) p.id = doc["id"].is_string() ? doc["id"].get<std::string>() : doc["id"].dump();
  p.contents = doc["contents"].get<std::string>();
  return p;
}
}  // namespace

std::vector<std::vector<RetrievedPassage>> HttpRetriever::search_batch(const std::vector<std::string>& queries,
                                                                       size_t k) const {
  json req = {{"queries", queries}, {"topk", k}, {"return_scores", true}};
  std::string body = post("/retrieve", req.dump());
  const std::string where = "response of " + scheme_host_port_ + "/retrieve";
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {
    throw FormatError(where + ": invalid JSON (" + e.what() + ")");
  }
  if (!j.contains("result") || !j["result"].is_array() || j["result"].size() != queries.size())
    throw FormatError(where + ": expected {\"result\": [...]} with one list per query");
  std::vector<std::vector<RetrievedPassage>> out;
  for (auto& per_query : j["result"]) {
    std::vector<RetrievedPassage> hits;
    for (auto& hit : per_query) {
      // return_scores: {"document": {...}, "score": s}; otherwise the bare document.
      if (hit.contains("document"))
        hits.push_back({passage_from_json(hit["document"], where), hit.value("score", 0.0)});
      else
        hits.push_back({passage_from_json(hit, where), 0.0});
    }
    out.push_back(std::move(hits));
  }
  return out;
}

std::optional<Passage> HttpRetriever::get(const std::string& id) const {
  std::string body = post("/access", json({{"ids", {id}}}).dump());
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  const std::string where = "response of " + scheme_host_port_ + "/access";
  if (!j.is_object() || !j.contains("result") || !j["result"].is_array() || j["result"].size() != 1)
    throw FormatError(where + ": expected {\"result\": [document or null]}");
  if (j["result"][0].is_null()) return std::nullopt;
  return passage_from_json(j["result"][0], where);
}

// ---- server ----------------------------------------------------------------

struct RetrievalServer::Impl {
  httplib::Server server;
};

namespace {
json doc_json(const Passage& p) { return {{"id", p.id}, {"contents", p.contents}}; }
void reply_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(json({{"error", message}}).dump(), "application/json");
}
}  // namespace

RetrievalServer::RetrievalServer(std::shared_ptr<const Retriever> retriever, const std::string& host, int port)
    : impl_(std::make_unique<Impl>()) {
  if (host != "127.0.0.1" && host != "localhost" && host != "::1")
    throw ConfigError("retriever serve: --host '" + host + "' is not a loopback address (127.0.0.1, localhost, ::1)");
  auto& svr = impl_->server;
  svr.Post("/retrieve", [this, retriever](const httplib::Request& req, httplib::Response& res) {
    ++served_;
    json j = json::parse(req.body, nullptr, false);
    if (!j.is_object() || !j.contains("queries") || !j["queries"].is_array())
      return reply_error(res, 400, "expected {\"queries\": [...], \"topk\": k, \"return_scores\": bool}");
    std::vector<std::string> queries;
    for (auto& q : j["queries"]) {
      if (!q.is_string()) return reply_error(res, 400, "\"queries\" must hold strings");
      queries.push_back(q.get<std::string>());
    }
    try {
      int64_t k = j.value("topk", 3);
      if (k < 1 || k > 1000) return reply_error(res, 400, "\"topk\" must be in [1, 1000]");
      bool scores = j.value("return_scores", false);
      json result = json::array();
      for (auto& hits : retriever->search_batch(queries, static_cast<size_t>(k))) {
        json list = json::array();
        for (auto& h : hits) list.push_back(scores ? json{{"document", doc_json(h.passage)}, {"score", h.score}}
                                                   : doc_json(h.passage));
        result.push_back(std::move(list));
      }
      res.set_content(json({{"result", result}}).dump(), "application/json");
    } catch (const json::exception& e) {
      reply_error(res, 400, std::string("bad request: ") + e.what());
    } catch (const std::exception& e) {
      reply_error(res, 500, e.what());
    }
  });
  svr.Post("/access", [this, retriever](const httplib::Request& req, httplib::Response& res) {
    ++served_;
    json j = json::parse(req.body, nullptr, false);
    if (!j.is_object() || !j.contains("ids") || !j["ids"].is_array())
      return reply_error(res, 400, "expected {\"ids\": [...]}");
    json result = json::array();
    for (auto& id : j["ids"]) {
      auto p = id.is_string() ? retriever->get(id.get<std::string>()) : std::nullopt;
      result.push_back(p ? doc_json(*p) : json(nullptr));
    }
    res.set_content(json({{"result", result}}).dump(), "application/json");
  });
  if (port == 0) {
    port_ = svr.bind_to_any_port(host.c_str());
  } else {
    port_ = svr.bind_to_port(host.c_str(), port) ? port : -1;
  }
  if (port_ <= 0)
    throw IoError("retriever serve: cannot bind " + host + ":" + std::to_string(port) + " (port in use?)");
  thread_ = std::thread([this] { impl_->server.listen_after_bind(); });
  // Wait (bounded) until the accept loop runs, so that callers can connect
  // as soon as the constructor returns.
  for (int i = 0; i < 500 && !impl_->server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

RetrievalServer::~RetrievalServer() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void RetrievalServer::wait() {
  if (thread_.joinable()) thread_.join();
}
void RetrievalServer::stop() { impl_->server.stop(); }

}  // namespace agentrl::envs::deepsearch
