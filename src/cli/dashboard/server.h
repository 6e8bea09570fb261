// `agentrl dashboard`'s HTTP server: a read-only local web page over one or
// more run directories (cpp-httplib on its own thread).
//
// Routes (GET only; JSON documents from RunReader, see run_reader.h):
//   /, /app.js, /app.css          the page (embedded in the binary)
//   /lib/dygraph.min.js|.css      Debian's libjs-dygraphs, from kDygraphsDir
//   /api/runs
//   /api/runs/<id>/metrics | summary | rollouts
//   /api/runs/<id>/rollouts/<iteration>
//   /api/runs/<id>/rollouts/<iteration>/episodes/<index>
// Ids, iterations and indices are decimal numbers matched by the routes, and
// files are served only from a fixed list, so no request names a path
// (`/../../etc/passwd` and its encodings get 404). Errors answer
// {"error": "..."} with 400/404/500; a handler never lets an exception out.
//
// Thread-safety: the server answers requests on its own threads; start and
// stop from one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace agentrl::dashboard {

inline constexpr const char* kDygraphsDir = "/usr/share/javascript/dygraphs";

class Server {
 public:
  // Binds host:port (port 0 = any free port) and starts serving. Throws
  // agentrl::IoError when the address cannot be bound.
  Server(const std::vector<std::string>& run_dirs, const std::string& host, int port,
         std::string dygraphs_dir = kDygraphsDir);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  void stop();

  struct Impl;  // opaque (server.cpp); public so that its route helpers can name it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentrl::dashboard
