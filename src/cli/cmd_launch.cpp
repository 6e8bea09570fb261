// `agentrl launch --nproc-per-node N [...] -- train CONFIG ...`
#include <iostream>

#include "agentrl/cli/command.h"
#include "agentrl/core/error.h"
#include "agentrl/dist/launcher.h"

namespace agentrl::cli {
namespace {

CommandRegistrar reg(50, [](CLI::App& root) {
  auto* cmd = root.add_subcommand("launch", "Run N ranks of a command on this node (data-parallel training)");
  auto o = std::make_shared<dist::LaunchOptions>();
  cmd->add_option("--nproc-per-node", o->nproc_per_node, "ranks on this node")->required();
  cmd->add_option("--nnodes", o->nnodes, "number of nodes");
  cmd->add_option("--node-rank", o->node_rank, "index of this node");
  cmd->add_option("--master-addr", o->master_addr, "address of the rank-0 node");
  cmd->add_option("--master-port", o->master_port, "TCPStore port on the rank-0 node");
  cmd->add_option("--kill-timeout", o->kill_timeout_s, "seconds to wait after SIGTERM before SIGKILL");
  cmd->add_option("args", o->args, "command after --, e.g. -- train configs/x.yaml")->required();
  cmd->callback([o] {
    auto r = dist::launch(*o);
    if (r.exit_code != 0) {
      std::cerr << "launch: " << r.failure << "\n";
      throw Error("launch failed: rank " + std::to_string(r.failed_rank) + " failed (exit code " +
                  std::to_string(r.exit_code) + ")");
    }
  });
});

}  // namespace
}  // namespace agentrl::cli
