// The dashboard's HTTP routes (see server.h).
#include "server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/jsonl.h"
#include "assets.h"
#include "run_reader.h"

namespace agentrl::dashboard {
using json = nlohmann::json;

struct Server::Impl {
  httplib::Server http;
  std::vector<std::unique_ptr<RunReader>> runs;
  std::string dygraphs_dir;
  std::thread thread;
  int port = -1;
};

namespace {

void send_json(httplib::Response& res, const json& j, int status = 200) {
  res.status = status;
  // Run data is arbitrary text (a token piece may be part of a UTF-8
  // character): invalid bytes become U+FFFD instead of failing the request.
  res.set_content(json_text(j), "application/json");
  res.set_header("Cache-Control", "no-store");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, {{"error", message}}, status);
}

int64_t number(const httplib::Request& req, size_t i) { return std::stoll(req.matches[i].str()); }

// Runs `body` for the run named by the first route group, mapping errors to
// HTTP answers: no exception leaves a handler.
template <class Body>
void with_run(Server::Impl& s, const httplib::Request& req, httplib::Response& res, Body body) {
  try {
    const int64_t id = number(req, 1);
    if (id < 0 || id >= static_cast<int64_t>(s.runs.size()))
      return send_error(res, 404, "no run " + std::to_string(id) + " (this dashboard serves " +
                                      std::to_string(s.runs.size()) + ")");
    send_json(res, body(*s.runs[static_cast<size_t>(id)]));
  } catch (const NotFound& e) {
    send_error(res, 404, e.what());
  } catch (const std::out_of_range&) {
    send_error(res, 400, "number out of range in " + req.path);
  } catch (const std::exception& e) {
    send_error(res, 500, e.what());
  }
}

void add_page_routes(Server::Impl& s) {
  for (size_t i = 0; i < kEmbeddedFileCount; ++i) {
    const EmbeddedFile f = kEmbeddedFiles[i];
    const std::string path = std::string(f.name) == "index.html" ? "/" : "/" + std::string(f.name);
    s.http.Get(path, [f](const httplib::Request&, httplib::Response& res) {
      res.set_content(reinterpret_cast<const char*>(f.data), f.size, f.mime);
    });
  }
  for (const char* name : {"dygraph.min.js", "dygraph.min.css"}) {
    const std::string file = s.dygraphs_dir + "/" + name;
    const std::string mime = std::string(name).find(".js") != std::string::npos ? "text/javascript" : "text/css";
    s.http.Get(std::string("/lib/") + name, [file, mime](const httplib::Request&, httplib::Response& res) {
      try {
        res.set_content(read_file(file), mime);
      } catch (const std::exception&) {
        res.status = 404;
        res.set_content("charts need Debian's libjs-dygraphs (" + file + " is missing)", "text/plain");
      }
    });
  }
}

void add_api_routes(Server::Impl& s) {
  s.http.Get("/api/runs", [&s](const httplib::Request&, httplib::Response& res) {
    json runs = json::array();
    for (const auto& r : s.runs) runs.push_back(r->info());
    send_json(res, {{"runs", runs}});
  });
  s.http.Get(R"(/api/runs/(\d+)/metrics)", [&s](const httplib::Request& req, httplib::Response& res) {
    with_run(s, req, res, [](const RunReader& r) { return r.metrics(); });
  });
  s.http.Get(R"(/api/runs/(\d+)/summary)", [&s](const httplib::Request& req, httplib::Response& res) {
    with_run(s, req, res, [](const RunReader& r) { return r.summary(); });
  });
  s.http.Get(R"(/api/runs/(\d+)/rollouts)", [&s](const httplib::Request& req, httplib::Response& res) {
    with_run(s, req, res, [](const RunReader& r) { return r.rollouts(); });
  });
  s.http.Get(R"(/api/runs/(\d+)/rollouts/(\d+))", [&s](const httplib::Request& req, httplib::Response& res) {
    with_run(s, req, res, [&](const RunReader& r) { return r.iteration(number(req, 2)); });
  });
  s.http.Get(R"(/api/runs/(\d+)/rollouts/(\d+)/episodes/(\d+))",
             [&s](const httplib::Request& req, httplib::Response& res) {
               with_run(s, req, res, [&](const RunReader& r) { return r.episode(number(req, 2), number(req, 3)); });
             });
}

}  // namespace

Server::Server(const std::vector<std::string>& run_dirs, const std::string& host, int port, std::string dygraphs_dir)
    : impl_(std::make_unique<Impl>()) {
  impl_->dygraphs_dir = std::move(dygraphs_dir);
  for (size_t i = 0; i < run_dirs.size(); ++i)
    impl_->runs.push_back(std::make_unique<RunReader>(static_cast<int>(i), run_dirs[i]));
  add_page_routes(*impl_);
  add_api_routes(*impl_);
  // Anything else (including paths with "..") is not a route: 404.
  impl_->http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    // httplib calls this for every status >= 400: keep a handler's own answer.
    if (res.body.empty()) send_error(res, res.status, "no such page: " + req.path);
  });
  auto& http = impl_->http;
  impl_->port = port == 0 ? http.bind_to_any_port(host.c_str()) : (http.bind_to_port(host.c_str(), port) ? port : -1);
  if (impl_->port <= 0) throw IoError("dashboard: cannot bind " + host + ":" + std::to_string(port) + " (port in use?)");
  impl_->thread = std::thread([this] { impl_->http.listen_after_bind(); });
  for (int i = 0; i < 500 && !http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

Server::~Server() {
  stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int Server::port() const { return impl_->port; }
void Server::stop() { impl_->http.stop(); }

}  // namespace agentrl::dashboard
