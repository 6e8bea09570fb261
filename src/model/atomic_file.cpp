// Crash-safe file writing; see atomic_file.h.
#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"

namespace fs = std::filesystem;

namespace agentrl::model::detail {

std::string errno_text() { return std::strerror(errno); }

void FileSink::write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError("cannot write " + path_ + ": " + errno_text());
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void write_file_atomic(const std::string& path, const std::function<void(FileSink&)>& fill) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot create " + tmp + ": " + errno_text());
  try {
    FileSink sink(fd, path);
    fill(sink);
    if (::fsync(fd) != 0) throw IoError("cannot fsync " + tmp + ": " + errno_text());
    if (::close(fd) != 0) {
      fd = -1;
      throw IoError("cannot close " + tmp + ": " + errno_text());
    }
    fd = -1;
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw IoError("cannot rename " + tmp + " to " + path + ": " + errno_text());
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  agentrl::fsync_dir(parent.empty() ? "." : parent.string());
}

fs::path temp_sibling(const fs::path& dir, const char* what) {
  static std::atomic<unsigned> counter{0};
  return dir.parent_path() / ("." + dir.filename().string() + "." + what + "-" + std::to_string(::getpid()) + "-" +
                              std::to_string(counter++));
}

// Moves the finished `tmp` to `dir`, replacing an old `dir` when allowed.
void commit_dir(const fs::path& tmp, const fs::path& dir, bool overwrite) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!overwrite && !fs::is_empty(dir, ec))
      throw IoError("cannot save model to " + dir.string() + ": directory exists and is not empty (use overwrite)");
    fs::path old = temp_sibling(dir, "old");
    fs::rename(dir, old);
    try {
      fs::rename(tmp, dir);
    } catch (...) {
      fs::rename(old, dir);
      throw;
    }
    fs::remove_all(old, ec);
  } else {
    fs::rename(tmp, dir);
  }
  fsync_dir(dir.parent_path().string());
}

}  // namespace agentrl::model::detail
