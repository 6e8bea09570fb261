#include "agentrl/core/tensorboard_reader.h"

#include <algorithm>
#include <filesystem>

#include "agentrl/core/crc32c.h"
#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/proto/tensorboard.pb.h"

namespace agentrl {
namespace {
uint64_t le(const std::string& s, size_t off, int n) {
  uint64_t x = 0;
  for (int i = n - 1; i >= 0; --i) x = (x << 8) | static_cast<unsigned char>(s[off + i]);
  return x;
}
}  // namespace

TensorBoardEvents read_tensorboard_events(const std::string& path) {
  const std::string bytes = read_file(path);
  TensorBoardEvents out;
  size_t off = 0;
  for (int64_t record = 0; off < bytes.size(); ++record) {
    auto fail = [&](const std::string& what) {
      throw FormatError(path + ": record " + std::to_string(record) + " at byte " + std::to_string(off) + ": " + what);
    };
    if (bytes.size() - off < 12) fail("truncated record header");
    const uint64_t len = le(bytes, off, 8);
    if (static_cast<uint32_t>(le(bytes, off + 8, 4)) != masked_crc32c(bytes.data() + off, 8)) fail("length CRC mismatch");
    const uint64_t remaining = bytes.size() - off - 12;
    if (remaining < 4 || len > remaining - 4) fail("truncated record (length " + std::to_string(len) + ")");
    const char* data = bytes.data() + off + 12;
    if (static_cast<uint32_t>(le(bytes, off + 12 + len, 4)) != masked_crc32c(data, len)) fail("data CRC mismatch");
    tensorboard::Event e;
    if (!e.ParseFromArray(data, static_cast<int>(len))) fail("not an Event protobuf");
    ++out.num_events;
    if (e.what_case() == tensorboard::Event::kFileVersion && out.file_version.empty()) out.file_version = e.file_version();
    if (e.what_case() == tensorboard::Event::kSummary) {
      for (const auto& v : e.summary().value()) {
        if (v.value_case() != tensorboard::SummaryValue::kSimpleValue) continue;
        out.scalars.push_back({e.step(), e.wall_time(), v.tag(), v.simple_value()});
      }
    }
    off += 12 + len + 4;
  }
  return out;
}

std::vector<std::string> find_tensorboard_event_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
      files.push_back(e.path().string());
  }
  if (ec) throw IoError("cannot list '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace agentrl
