// A sandboxed Python interpreter for the code-tool environment.
//
// A PythonSession is one `python3` process running a small driver script
// (embedded in sandbox.cpp) under bubblewrap: new user, pid, network, ipc,
// uts and cgroup namespaces (`--unshare-all`), the host's /usr mounted
// read-only and nothing else of the host file system, a private size-limited
// tmpfs as the work directory (/tmp), no network (only the namespace's own
// loopback), `--die-with-parent`. Before bwrap is executed the child process
// also gets rlimits (address space, CPU seconds, processes, file size, open
// files) and, when the trainer runs as root, drops to an unprivileged uid of
// its own (drawn from [sandbox_uid, sandbox_uid + sandbox_uid_count)) so that
// RLIMIT_NPROC is enforced (the kernel exempts uid 0 from it) and counted per
// sandbox.
//
// Protocol (driver <-> host, over two pipes; fd 0 requests, fd 3 replies):
//   host:   "RUN <n>\n" followed by n bytes of UTF-8 source
//   driver: "DONE <ok> <n_out> <n_err>\n" followed by stdout and stderr bytes
// The driver executes every cell in one persistent globals dict (so the
// stateful mode keeps variables across turns), with the cell's fd 1 / fd 2
// redirected to files in the tmpfs (so output of subprocesses and
// os.write(1, ...) is captured too); output beyond max_output_bytes is cut.
// `final_answer(x)` is predefined and prints \boxed{x}.
//
// Wall-clock timeout: the host waits for the reply with poll() and a
// deadline; on timeout, an output flood, or a protocol error the whole
// process group (bwrap and everything in its pid namespace) gets SIGKILL and
// the session is dead (alive() == false). SIGKILL cannot be ignored, so code
// that ignores SIGTERM is no obstacle.
//
// Weaker mode: when bwrap cannot create namespaces on a machine (containers
// without user namespaces), start() throws ConfigError unless
// `allow_unsandboxed: true`, in which case python runs with the rlimits only,
// in a fresh host temp directory, and every start logs a warning.
//
// Thread-safety: a PythonSession is used by one thread at a time; different
// sessions are independent and may run concurrently. probe_sandbox() is
// thread-safe (its result is cached per bwrap path).
//
// This layer is torch-free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "agentrl/core/config.h"

namespace agentrl::envs::codetool {

struct SandboxConfig {
  std::string bwrap = "/usr/bin/bwrap";
  std::string python = "/usr/bin/python3";
  bool allow_unsandboxed = false;
  double run_timeout_s = 3.0;     // wall clock per executed block
  double start_timeout_s = 10.0;  // wall clock for the interpreter to come up
  int64_t memory_mb = 1024;       // RLIMIT_AS
  int64_t cpu_seconds = 20;       // RLIMIT_CPU (per interpreter: per session in stateful mode)
  int64_t max_processes = 64;     // RLIMIT_NPROC (enforced when the host runs as root, see above)
  int64_t max_file_mb = 16;       // RLIMIT_FSIZE
  int64_t max_open_files = 64;    // RLIMIT_NOFILE
  int64_t tmpfs_mb = 64;          // size of the private /tmp
  int64_t max_output_bytes = 65536;  // captured per stream and cell
  int64_t sandbox_uid = 200000;       // first uid of the sandbox range (host runs as root)
  int64_t sandbox_uid_count = 10000;  // size of that range

  void visit(config::Visitor& v) {
    v.field("bwrap", bwrap, "path of the bubblewrap executable");
    v.field("python", python, "python interpreter inside the sandbox (must live under /usr)");
    v.field("allow_unsandboxed", allow_unsandboxed,
            "allow rlimit-only execution when bubblewrap cannot create namespaces (unsafe; warns every run)");
    v.field("run_timeout_s", run_timeout_s, "wall-clock limit per executed code block (s)", config::Range::positive());
    v.field("start_timeout_s", start_timeout_s, "wall-clock limit for the interpreter to start (s)",
            config::Range::positive());
    v.field("memory_mb", memory_mb, "address-space limit of the interpreter (MiB)", config::Range::closed(64, 1 << 20));
    v.field("cpu_seconds", cpu_seconds, "CPU-time limit of one interpreter (s)", config::Range::closed(1, 86400));
    v.field("max_processes", max_processes, "process limit (RLIMIT_NPROC) of the sandbox user",
            config::Range::closed(1, 1 << 20));
    v.field("max_file_mb", max_file_mb, "largest file the code may write (MiB)", config::Range::closed(1, 1 << 20));
    v.field("max_open_files", max_open_files, "open-file limit", config::Range::closed(16, 1 << 20));
    v.field("tmpfs_mb", tmpfs_mb, "size of the private /tmp work directory (MiB)", config::Range::closed(1, 1 << 20));
    v.field("max_output_bytes", max_output_bytes, "stdout/stderr bytes kept per block",
            config::Range::closed(256, 1 << 30));
    v.field("sandbox_uid", sandbox_uid,
            "first of the unprivileged uids sandboxes run as when agentrl runs as root (one drawn per sandbox)",
            config::Range::closed(1, 4294967294.0));
    v.field("sandbox_uid_count", sandbox_uid_count, "number of uids in that range",
            config::Range::closed(1, 1 << 30));
  }
};

// Outcome of one executed block.
struct ExecResult {
  std::string stdout_text;
  std::string stderr_text;
  bool ok = false;            // ran to the end without an uncaught exception
  bool timed_out = false;     // wall-clock timeout; the interpreter was killed
  bool output_limit = false;  // output exceeded max_output_bytes (kept part is truncated)
  bool crashed = false;       // the interpreter died (rlimit, os._exit, kill, ...)
  double seconds = 0.0;       // wall time of the block

  // What a model sees on failure: the last non-empty stderr line (Python's
  // "NameError: name 'x' is not defined"), or a description of the kill.
  std::string error_line() const;
};

// Whether bubblewrap can create its namespaces here.
struct SandboxSupport {
  bool available = false;
  std::string reason;  // why not (bwrap's own message), empty when available
};
SandboxSupport probe_sandbox(const SandboxConfig& config);

class PythonSession {
 public:
  // Starts an interpreter and waits until the driver is ready. Throws
  // ConfigError when no sandbox is possible and allow_unsandboxed is false,
  // IoError when the process cannot be started or does not come up in time.
  static std::unique_ptr<PythonSession> start(const SandboxConfig& config);
  ~PythonSession();  // kills the process group and reaps it
  PythonSession(const PythonSession&) = delete;
  PythonSession& operator=(const PythonSession&) = delete;

  // Runs one block; `timeout_s` <= 0 means config.run_timeout_s. Never throws
  // for anything the code does; on a dead session returns crashed = true.
  ExecResult execute(const std::string& code, double timeout_s = 0.0);
  bool alive() const;
  bool sandboxed() const;  // false in the rlimit-only mode

 private:
  struct Impl;
  explicit PythonSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Stateless execution: a fresh session for one block (SimpleTIR's mode).
ExecResult run_python_once(const SandboxConfig& config, const std::string& code, double timeout_s = 0.0);

}  // namespace agentrl::envs::codetool
