// A progress bar for long phases (rollout collection, evaluation, dataset
// loading).
//
// On a terminal it redraws one line in place:
//   rollout [########------------] 412/1000  41%  12.3/s  ETA 00:47  tokens/s 1830
// Elsewhere (log files, CI) it prints a plain line at most every
// `interval_s` seconds, plus one when done reaches total, so logs stay short.
//
// Thread-safety: update() and finish() may be called from any thread; output
// lines never interleave.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>

namespace agentrl {

struct ProgressOptions {
  std::FILE* out = stderr;
  double interval_s = 10.0;   // plain mode: minimum seconds between lines
  int tty = -1;               // -1: detect with isatty(out); 0/1 force
  int width = 20;             // bar width in characters (TTY mode)
  std::function<double()> clock;  // seconds; default steady_clock (tests inject one)
};

class ProgressBar {
 public:
  ProgressBar(int64_t total, std::string label, ProgressOptions options = {});
  ~ProgressBar();  // finishes the TTY line
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Reports `done` of total items; `extra` is appended (e.g. "tokens/s 1830").
  void update(int64_t done, const std::string& extra = "");
  // Prints the final state (if not printed yet) and ends the TTY line.
  void finish(const std::string& extra = "");

  // The text of one status line (no "\r"), for the current state.
  std::string status_line(int64_t done, double elapsed_s, const std::string& extra) const;

 private:
  void emit(int64_t done, const std::string& extra, bool final_line);

  std::mutex mu_;
  int64_t total_;
  std::string label_;
  ProgressOptions opt_;
  bool tty_;
  double start_;
  double last_print_ = -1e300;
  int64_t last_done_ = -1;     // last reported
  int64_t printed_done_ = -1;  // last printed
  std::string last_extra_;
  bool finished_ = false;
};

// "01:02:03" or "02:03" for a duration in seconds; "--:--" if unknown.
std::string format_duration(double seconds);

}  // namespace agentrl
