// `agentrl launch`: spawns and supervises the ranks of one node.
//
// Each rank is this same binary re-executed with the given arguments and
// the rendezvous variables set (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT). The launcher prefixes every
// line a rank writes to stderr with "[rank N]", forwards SIGTERM/SIGINT to
// all ranks, and when one rank fails it stops the others (SIGTERM, then
// SIGKILL after kill_timeout_s) and returns non-zero with the failing rank's
// last output lines — a dead rank never leaves a silent hang. Children also
// get SIGTERM if the launcher itself dies (PR_SET_PDEATHSIG).
//
// Thread-safety: one launch per process.
#pragma once

#include <string>
#include <vector>

namespace agentrl::dist {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  double kill_timeout_s = 30.0;
  std::string executable;          // "" = this binary (/proc/self/exe)
  std::vector<std::string> args;   // arguments after `--`
};

struct LaunchResult {
  int exit_code = 0;
  int failed_rank = -1;           // global rank of the first rank that failed
  std::string failure;            // description + last stderr lines of that rank
};

// Validates options (UsageError naming the bad flag) and runs the ranks.
LaunchResult launch(const LaunchOptions& options);

}  // namespace agentrl::dist
