// `agentrl dashboard RUN_DIR [RUN_DIR…] [--port P] [--host H]`: serves the
// local web page of one or more runs (cli/dashboard/server.h) until
// SIGINT/SIGTERM. Read-only: it never writes into a run directory.
#include <iostream>

#include "agentrl/cli/command.h"
#include "dashboard/server.h"

namespace agentrl::cli {
namespace {

CommandRegistrar reg(75, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("dashboard", "Local web page of runs: curves, evaluations, trajectories");
  struct Opts {
    std::vector<std::string> runs;
    std::string host = "127.0.0.1";
    int port = 8080;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("runs", o->runs, "run directories (runs/NAME); several are overlaid")->required();
  cmd->add_option("--port", o->port, "TCP port (0 = any free port)")->check(CLI::Range(0, 65535));
  cmd->add_option("--host", o->host,
                  "address to bind (default loopback only; on a remote machine use ssh -L instead of 0.0.0.0)");
  cmd->callback([o] {
    dashboard::Server server(o->runs, o->host, o->port);
    // The URL line is what scripts (and the tests) wait for.
    std::cout << "dashboard of " << o->runs.size() << (o->runs.size() == 1 ? " run" : " runs") << " at http://"
              << o->host << ":" << server.port() << "/ ; Ctrl-C stops" << std::endl;
    wait_for_termination_signal();
    server.stop();
  });
});

}  // namespace
}  // namespace agentrl::cli
