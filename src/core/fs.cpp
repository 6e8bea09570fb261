#include "agentrl/core/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agentrl/core/error.h"

namespace agentrl {
namespace {

std::string os_error(int err) { return ::strerror(err); }

std::string parent_dir(const std::string& path) {
  const std::string p = std::filesystem::path(path).parent_path().string();
  return p.empty() ? "." : p;
}

void write_all(int fd, const std::string& bytes, const std::string& path) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError("cannot write '" + path + "': " + os_error(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open directory '" + dir + "': " + os_error(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems (e.g. certain FUSE mounts) refuse fsync on directories;
  // the rename itself is still atomic there, so only real I/O errors count.
  if (rc != 0 && err != EINVAL && err != ENOTSUP) throw IoError("cannot fsync directory '" + dir + "': " + os_error(err));
}

void rename_atomic(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    throw IoError("cannot rename '" + from + "' to '" + to + "': " + os_error(errno));
  fsync_dir(parent_dir(to));
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  write_file_atomic(path, bytes, nullptr);
}

void write_file_atomic(const std::string& path, const std::string& bytes,
                       const std::function<void(const std::string&)>& before_rename) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot create '" + tmp + "' (to write '" + path + "'): " + os_error(errno));
  try {
    write_all(fd, bytes, tmp);
    if (::fsync(fd) != 0) throw IoError("cannot fsync '" + tmp + "': " + os_error(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw IoError("cannot close '" + tmp + "': " + os_error(err));
  }
  if (before_rename) before_rename(tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw IoError("cannot rename '" + tmp + "' to '" + path + "': " + os_error(err));
  }
  fsync_dir(parent_dir(path));
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw IoError("cannot read '" + path + "': is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read '" + path + "': " + os_error(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw IoError("cannot read '" + path + "': read error");
  return ss.str();
}

void ensure_dir(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw IoError("cannot create directory '" + path + "': " + ec.message());
  if (!std::filesystem::is_directory(path, ec)) throw IoError("cannot create directory '" + path + "': not a directory");
}

}  // namespace agentrl
