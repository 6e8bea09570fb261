// A small on-disk BM25 full-text index (Xapian backend).
//
// Used by the WebShop env (product search) and the Deep Search env (document
// retrieval). Documents have an id, the text that is indexed and a "stored"
// payload returned with every hit (e.g. the product JSON or passage text).
//
// Text analysis, index and query side alike: Xapian's TermGenerator /
// QueryParser with the English (Snowball/Porter2) stemmer, every term stemmed
// (STEM_ALL), and Lucene's English stop-word list removed, so that scoring
// approximates pyserini's default Lucene EnglishAnalyzer. Queries are a bag of
// words combined with OR (pyserini's default), ranked by Xapian's
// BM25Weight(k1, k2 = 0, k3 = 1, b, min_normlen = 0). Xapian's BM25 uses the
// Robertson/Sparck-Jones idf log((N - n + 0.5) / (n + 0.5)) (halved near 0)
// where Lucene uses log(1 + (N - n + 0.5) / (n + 0.5)); rankings agree for
// terms rarer than half the collection, which is what matters for product
// and passage search. Ties are broken by insertion order (lower docid first).
//
// Writer: streaming; documents are flushed to disk every `commit_every`
// documents, so memory stays bounded for corpora of millions of documents.
// A directory is a complete index only after commit() (or the writer's
// destructor) ran; Bm25Index::open checks for the completion marker file.
//
// Thread-safety: Bm25IndexWriter is single-threaded. Bm25Index is immutable
// and all its const methods are safe to call concurrently: Xapian::Database
// is not thread-safe, so the index keeps a mutex-guarded pool of database
// handles and each call borrows one (the pool grows to the number of
// concurrent callers).
//
// This layer is torch-free.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace agentrl::envs::search {

// BM25 parameters; defaults are pyserini's (k1 = 0.9, b = 0.4).
struct Bm25Params {
  double k1 = 0.9;
  double b = 0.4;
};

struct IndexDocument {
  std::string id;      // unique; returned with hits, usable with Bm25Index::get
  std::string text;    // the text that is analysed and indexed
  std::string stored;  // opaque payload returned with hits (not indexed)
};

struct SearchHit {
  std::string id;
  double score = 0.0;
  std::string stored;
};

class Bm25IndexWriter {
 public:
  // Creates an index in `dir` (created if missing). If `dir` already holds
  // an index: overwrite = true replaces it, false throws ConfigError.
  // IoError if the directory cannot be created / written.
  explicit Bm25IndexWriter(const std::string& dir, bool overwrite, size_t commit_every = 10000);
  ~Bm25IndexWriter();  // commits if commit() was not called (errors swallowed)
  Bm25IndexWriter(const Bm25IndexWriter&) = delete;
  Bm25IndexWriter& operator=(const Bm25IndexWriter&) = delete;

  // Adds one document. A duplicate id replaces the earlier document.
  void add(const IndexDocument& doc);
  // Flushes everything and writes the completion marker. Further add() calls
  // after commit() throw std::logic_error.
  void commit();
  // Documents added so far.
  size_t count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class Bm25Index {
 public:
  // Opens a committed index. A missing directory, a directory without a
  // committed index, or a corrupt index throws ConfigError naming `dir`.
  static std::shared_ptr<const Bm25Index> open(const std::string& dir, Bm25Params params = {});
  // True when `dir` holds a committed index (cheap; does not open it).
  static bool exists(const std::string& dir);

  ~Bm25Index();
  Bm25Index(const Bm25Index&) = delete;
  Bm25Index& operator=(const Bm25Index&) = delete;

  // Top-k hits for `query`, best first (score descending, ties by insertion
  // order). A query with no indexable terms returns no hits. Thread-safe.
  std::vector<SearchHit> search(const std::string& query, size_t k) const;
  // Number of documents.
  size_t size() const;
  // The document with `id` (score 0), or nullopt. Thread-safe.
  std::optional<SearchHit> get(const std::string& id) const;
  const std::string& dir() const;

 private:
  struct Impl;
  explicit Bm25Index(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentrl::envs::search
