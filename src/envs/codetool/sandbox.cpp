#include "agentrl/envs/codetool/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <vector>

#include "agentrl/core/error.h"
#include "agentrl/core/rng.h"
#include "agentrl/core/strings.h"

namespace agentrl::envs::codetool {
namespace {

using Clock = std::chrono::steady_clock;

// The interpreter-side half of the protocol described in sandbox.h. argv[1]
// is the work directory, argv[2] the per-stream output cap. The protocol
// socket is moved off fd 0/3 so that input() or stray writes by user code
// cannot corrupt it; between cells fd 1/2 point at /dev/null.
const char* kDriver = R"PY(
import io, os, signal, sys, traceback
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
_W = sys.argv[1]
_CAP = int(sys.argv[2])
_S = os.dup(0)
_N = os.open("/dev/null", os.O_RDWR)
os.dup2(_N, 0)
os.close(3)
def final_answer(x):
    print("\\boxed{%s}" % (x,))
_G = {"__name__": "__main__", "__builtins__": __builtins__, "final_answer": final_answer}
def _recv(n):
    b = bytearray()
    while len(b) < n:
        c = os.read(_S, n - len(b))
        if not c:
            raise EOFError
        b += c
    return bytes(b)
def _line():
    b = bytearray()
    while not b.endswith(b"\n"):
        c = os.read(_S, 1)
        if not c or len(b) > 64:
            raise EOFError
        b += c
    return bytes(b)
def _send(b):
    while b:
        b = b[os.write(_S, b):]
def _grab(p):
    try:
        with open(p, "rb") as f:
            d = f.read(_CAP + 1)
    except OSError:
        return b"", False
    return d[:_CAP], len(d) > _CAP
os.dup2(_N, 1)
os.dup2(_N, 2)
_send(b"READY\n")
while True:
    try:
        _code = _recv(int(_line().split()[1])).decode("utf-8", "replace")
    except (EOFError, ValueError, IndexError):
        break
    _po = os.path.join(_W, ".cell_out")
    _pe = os.path.join(_W, ".cell_err")
    for _p, _fd in ((_po, 1), (_pe, 2)):
        _f = os.open(_p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(_f, _fd)
        os.close(_f)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace")
    _ok = 1
    try:
        exec(compile(_code, "<code>", "exec"), _G)
    except SystemExit:
        pass
    except BaseException:
        _ok = 0
        try:
            traceback.print_exc()
        except BaseException:
            pass
    for _s in (sys.stdout, sys.stderr):
        try:
            _s.flush()
        except BaseException:
            pass
    os.dup2(_N, 1)
    os.dup2(_N, 2)
    _o, _t1 = _grab(_po)
    _e, _t2 = _grab(_pe)
    _send(b"DONE %d %d %d %d\n" % (_ok, len(_o), len(_e), int(_t1 or _t2)) + _o + _e)
)PY";

// What the forked child does before exec; prepared in the parent because
// only async-signal-safe calls are allowed between fork and exec in a
// multi-threaded process.
struct SpawnPlan {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;
  bool drop_uid = false;
  uid_t uid = 65534;
  bool limit_nproc = false;
  const SandboxConfig* limits = nullptr;
};

struct Child {
  pid_t pid = -1;
  int channel = -1;  // socketpair end: requests out, replies in
  int diag = -1;     // child's stdout/stderr before the driver redirects them
};

void set_limit(int resource, rlim_t value) {
  struct rlimit rl {value, value};
  setrlimit(resource, &rl);
}

// Forks and execs `plan`. The child gets: fd 0 and fd 3 = its end of the
// channel, fd 1/2 = the diag pipe, no other descriptor (close_range), a new
// session (so kill(-pid) reaches everything it starts) and the rlimits.
Child spawn(const SpawnPlan& plan) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw IoError(std::string("codetool sandbox: socketpair failed: ") + std::strerror(errno));
  int dp[2];
  if (pipe2(dp, O_CLOEXEC) != 0) {
    close(sv[0]);
    close(sv[1]);
    throw IoError(std::string("codetool sandbox: pipe failed: ") + std::strerror(errno));
  }
  std::vector<char*> argv, envp;
  for (auto& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : plan.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const SandboxConfig& L = *plan.limits;
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {sv[0], sv[1], dp[0], dp[1]}) close(fd);
    throw IoError(std::string("codetool sandbox: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setsid();
    dup2(sv[1], 0);
    dup2(sv[1], 3);
    dup2(dp[1], 1);
    dup2(dp[1], 2);
    syscall(SYS_close_range, 4U, ~0U, 0U);
    signal(SIGPIPE, SIG_DFL);
    set_limit(RLIMIT_AS, static_cast<rlim_t>(L.memory_mb) << 20);
    set_limit(RLIMIT_CPU, static_cast<rlim_t>(L.cpu_seconds));
    set_limit(RLIMIT_FSIZE, static_cast<rlim_t>(L.max_file_mb) << 20);
    set_limit(RLIMIT_NOFILE, static_cast<rlim_t>(L.max_open_files));
    set_limit(RLIMIT_CORE, 0);
    if (plan.limit_nproc) set_limit(RLIMIT_NPROC, static_cast<rlim_t>(L.max_processes));
    if (plan.drop_uid) {
      // Raw syscalls: glibc's setuid wrappers synchronise all threads, which
      // is not safe in a child forked from a multi-threaded process.
      if (syscall(SYS_setgroups, 0, nullptr) != 0 || syscall(SYS_setresgid, plan.uid, plan.uid, plan.uid) != 0 ||
          syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0)
        _exit(126);
    }
    if (!plan.cwd.empty() && chdir(plan.cwd.c_str()) != 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(sv[1]);
  close(dp[1]);
  fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
  fcntl(dp[0], F_SETFL, fcntl(dp[0], F_GETFL) | O_NONBLOCK);
  return {pid, sv[0], dp[0]};
}

// True while a process of group `pgid` other than a zombie exists.
bool group_has_live_members(pid_t pgid) {
  std::error_code ec;
  for (auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') return true;
  }
  return false;
}

// Ends the sandbox. Graceful path first: closing the channel makes the
// driver exit, and bwrap's monitor exits with it (up to 500 ms). Then, and
// at once for hung or timed-out code, SIGKILL the whole process group:
// background processes the code left behind, and bwrap's init, whose death
// tears the pid namespace down. Members die asynchronously, so repeat until
// no live member is left (bounded; RLIMIT_NPROC caps a fork bomb's size).
void kill_and_reap(Child& c, bool graceful) {
  if (c.channel >= 0) close(c.channel);
  if (c.diag >= 0) close(c.diag);
  c.channel = c.diag = -1;
  if (c.pid <= 0) return;
  int status = 0;
  if (graceful) {
    auto until = Clock::now() + std::chrono::milliseconds(500);
    while (Clock::now() < until) {
      pid_t r = waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid || (r < 0 && errno != EINTR)) break;
      usleep(1000);
    }
  }
  // Background processes of the code (still in our process group) die now;
  // bwrap's init gets SIGKILL too, which tears down the pid namespace.
  kill(-c.pid, SIGKILL);
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  auto until = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < until && group_has_live_members(c.pid)) {
    kill(-c.pid, SIGKILL);
    usleep(2000);
  }
  c.pid = -1;
}

std::vector<std::string> base_env() {
  return {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "OPENBLAS_NUM_THREADS=1",
          "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "MPLBACKEND=Agg", "PYTHONDONTWRITEBYTECODE=1",
          "PYTHONIOENCODING=utf-8"};
}

// bwrap arguments up to (not including) the command. Only /usr is taken from
// the host; the merged-/usr symlinks (/bin -> usr/bin, ...) are recreated,
// or the directories bound read-only on hosts without merged /usr.
std::vector<std::string> bwrap_prefix(const SandboxConfig& c) {
  std::vector<std::string> a = {c.bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"};
  namespace fs = std::filesystem;
  for (const char* d : {"bin", "sbin", "lib", "lib32", "lib64"}) {
    std::error_code ec;
    fs::path p = fs::path("/") / d;
    if (fs::is_symlink(p, ec)) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(p, ec).string(), p.string()});
    } else if (fs::is_directory(p, ec)) {
      a.insert(a.end(), {"--ro-bind", p.string(), p.string()});
    }
  }
  // Debian resolves libblas/liblapack (numpy) through /etc/alternatives
  // symlinks; that directory holds only symlinks, and the loader cache is
  // public, so both are safe to show.
  a.insert(a.end(), {"--ro-bind-try", "/etc/alternatives", "/etc/alternatives", "--ro-bind-try",
                     "/etc/ld.so.cache", "/etc/ld.so.cache"});
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--size", std::to_string(c.tmpfs_mb << 20), "--tmpfs",
                     "/tmp", "--chdir", "/tmp", "--remount-ro", "/"});
  return a;
}

SpawnPlan make_plan(const SandboxConfig& c, std::vector<std::string> argv) {
  SpawnPlan plan;
  plan.argv = std::move(argv);
  plan.env = base_env();
  plan.limits = &c;
  if (geteuid() == 0) {
    // A uid of its own per sandbox (drawn from a range; no passwd entry is
    // needed): RLIMIT_NPROC counts per uid, so one sandbox's fork bomb cannot
    // use up the process budget of the others, in this process or another.
    static std::atomic<uint64_t> counter{0};
    uint64_t slot = mix_seed(static_cast<uint64_t>(getpid()), counter++) % static_cast<uint64_t>(c.sandbox_uid_count);
    plan.drop_uid = true;
    plan.uid = static_cast<uid_t>(static_cast<uint64_t>(c.sandbox_uid) + slot);
    plan.limit_nproc = true;
  }
  return plan;
}

void drain(int fd, std::string& into, size_t cap) {
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    if (into.size() < cap) into.append(buf, std::min<size_t>(static_cast<size_t>(n), cap - into.size()));
  }
}

// Reads from `c.channel` until `want` returns true or the deadline passes /
// the peer closes. Returns false on timeout (timed_out set) or EOF.
template <class Want>
bool read_until(Child& c, std::string& buf, std::string& diag, Clock::time_point deadline, bool& timed_out,
                Want want) {
  timed_out = false;
  while (!want(buf)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      return false;
    }
    struct pollfd fds[2] = {{c.channel, POLLIN, 0}, {c.diag, POLLIN, 0}};
    int r = poll(fds, c.diag >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno != EINTR) return false;
    if (c.diag >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
      size_t before = diag.size();
      drain(c.diag, diag, 4096);
      if ((fds[1].revents & POLLHUP) && diag.size() == before) {
        close(c.diag);
        c.diag = -1;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char tmp[65536];
      ssize_t n = read(c.channel, tmp, sizeof tmp);
      if (n == 0) return false;
      if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
      if (n > 0) buf.append(tmp, static_cast<size_t>(n));
    }
  }
  return true;
}

bool write_all(int fd, const std::string& data, Clock::time_point deadline) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    struct pollfd p {fd, POLLOUT, 0};
    poll(&p, 1, static_cast<int>(left));
  }
  return true;
}

using strings::trim;

}  // namespace

std::string ExecResult::error_line() const {
  if (timed_out) return "TimeoutError: execution timed out";
  size_t end = stderr_text.size();
  while (end > 0) {
    size_t start = stderr_text.rfind('\n', end - 1);
    start = (start == std::string::npos) ? 0 : start + 1;
    std::string line = trim(stderr_text.substr(start, end - start));
    if (!line.empty()) return line;
    if (start == 0) break;
    end = start - 1;
  }
  if (crashed) return "RuntimeError: the interpreter was killed (resource limit or exit)";
  return "";
}

SandboxSupport probe_sandbox(const SandboxConfig& config) {
  static std::mutex mu;
  static std::map<std::string, SandboxSupport> cache;
  std::string key = config.bwrap + "\n" + config.python;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  SandboxSupport s;
  if (access(config.bwrap.c_str(), X_OK) != 0) {
    s.reason = "bubblewrap not found at '" + config.bwrap + "' (install the Debian package bubblewrap)";
  } else {
    auto argv = bwrap_prefix(config);
    argv.insert(argv.end(), {config.python, "-c", "pass"});
    SandboxConfig c = config;
    c.memory_mb = std::max<int64_t>(c.memory_mb, 512);
    SpawnPlan plan = make_plan(c, argv);
    Child child = spawn(plan);
    std::string out, diag;
    bool timed_out = false;
    read_until(child, out, diag, Clock::now() + std::chrono::seconds(20), timed_out, [](const std::string&) {
      return false;
    });
    // Collect the exit status and whatever bwrap printed.
    if (child.diag >= 0) drain(child.diag, diag, 4096);
    int status = 0;
    if (timed_out) kill(-child.pid, SIGKILL);
    waitpid(child.pid, &status, 0);
    child.pid = -1;
    kill_and_reap(child, /*graceful=*/false);
    s.available = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!s.available)
      s.reason = timed_out ? "bubblewrap did not finish within 20 s" : ("bubblewrap failed: " + trim(diag));
  }
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = s;
  return s;
}

struct PythonSession::Impl {
  SandboxConfig config;
  Child child;
  bool sandboxed = true;
  std::string host_workdir;  // rlimit-only mode
  std::string diag;

  ~Impl() {
    kill_and_reap(child, /*graceful=*/true);
    if (!host_workdir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(host_workdir, ec);
    }
  }
};

PythonSession::PythonSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PythonSession::~PythonSession() = default;

std::unique_ptr<PythonSession> PythonSession::start(const SandboxConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  SandboxSupport support = probe_sandbox(config);
  std::string cap = std::to_string(config.max_output_bytes);
  SpawnPlan plan;
  if (support.available) {
    auto argv = bwrap_prefix(config);
    argv.insert(argv.end(), {config.python, "-I", "-c", kDriver, "/tmp", cap});
    plan = make_plan(impl->config, argv);
  } else if (config.allow_unsandboxed) {
    spdlog::warn("codetool sandbox: bubblewrap unavailable ({}); running python with rlimits only (UNSAFE: "
                 "the code can read and write the host file system and use the network)",
                 support.reason);
    char tmpl[] = "/tmp/agentrl-unsandboxed-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw IoError(std::string("codetool sandbox: mkdtemp failed: ") + std::strerror(errno));
    impl->host_workdir = tmpl;
    impl->sandboxed = false;
    plan = make_plan(impl->config, {config.python, "-I", "-c", kDriver, impl->host_workdir, cap});
    plan.drop_uid = false;  // the temp dir belongs to us
    plan.limit_nproc = false;
    plan.cwd = impl->host_workdir;
  } else {
    throw ConfigError("codetool sandbox: bubblewrap cannot run a sandbox here (" + support.reason +
                      "); fix that, or set codetool.sandbox.allow_unsandboxed: true to run code with rlimits "
                      "only (unsafe)");
  }
  plan.limits = &impl->config;
  impl->child = spawn(plan);
  std::string buf;
  bool timed_out = false;
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(config.start_timeout_s * 1000));
  bool ready = read_until(impl->child, buf, impl->diag, deadline, timed_out,
                          [](const std::string& b) { return b.find('\n') != std::string::npos; });
  if (!ready || buf != "READY\n") {
    std::string why = timed_out ? "did not start within " + std::to_string(config.start_timeout_s) + " s"
                                : "exited during start-up: " + trim(impl->diag);
    throw IoError("codetool sandbox: python interpreter '" + config.python + "' " + why);
  }
  return std::unique_ptr<PythonSession>(new PythonSession(std::move(impl)));
}

bool PythonSession::alive() const { return impl_->child.pid > 0; }
bool PythonSession::sandboxed() const { return impl_->sandboxed; }

ExecResult PythonSession::execute(const std::string& code, double timeout_s) {
  ExecResult r;
  if (!impl_->sandboxed)
    spdlog::warn("codetool sandbox: executing code WITHOUT a sandbox (sandbox.allow_unsandboxed: true)");
  if (!alive()) {
    r.crashed = true;
    r.stderr_text = "RuntimeError: the interpreter is not running";
    return r;
  }
  if (timeout_s <= 0) timeout_s = impl_->config.run_timeout_s;
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  Child& c = impl_->child;
  std::string reply;
  bool timed_out = false;
  bool sent = write_all(c.channel, "RUN " + std::to_string(code.size()) + "\n" + code, deadline);
  size_t body = 0, n_out = 0, n_err = 0;
  int ok = 0, trunc = 0;
  auto complete = [&](const std::string& b) {
    size_t nl = b.find('\n');
    if (nl == std::string::npos) return false;
    if (body == 0) {
      if (std::sscanf(b.c_str(), "DONE %d %zu %zu %d", &ok, &n_out, &n_err, &trunc) != 4) return true;
      body = nl + 1;
    }
    return b.size() >= body + n_out + n_err;
  };
  bool got = sent && read_until(c, reply, impl_->diag, deadline, timed_out, complete);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (got && body > 0 && reply.size() >= body + n_out + n_err) {
    r.ok = ok != 0;
    r.output_limit = trunc != 0;
    r.stdout_text = reply.substr(body, n_out);
    r.stderr_text = reply.substr(body + n_out, n_err);
    return r;
  }
  // Timeout, death or garbage: the interpreter cannot be trusted any more.
  kill_and_reap(c, /*graceful=*/false);
  r.timed_out = timed_out;
  r.crashed = !timed_out;
  if (!timed_out) r.stderr_text = "RuntimeError: the interpreter was killed (resource limit or exit)";
  return r;
}

ExecResult run_python_once(const SandboxConfig& config, const std::string& code, double timeout_s) {
  auto session = PythonSession::start(config);
  return session->execute(code, timeout_s);
}

}  // namespace agentrl::envs::codetool
