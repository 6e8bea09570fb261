// Training metrics: one MetricsLogger, several sinks.
//
// The trainer calls `metrics.log(step, {{"reward/mean", r}, ...})` once per
// iteration; each attached sink records it:
//   ConsoleSink      one compact line per step on the agentrl logger,
//   JsonlSink        metrics.jsonl, one JSON object per line
//                    {"step":N,"wall_time":T,<scalars...>}, fsynced per line,
//   TensorBoardSink  a TensorBoard event file (events.out.tfevents.*) with
//                    one scalar summary per key.
// A resumed run opens JsonlSink with truncate_after_step = the checkpoint's
// step, so lines of the crashed run past that step are dropped, not
// duplicated. Non-finite values are written as null in JSONL (JSON has no
// NaN) and as-is to TensorBoard.
//
// Thread-safety: MetricsLogger::log may be called from several threads; it
// serialises calls to the sinks. Sinks themselves are not synchronised.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace agentrl {

using Scalars = std::map<std::string, double>;

class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  // Records one step. Throws IoError when the sink cannot write.
  virtual void write(int64_t step, double wall_time, const Scalars& scalars) = 0;
  virtual void flush() {}
};

class MetricsLogger {
 public:
  MetricsLogger() = default;
  MetricsLogger(const MetricsLogger&) = delete;
  MetricsLogger& operator=(const MetricsLogger&) = delete;

  void add_sink(std::unique_ptr<MetricsSink> sink);
  // Sends the scalars to every sink with the current wall time (seconds
  // since the epoch).
  void log(int64_t step, const Scalars& scalars);
  void flush();

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<MetricsSink>> sinks_;
};

// Seconds since the epoch, as a double (TensorBoard's wall_time).
double wall_time_now();

// Compact line: "step 12 | loss 0.0312 | reward/mean 0.5". `keys` selects and
// orders the scalars (missing keys are skipped); empty = all, sorted.
std::string format_metrics_line(int64_t step, const Scalars& scalars, const std::vector<std::string>& keys = {});

class ConsoleSink final : public MetricsSink {
 public:
  // out == nullptr logs through agentrl::log(); otherwise writes to `out`.
  explicit ConsoleSink(std::vector<std::string> keys = {}, std::FILE* out = nullptr);
  void write(int64_t step, double wall_time, const Scalars& scalars) override;

 private:
  std::vector<std::string> keys_;
  std::FILE* out_;
};

class JsonlSink final : public MetricsSink {
 public:
  // Appends to `path` (created if missing). With truncate_after_step >= 0,
  // lines whose step is greater are removed first (atomically), as are
  // unparsable lines (a torn last line after a crash).
  explicit JsonlSink(const std::string& path, int64_t truncate_after_step = -1);
  ~JsonlSink() override;
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;
  void write(int64_t step, double wall_time, const Scalars& scalars) override;

 private:
  std::string path_;
  int fd_ = -1;
};

class TensorBoardSink final : public MetricsSink {
 public:
  // Creates `dir` if needed and a new file events.out.tfevents.<unix time>.<host>
  // in it, starting with the file_version event.
  explicit TensorBoardSink(const std::string& dir);
  ~TensorBoardSink() override;
  TensorBoardSink(const TensorBoardSink&) = delete;
  TensorBoardSink& operator=(const TensorBoardSink&) = delete;
  void write(int64_t step, double wall_time, const Scalars& scalars) override;
  void flush() override;
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& data);
  std::string path_;
  std::FILE* file_ = nullptr;
};

// TFRecord framing of one record: uint64 length (little endian), masked
// CRC-32C of the length, data, masked CRC-32C of the data.
std::string tfrecord_frame(const std::string& data);

}  // namespace agentrl
