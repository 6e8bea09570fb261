#include "agentrl/core/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

namespace agentrl {
namespace {
double steady_seconds() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>((s / 60) % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  }
  return buf;
}

ProgressBar::ProgressBar(int64_t total, std::string label, ProgressOptions options)
    : total_(total), label_(std::move(label)), opt_(std::move(options)) {
  if (!opt_.clock) opt_.clock = steady_seconds;
  tty_ = opt_.tty >= 0 ? opt_.tty == 1 : (opt_.out != nullptr && ::isatty(::fileno(opt_.out)) == 1);
  start_ = opt_.clock();
}

ProgressBar::~ProgressBar() {
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_ && !finished_ && printed_done_ >= 0 && opt_.out != nullptr) std::fputc('\n', opt_.out);
}

std::string ProgressBar::status_line(int64_t done, double elapsed, const std::string& extra) const {
  std::string line = label_;
  char buf[128];
  if (tty_ && total_ > 0) {
    const int filled = static_cast<int>(std::min<int64_t>(opt_.width, done * opt_.width / total_));
    line += " [" + std::string(filled, '#') + std::string(opt_.width - filled, '-') + "]";
  }
  if (total_ > 0) {
    std::snprintf(buf, sizeof buf, " %lld/%lld %3d%%", static_cast<long long>(done), static_cast<long long>(total_),
                  static_cast<int>(100 * std::min(done, total_) / total_));
  } else {
    std::snprintf(buf, sizeof buf, " %lld", static_cast<long long>(done));
  }
  line += buf;
  const double rate = elapsed > 0 ? done / elapsed : 0;
  std::snprintf(buf, sizeof buf, "  %.3g/s", rate);
  line += buf;
  if (total_ > 0) {
    const double eta = rate > 0 ? (total_ - done) / rate : NAN;
    line += "  " + std::string(done >= total_ ? "elapsed " + format_duration(elapsed) : "ETA " + format_duration(eta));
  }
  if (!extra.empty()) line += "  " + extra;
  return line;
}

void ProgressBar::emit(int64_t done, const std::string& extra, bool final_line) {
  if (opt_.out == nullptr) return;
  const double now = opt_.clock();
  const bool complete = total_ > 0 && done >= total_;
  // A terminal redraw is cheap but still throttled to 10 per second.
  const double min_gap = tty_ ? 0.1 : opt_.interval_s;
  const bool due = final_line || (complete && printed_done_ < total_) || now - last_print_ >= min_gap;
  last_done_ = done;
  last_extra_ = extra;
  if (!due) return;
  if (final_line && !tty_ && printed_done_ == done) return;  // final state already printed
  const std::string line = status_line(done, now - start_, extra);
  if (tty_) {
    // \r + erase to end of line (ECMA-48 EL, "\033[K").
    std::fprintf(opt_.out, "\r%s\033[K%s", line.c_str(), final_line ? "\n" : "");
  } else {
    std::fprintf(opt_.out, "%s\n", line.c_str());
  }
  std::fflush(opt_.out);
  last_print_ = now;
  printed_done_ = done;
}

void ProgressBar::update(int64_t done, const std::string& extra) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  emit(done, extra, false);
}

void ProgressBar::finish(const std::string& extra) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  emit(last_done_ < 0 ? 0 : last_done_, extra.empty() ? last_extra_ : extra, true);
}

}  // namespace agentrl
