#include "agentrl/core/logging.h"

#include <memory>
#include <mutex>
#include <vector>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "agentrl/core/error.h"

namespace agentrl {
namespace {

struct LoggerState {
  std::mutex mu;
  std::shared_ptr<spdlog::logger> current;
  // Replaced loggers stay alive: callers may hold log() references.
  std::vector<std::shared_ptr<spdlog::logger>> retired;
};

LoggerState& state() {
  static LoggerState s;
  return s;
}

std::shared_ptr<spdlog::logger> make_logger(const LogOptions& o) {
  std::vector<spdlog::sink_ptr> sinks;
  if (o.console) sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  if (!o.file.empty()) {
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(o.file, /*truncate=*/false));
    } catch (const spdlog::spdlog_ex& e) {
      throw IoError("cannot open log file '" + o.file + "': " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>("agentrl", sinks.begin(), sinks.end());
  logger->set_pattern(log_pattern(o.rank, o.world_size));
  logger->set_level(parse_log_level(o.level));
  // Info and above reach the file at once: `tail -f log.txt` follows a run and
  // a crash loses no warning (info lines come a few per second at most;
  // debug and trace stay buffered).
  logger->flush_on(spdlog::level::info);
  return logger;
}

// Also reachable as spdlog::get("agentrl") and through spdlog::info(...).
void publish(const std::shared_ptr<spdlog::logger>& logger) {
  spdlog::drop("agentrl");
  spdlog::register_logger(logger);
  spdlog::set_default_logger(logger);
}

}  // namespace

std::string log_pattern(int rank, int world_size) {
  std::string p = "[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] ";
  if (world_size > 1) p += "[rank " + std::to_string(rank) + "] ";
  return p + "%v";
}

spdlog::level::level_enum parse_log_level(const std::string& name) {
  static const std::pair<const char*, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},      {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"warning", spdlog::level::warn},     {"error", spdlog::level::err},
      {"critical", spdlog::level::critical}, {"off", spdlog::level::off}};
  for (const auto& [n, l] : kLevels)
    if (name == n) return l;
  throw ConfigError("unknown log level '" + name + "', expected one of: trace, debug, info, warn, error, critical, off");
}

void init_logging(const LogOptions& options) {
  auto logger = make_logger(options);
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.current) {
    s.current->flush();
    s.retired.push_back(s.current);
  }
  s.current = std::move(logger);
  publish(s.current);
}

spdlog::logger& log() {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.current) {
    s.current = make_logger(LogOptions{});
    publish(s.current);
  }
  return *s.current;
}

}  // namespace agentrl
