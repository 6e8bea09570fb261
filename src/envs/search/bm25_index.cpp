// Xapian-backed BM25 index; contract in include/agentrl/envs/search/bm25_index.h.
#include "agentrl/envs/search/bm25_index.h"

#include <xapian.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <unordered_set>

#include "agentrl/core/error.h"

namespace agentrl::envs::search {
namespace fs = std::filesystem;

namespace {

// Written into the index directory by commit(); open() requires it, so an
// interrupted build is never mistaken for a complete index.
constexpr const char* kMarker = "agentrl_bm25_complete";
constexpr const char* kXapianDir = "xapian";
// Unique-id term prefix (Xapian's convention: "Q" for unique ids).
constexpr const char* kIdPrefix = "Q";

// Lucene's EnglishAnalyzer stop set (the 33 words pyserini's default English
// analyzer removes), so document lengths and query terms match pyserini.
const char* const kStopWords[] = {"a",    "an",   "and",   "are",  "as",   "at",    "be",    "but",  "by",
                                  "for",  "if",   "in",    "into", "is",   "it",    "no",    "not",  "of",
                                  "on",   "or",   "such",  "that", "the",  "their", "then",  "there", "these",
                                  "they", "this", "to",    "was",  "will", "with"};

std::string id_term(const std::string& id) { return kIdPrefix + id; }

// Shared analyser configuration for documents and queries.
struct Analyzer {
  Xapian::Stem stem{"english"};
  Xapian::SimpleStopper stopper{std::begin(kStopWords), std::end(kStopWords)};

  void configure(Xapian::TermGenerator& tg) const {
    tg.set_stemmer(stem);
    tg.set_stemming_strategy(Xapian::TermGenerator::STEM_ALL);
    tg.set_stopper(&stopper);
    tg.set_stopper_strategy(Xapian::TermGenerator::STOP_ALL);
  }
};

// One analyzer per thread: Xapian's Stem and Stopper are reference counted
// without atomics, so sharing one instance between threads that configure
// TermGenerators concurrently corrupts the count (seen as a rare abort in
// concurrent searches).
const Analyzer& analyzer() {
  static thread_local const Analyzer a;
  return a;
}

}  // namespace

// ---------------------------------------------------------------- writer

struct Bm25IndexWriter::Impl {
  std::string dir;
  size_t commit_every = 10000;
  size_t count = 0;
  size_t pending = 0;
  bool committed = false;
  // Hashes of the ids added so far. The database starts empty, so an id
  // whose hash is new cannot be in it and is added directly; replace_document
  // (a term lookup per document) is only paid for possible duplicates.
  std::unordered_set<uint64_t> seen;
  Xapian::WritableDatabase db;
  Xapian::TermGenerator tg;
};

Bm25IndexWriter::Bm25IndexWriter(const std::string& dir, bool overwrite, size_t commit_every)
    : impl_(std::make_unique<Impl>()) {
  impl_->dir = dir;
  impl_->commit_every = commit_every == 0 ? 10000 : commit_every;
  std::error_code ec;
  if (fs::exists(fs::path(dir) / kMarker) || fs::exists(fs::path(dir) / kXapianDir)) {
    if (!overwrite)
      throw ConfigError("search index directory '" + dir + "' already holds an index (pass overwrite to rebuild)");
    fs::remove(fs::path(dir) / kMarker, ec);
    fs::remove_all(fs::path(dir) / kXapianDir, ec);
  }
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create search index directory '" + dir + "': " + ec.message());
  try {
    impl_->db = Xapian::WritableDatabase((fs::path(dir) / kXapianDir).string(), Xapian::DB_CREATE_OR_OVERWRITE);
  } catch (const Xapian::Error& e) {
    throw IoError("cannot create search index in '" + dir + "': " + e.get_description());
  }
  analyzer().configure(impl_->tg);
}

Bm25IndexWriter::~Bm25IndexWriter() {
  if (impl_ && !impl_->committed) {
    try {
      commit();
    } catch (...) {
      // Destructors must not throw; an uncommitted index has no marker and
      // is rejected by Bm25Index::open.
    }
  }
}

void Bm25IndexWriter::add(const IndexDocument& doc) {
  if (impl_->committed) throw std::logic_error("Bm25IndexWriter::add after commit");
  Xapian::Document xdoc;
  impl_->tg.set_document(xdoc);
  impl_->tg.index_text_without_positions(doc.text);
  const std::string term = id_term(doc.id);
  xdoc.add_boolean_term(term);
  xdoc.add_value(0, doc.id);
  xdoc.set_data(doc.stored);
  try {
    if (impl_->seen.insert(std::hash<std::string>()(doc.id)).second)
      impl_->db.add_document(xdoc);
    else
      impl_->db.replace_document(term, xdoc);
    if (++impl_->pending >= impl_->commit_every) {
      impl_->db.commit();
      impl_->pending = 0;
    }
  } catch (const Xapian::Error& e) {
    throw IoError("writing search index '" + impl_->dir + "' failed: " + e.get_description());
  }
  ++impl_->count;
}

void Bm25IndexWriter::commit() {
  if (impl_->committed) return;
  try {
    impl_->db.commit();
    impl_->db.close();
  } catch (const Xapian::Error& e) {
    throw IoError("committing search index '" + impl_->dir + "' failed: " + e.get_description());
  }
  std::ofstream marker(fs::path(impl_->dir) / kMarker);
  marker << impl_->count << "\n";
  if (!marker) throw IoError("cannot write '" + (fs::path(impl_->dir) / kMarker).string() + "'");
  impl_->committed = true;
}

size_t Bm25IndexWriter::count() const { return impl_->count; }

// ---------------------------------------------------------------- reader

struct Bm25Index::Impl {
  std::string dir;
  std::string db_path;
  Bm25Params params;
  size_t size = 0;
  mutable std::mutex mu;
  mutable std::vector<std::unique_ptr<Xapian::Database>> free_handles;

  // RAII borrow of one database handle from the pool.
  class Handle {
   public:
    explicit Handle(const Impl& impl) : impl_(impl) {
      {
        std::lock_guard<std::mutex> lock(impl_.mu);
        if (!impl_.free_handles.empty()) {
          db_ = std::move(impl_.free_handles.back());
          impl_.free_handles.pop_back();
        }
      }
      if (!db_) db_ = std::make_unique<Xapian::Database>(impl_.db_path);
    }
    ~Handle() {
      std::lock_guard<std::mutex> lock(impl_.mu);
      impl_.free_handles.push_back(std::move(db_));
    }
    Xapian::Database& db() { return *db_; }

   private:
    const Impl& impl_;
    std::unique_ptr<Xapian::Database> db_;
  };
};

Bm25Index::Bm25Index(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Bm25Index::~Bm25Index() = default;

bool Bm25Index::exists(const std::string& dir) {
  std::error_code ec;
  return fs::exists(fs::path(dir) / kMarker, ec) && fs::is_directory(fs::path(dir) / kXapianDir, ec);
}

std::shared_ptr<const Bm25Index> Bm25Index::open(const std::string& dir, Bm25Params params) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ConfigError("search index directory '" + dir + "' does not exist (build the index first)");
  if (!exists(dir))
    throw ConfigError("search index directory '" + dir + "' holds no committed index (missing '" +
                      std::string(kMarker) + "'; the build was interrupted or this is not an index)");
  if (!(params.k1 >= 0) || !(params.b >= 0 && params.b <= 1))
    throw ConfigError("BM25 parameters out of range: k1 = " + std::to_string(params.k1) +
                      " (expected >= 0), b = " + std::to_string(params.b) + " (expected in [0, 1])");
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->db_path = (fs::path(dir) / kXapianDir).string();
  impl->params = params;
  try {
    auto db = std::make_unique<Xapian::Database>(impl->db_path);
    impl->size = db->get_doccount();
    impl->free_handles.push_back(std::move(db));
  } catch (const Xapian::Error& e) {
    throw ConfigError("search index '" + dir + "' is corrupt or unreadable: " + e.get_description());
  }
  return std::shared_ptr<const Bm25Index>(new Bm25Index(std::move(impl)));
}

std::vector<SearchHit> Bm25Index::search(const std::string& query, size_t k) const {
  std::vector<SearchHit> hits;
  if (k == 0) return hits;
  // Analyse the query exactly like documents; repeated words keep their
  // count as within-query frequency (pyserini's bag-of-words query boosts a
  // term by its count).
  Xapian::Document scratch;
  Xapian::TermGenerator tg;
  analyzer().configure(tg);
  tg.set_document(scratch);
  tg.index_text_without_positions(query);
  std::vector<Xapian::Query> terms;
  for (auto it = scratch.termlist_begin(); it != scratch.termlist_end(); ++it)
    terms.emplace_back(*it, it.get_wdf());
  if (terms.empty()) return hits;
  Xapian::Query q(Xapian::Query::OP_OR, terms.begin(), terms.end());
  try {
    Impl::Handle h(*impl_);
    Xapian::Enquire enquire(h.db());
    enquire.set_query(q);
    // k2 = 0 (no query-length correction, as in Lucene), k3 = 1 (Xapian's
    // default wqf saturation), min_normlen = 0 (Lucene does not clamp
    // short documents).
    enquire.set_weighting_scheme(Xapian::BM25Weight(impl_->params.k1, 0, 1, impl_->params.b, 0));
    enquire.set_docid_order(Xapian::Enquire::ASCENDING);
    Xapian::MSet mset = enquire.get_mset(0, static_cast<Xapian::doccount>(k));
    hits.reserve(mset.size());
    for (auto it = mset.begin(); it != mset.end(); ++it) {
      Xapian::Document d = it.get_document();
      hits.push_back({d.get_value(0), it.get_weight(), d.get_data()});
    }
  } catch (const Xapian::Error& e) {
    throw IoError("search in index '" + impl_->dir + "' failed: " + e.get_description());
  }
  return hits;
}

size_t Bm25Index::size() const { return impl_->size; }

std::optional<SearchHit> Bm25Index::get(const std::string& id) const {
  try {
    Impl::Handle h(*impl_);
    const std::string term = id_term(id);
    auto it = h.db().postlist_begin(term);
    if (it == h.db().postlist_end(term)) return std::nullopt;
    Xapian::Document d = h.db().get_document(*it);
    return SearchHit{d.get_value(0), 0.0, d.get_data()};
  } catch (const Xapian::Error& e) {
    throw IoError("lookup in index '" + impl_->dir + "' failed: " + e.get_description());
  }
}

const std::string& Bm25Index::dir() const { return impl_->dir; }

}  // namespace agentrl::envs::search
