// Entry point of the agentrl binary: builds the CLI from the registered
// subcommands and maps errors to exit codes (0 ok, 2 usage/config, 1 runtime).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>
#include <utility>
#include <vector>

#include "agentrl/cli/command.h"
#include "agentrl/core/error.h"
#include "agentrl/core/malloc_tuning.h"

namespace agentrl::cli {
namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

std::vector<std::pair<int, CommandSetup>>& registrations() {
  static std::vector<std::pair<int, CommandSetup>> r;
  return r;
}
}  // namespace

CommandRegistrar::CommandRegistrar(int order, CommandSetup setup) {
  registrations().emplace_back(order, std::move(setup));
}

CLI::App* group(CLI::App& parent, const std::string& name, const std::string& description) {
  for (CLI::App* sub : parent.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  CLI::App* sub = parent.add_subcommand(name, description);
  sub->require_subcommand(1);
  return sub;
}

void wait_for_termination_signal() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(200));
}

}  // namespace agentrl::cli

int main(int argc, char** argv) {
  // Before anything allocates: CPU tensors' memory is reused, not re-faulted.
  agentrl::tune_malloc_for_tensor_reuse();
  CLI::App app{"agentrl: reinforcement learning for LLM agents (native C++ / LibTorch)", "agentrl"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  auto regs = agentrl::cli::registrations();
  std::stable_sort(regs.begin(), regs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, setup] : regs) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const agentrl::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
