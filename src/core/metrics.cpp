#include "agentrl/core/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agentrl/core/crc32c.h"
#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/jsonl.h"
#include "agentrl/core/logging.h"
#include "agentrl/proto/tensorboard.pb.h"

namespace agentrl {

double wall_time_now() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

// ---- MetricsLogger ------------------------------------------------------------

void MetricsLogger::add_sink(std::unique_ptr<MetricsSink> sink) {
  std::lock_guard<std::mutex> lock(mu_);
  sinks_.push_back(std::move(sink));
}

void MetricsLogger::log(int64_t step, const Scalars& scalars) {
  const double t = wall_time_now();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : sinks_) s->write(step, t, scalars);
}

void MetricsLogger::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& s : sinks_) s->flush();
}

// ---- ConsoleSink ----------------------------------------------------------------

std::string format_metrics_line(int64_t step, const Scalars& scalars, const std::vector<std::string>& keys) {
  std::string line = "step " + std::to_string(step);
  auto add = [&](const std::string& k, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    line += " | " + k + " " + buf;
  };
  if (keys.empty()) {
    for (const auto& [k, v] : scalars) add(k, v);
  } else {
    for (const auto& k : keys) {
      auto it = scalars.find(k);
      if (it != scalars.end()) add(k, it->second);
    }
  }
  return line;
}

ConsoleSink::ConsoleSink(std::vector<std::string> keys, std::FILE* out) : keys_(std::move(keys)), out_(out) {}

void ConsoleSink::write(int64_t step, double, const Scalars& scalars) {
  const std::string line = format_metrics_line(step, scalars, keys_);
  if (out_ == nullptr) {
    log().info("{}", line);
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
  }
}

// ---- JsonlSink ----------------------------------------------------------------

namespace {
// Keeps the lines of an existing metrics file whose step is <= last_step.
std::string kept_lines(const std::string& text, int64_t last_step) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("step") || !j["step"].is_number_integer()) continue;
    if (j["step"].get<int64_t>() > last_step) continue;
    out += line + "\n";
  }
  return out;
}
}  // namespace

JsonlSink::JsonlSink(const std::string& path, int64_t truncate_after_step) : path_(path) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (exists && truncate_after_step >= 0) write_file_atomic(path, kept_lines(read_file(path), truncate_after_step));
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot open metrics file '" + path + "': " + ::strerror(errno));
  // A torn last line (crash mid-write) must not swallow the next record.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size > 0) {
    const int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char last = '\n';
    if (rfd >= 0) {
      if (::pread(rfd, &last, 1, st.st_size - 1) != 1) last = '\n';
      ::close(rfd);
    }
    if (last != '\n' && ::write(fd_, "\n", 1) != 1) throw IoError("cannot write metrics file '" + path + "': " + ::strerror(errno));
  }
}

JsonlSink::~JsonlSink() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlSink::write(int64_t step, double wall_time, const Scalars& scalars) {
  nlohmann::ordered_json j;
  j["step"] = step;
  j["wall_time"] = wall_time;
  for (const auto& [k, v] : scalars) {
    if (k == "step" || k == "wall_time") throw Error("metrics key '" + k + "' is reserved in metrics.jsonl");
    if (std::isfinite(v)) {
      j[k] = v;
    } else {
      j[k] = nullptr;
    }
  }
  const std::string line = json_text(j) + "\n";
  // One write(2) per line with O_APPEND: concurrent readers never see two
  // records interleaved; fsync makes the line survive a crash of the machine.
  size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + off, line.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError("cannot write metrics file '" + path_ + "': " + ::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd_) != 0 && errno != EINVAL) throw IoError("cannot fsync metrics file '" + path_ + "': " + ::strerror(errno));
}

// ---- TensorBoardSink ----------------------------------------------------------------

std::string tfrecord_frame(const std::string& data) {
  std::string out;
  const uint64_t len = data.size();
  char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<char>((len >> (8 * i)) & 0xFF);
  auto put32 = [&](uint32_t x) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((x >> (8 * i)) & 0xFF));
  };
  out.append(len_bytes, 8);
  put32(masked_crc32c(len_bytes, 8));
  out += data;
  put32(masked_crc32c(data.data(), data.size()));
  return out;
}

TensorBoardSink::TensorBoardSink(const std::string& dir) {
  ensure_dir(dir);
  char host[256] = "localhost";
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
  const std::string base = dir + "/events.out.tfevents." + std::to_string(static_cast<int64_t>(wall_time_now())) + "." + host;
  // Two sinks started in the same second get distinct files.
  for (int n = 0; file_ == nullptr; ++n) {
    path_ = n == 0 ? base : base + "." + std::to_string(n);
    file_ = std::fopen(path_.c_str(), "wbx");
    if (file_ == nullptr && errno != EEXIST) throw IoError("cannot create TensorBoard file '" + path_ + "': " + ::strerror(errno));
  }
  tensorboard::Event e;
  e.set_wall_time(wall_time_now());
  e.set_file_version("brain.Event:2");
  write_record(e.SerializeAsString());
  flush();
}

TensorBoardSink::~TensorBoardSink() {
  if (file_ != nullptr) std::fclose(file_);
}

void TensorBoardSink::write_record(const std::string& data) {
  const std::string rec = tfrecord_frame(data);
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size())
    throw IoError("cannot write TensorBoard file '" + path_ + "': " + ::strerror(errno));
}

void TensorBoardSink::write(int64_t step, double wall_time, const Scalars& scalars) {
  tensorboard::Event e;
  e.set_wall_time(wall_time);
  e.set_step(step);
  auto* summary = e.mutable_summary();
  for (const auto& [k, v] : scalars) {
    auto* value = summary->add_value();
    value->set_tag(k);
    value->set_simple_value(static_cast<float>(v));
  }
  write_record(e.SerializeAsString());
  // TensorBoard tails the file; flush so a live run shows each step.
  flush();
}

void TensorBoardSink::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0)
    throw IoError("cannot write TensorBoard file '" + path_ + "': " + ::strerror(errno));
}

}  // namespace agentrl
