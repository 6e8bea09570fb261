// Process-wide logging for agentrl.
//
// One spdlog logger named "agentrl" carries every log line of the program:
// console (stderr, so stdout stays clean for command output) and, for
// training runs, the run directory's log.txt. When more than one rank runs,
// every line carries "[rank N]" so interleaved multi-process logs stay
// readable. The CLI calls init_logging once at start-up; library code just
// calls agentrl::log().info(...).
//
// Thread-safety: all sinks are the thread-safe (_mt) spdlog sinks, so log()
// may be used from any thread. init_logging may be called again (e.g. once
// the run directory is known); it replaces the logger atomically, and a
// reference obtained earlier stays valid (old loggers are kept alive).
#pragma once

#include <string>

#include <spdlog/spdlog.h>

namespace agentrl {

struct LogOptions {
  std::string level = "info";  // trace | debug | info | warn | error | critical | off
  int rank = 0;
  int world_size = 1;          // > 1 adds "[rank N]" to every line
  std::string file;            // "" = no log file; appended to otherwise
  bool console = true;         // log to stderr
};

// (Re)configures the global logger. Throws ConfigError for an unknown level
// and IoError when the log file cannot be opened.
void init_logging(const LogOptions& options);

// The global logger. Before init_logging it logs "info" and above to stderr.
spdlog::logger& log();

// Parses a level name; throws ConfigError naming the accepted names.
spdlog::level::level_enum parse_log_level(const std::string& name);

// The pattern init_logging installs (exposed for tests).
std::string log_pattern(int rank, int world_size);

}  // namespace agentrl
