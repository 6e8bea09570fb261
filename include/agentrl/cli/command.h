// Subcommand registry of the `agentrl` binary.
//
// Each src/cli/cmd_*.cpp file registers the subcommands it owns from a static
// initialiser; main() builds the CLI11 app from all registrations, in order.
// Command callbacks report failures by throwing agentrl::Error (the exit code
// comes from the error type: 2 usage/config, 1 runtime).
//
// Several files may add children to one group (e.g. `env play` and `env
// demos`): use group() to find-or-create the parent.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace agentrl::cli {

using CommandSetup = std::function<void(CLI::App& root)>;

struct CommandRegistrar {
  // Lower `order` registers earlier (controls --help listing order).
  CommandRegistrar(int order, CommandSetup setup);
};

// Finds the subcommand `name` of `parent`, creating it with `description`
// (and requiring one of its own subcommands) if it does not exist yet.
CLI::App* group(CLI::App& parent, const std::string& name, const std::string& description);

// Blocks until SIGINT or SIGTERM arrives (the serving commands' main loop);
// installs the handlers itself.
void wait_for_termination_signal();

}  // namespace agentrl::cli
