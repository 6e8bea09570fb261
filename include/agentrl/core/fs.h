// Crash-safe file helpers.
//
// Everything the trainer persists (checkpoints, the resolved config, rollout
// dumps) goes through write_file_atomic: the bytes are written to a temporary
// file in the target's directory, fsynced, renamed over the target, and the
// directory is fsynced. POSIX rename(2) is atomic, so after a crash at any
// moment the target holds either its old content or the complete new content,
// never a prefix. A crash may leave a "<name>.tmp.<pid>.<n>" file behind; it
// is never read by agentrl.
//
// All failures throw agentrl::IoError naming the path and the OS error.
//
// Thread-safety: all functions are safe to call concurrently (distinct
// temporary names per process and call).
#pragma once

#include <functional>
#include <string>

namespace agentrl {

// Atomically replaces `path` with `bytes` (temp file + fsync + rename + fsync
// of the directory).
void write_file_atomic(const std::string& path, const std::string& bytes);

// Same, with a hook called after the temporary file is written and fsynced
// and before the rename; tests use it to simulate a crash at that moment.
void write_file_atomic(const std::string& path, const std::string& bytes,
                       const std::function<void(const std::string& temp_path)>& before_rename);

// fsync(2) on a directory, making a rename or create inside it durable.
void fsync_dir(const std::string& dir);

// rename(2) followed by fsync of the destination's directory.
void rename_atomic(const std::string& from, const std::string& to);

// Whole file as bytes. IoError "cannot read 'PATH': <reason>".
std::string read_file(const std::string& path);

// mkdir -p; IoError if a component exists and is not a directory.
void ensure_dir(const std::string& path);

}  // namespace agentrl
