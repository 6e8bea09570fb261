// Passage retrieval backends of the Deep Search env, the index builder and
// the retrieval server.
//
//   LocalRetriever: BM25 over an on-disk index (envs/search/bm25_index.h)
//     built from a wiki-18 JSONL corpus by build_corpus_index (streaming:
//     constant memory, so the 21M-passage wiki-18 corpus works).
//   HttpRetriever: a remote retriever speaking Search-R1's retrieval-server
//     API (search_r1/search/retrieval_server.py):
//       POST /retrieve {"queries": [...], "topk": k, "return_scores": true}
//       -> {"result": [[{"document": {"id", "contents"}, "score"}, ...], ...]}
//     (with return_scores false each hit is the bare document). Connection
//     and read timeouts, a bounded number of retries with backoff, and an
//     IoError naming the URL when the server stays unreachable.
//     Access by id uses an agentrl extension of that API:
//       POST /access {"ids": [...]} -> {"result": [{"id", "contents"} | null, ...]}
//   RetrievalServer: serves a local index over that API (`agentrl
//     retriever serve`), so many trainer processes share one index. It binds
//     loopback addresses only.
//
// Thread-safety: Retriever implementations are safe for concurrent calls
// (one instance is shared by all env instances of a suite). RetrievalServer
// is started and stopped by one thread; it serves requests on its own pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agentrl/envs/deepsearch/qa.h"

namespace agentrl::envs::search {
class Bm25Index;
}

namespace agentrl::envs::deepsearch {

struct RetrievedPassage {
  Passage passage;
  double score = 0.0;
};

class Retriever {
 public:
  virtual ~Retriever() = default;
  // Top-k passages of each query (best first). Throws IoError when a remote
  // backend is unreachable.
  virtual std::vector<std::vector<RetrievedPassage>> search_batch(const std::vector<std::string>& queries,
                                                                  size_t k) const = 0;
  std::vector<RetrievedPassage> search(const std::string& query, size_t k) const {
    return search_batch({query}, k).at(0);
  }
  // The passage with `id`, or nullopt.
  virtual std::optional<Passage> get(const std::string& id) const = 0;
};

class LocalRetriever final : public Retriever {
 public:
  // Opens the index in `dir` (ConfigError if it is not a committed index).
  LocalRetriever(const std::string& dir, double k1, double b);
  std::vector<std::vector<RetrievedPassage>> search_batch(const std::vector<std::string>& queries,
                                                          size_t k) const override;
  std::optional<Passage> get(const std::string& id) const override;
  size_t size() const;

 private:
  std::shared_ptr<const search::Bm25Index> index_;
};

struct HttpRetrieverOptions {
  std::string url = "http://127.0.0.1:8000";  // scheme://host:port, optionally + "/retrieve" (Search-R1's form)
  double connect_timeout_s = 2.0;
  double read_timeout_s = 10.0;
  int64_t retries = 3;      // extra attempts after the first
  double backoff_s = 0.25;  // doubled after every failed attempt
};

class HttpRetriever final : public Retriever {
 public:
  explicit HttpRetriever(HttpRetrieverOptions options);  // ConfigError for a malformed URL
  ~HttpRetriever() override;
  std::vector<std::vector<RetrievedPassage>> search_batch(const std::vector<std::string>& queries,
                                                          size_t k) const override;
  std::optional<Passage> get(const std::string& id) const override;

 private:
  std::string post(const std::string& path, const std::string& body) const;
  HttpRetrieverOptions options_;
  std::string scheme_host_port_;
};

// One HTTP POST with a JSON body (a thin wrapper of cpp-httplib, so that
// callers outside this library need neither its headers nor its flags).
// status 0 and a non-empty error when no response came.
struct HttpReply {
  int status = 0;
  std::string body;
  std::string error;
};
HttpReply http_post(const std::string& scheme_host_port, const std::string& path, const std::string& json_body,
                    double connect_timeout_s = 2.0, double read_timeout_s = 10.0);

// Builds a BM25 index of a wiki-18 JSONL corpus, streaming. `progress` is
// called every few thousand passages with (passages so far, bytes read,
// file size). Returns the number of passages.
int64_t build_corpus_index(const std::string& corpus_path, const std::string& out_dir, bool overwrite,
                           const std::function<void(int64_t, uint64_t, uint64_t)>& progress = {});
// Same for passages already in memory (the built-in world).
void build_passage_index(const std::vector<Passage>& passages, const std::string& out_dir, bool overwrite);

class RetrievalServer {
 public:
  // Serves `retriever` on host:port (port 0 = any free port). Only loopback
  // hosts are accepted (ConfigError otherwise); IoError if binding fails.
  RetrievalServer(std::shared_ptr<const Retriever> retriever, const std::string& host, int port);
  ~RetrievalServer();  // stops and joins
  RetrievalServer(const RetrievalServer&) = delete;
  RetrievalServer& operator=(const RetrievalServer&) = delete;

  int port() const { return port_; }
  // Blocks until stop() is called from another thread (or a signal handler
  // calls it); used by `agentrl retriever serve`.
  void wait();
  void stop();
  int64_t requests_served() const { return served_.load(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int64_t> served_{0};
};

}  // namespace agentrl::envs::deepsearch
