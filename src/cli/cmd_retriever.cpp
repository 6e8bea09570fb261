// `agentrl retriever serve --index DIR --port P [--host 127.0.0.1]`: serves a
// local BM25 index over Search-R1's retrieval API (envs/deepsearch/retriever.h)
// until SIGINT/SIGTERM.
#include <iostream>

#include "agentrl/cli/command.h"
#include "agentrl/envs/deepsearch/retriever.h"

namespace agentrl::cli {
namespace {

CommandRegistrar reg(61, [](CLI::App& root) {
  CLI::App* retriever = group(root, "retriever", "Retrieval server for the Deep Search env");
  auto* serve = retriever->add_subcommand(
      "serve", "Serve a BM25 index over Search-R1's API (POST /retrieve {\"queries\", \"topk\", \"return_scores\"})");
  struct Opts {
    std::string index, host = "127.0.0.1";
    int port = 8000;
    double k1 = 0.9, b = 0.4;
  };
  auto o = std::make_shared<Opts>();
  serve->add_option("--index", o->index, "index directory (agentrl index build)")->required();
  serve->add_option("--port", o->port, "TCP port (0 = any free port)")->check(CLI::Range(0, 65535));
  serve->add_option("--host", o->host, "loopback address to bind (127.0.0.1, localhost, ::1)");
  serve->add_option("--k1", o->k1, "BM25 k1");
  serve->add_option("--b", o->b, "BM25 b");
  serve->callback([o] {
    auto local = std::make_shared<envs::deepsearch::LocalRetriever>(o->index, o->k1, o->b);
    envs::deepsearch::RetrievalServer server(local, o->host, o->port);
    std::cout << "serving " << local->size() << " passages from " << o->index << " on http://" << o->host << ":"
              << server.port() << " (POST /retrieve, /access); Ctrl-C stops" << std::endl;
    wait_for_termination_signal();
    server.stop();
    std::cout << "stopped after " << server.requests_served() << " requests" << std::endl;
  });
});

}  // namespace
}  // namespace agentrl::cli
