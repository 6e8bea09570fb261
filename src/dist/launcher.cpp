#include "agentrl/dist/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstring>
#include <deque>
#include <iostream>

#include "agentrl/core/error.h"

namespace agentrl::dist {
namespace {

std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal.store(sig); }

struct Child {
  pid_t pid = -1;
  int rank = 0;
  int err_fd = -1;
  std::string partial;
  std::deque<std::string> tail;
  bool running = true;
  int status = 0;
};

void emit(Child& c, const std::string& line) {
  std::cerr << "[rank " << c.rank << "] " << line << "\n";
  c.tail.push_back(line);
  if (c.tail.size() > 20) c.tail.pop_front();
}

void drain(Child& c) {
  char buf[4096];
  while (true) {
    ssize_t n = ::read(c.err_fd, buf, sizeof buf);
    if (n <= 0) break;
    c.partial.append(buf, static_cast<size_t>(n));
    size_t pos;
    while ((pos = c.partial.find('\n')) != std::string::npos) {
      emit(c, c.partial.substr(0, pos));
      c.partial.erase(0, pos + 1);
    }
  }
}

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw IoError("cannot resolve /proc/self/exe");
  buf[n] = 0;
  return buf;
}

}  // namespace

LaunchResult launch(const LaunchOptions& o) {
  if (o.nproc_per_node < 1) throw UsageError("--nproc-per-node must be >= 1");
  if (o.nnodes < 1) throw UsageError("--nnodes must be >= 1");
  if (o.node_rank < 0 || o.node_rank >= o.nnodes)
    throw UsageError("--node-rank " + std::to_string(o.node_rank) + " must be in [0, " + std::to_string(o.nnodes) + ")");
  if (o.master_port < 1 || o.master_port > 65535) throw UsageError("--master-port must be a port number");
  if (o.args.empty()) throw UsageError("launch: give the command to run after --, e.g. -- train CONFIG");
  const std::string exe = o.executable.empty() ? self_exe() : o.executable;
  const int world = o.nproc_per_node * o.nnodes;

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  std::vector<Child> kids(static_cast<size_t>(o.nproc_per_node));
  const pid_t parent = ::getpid();
  for (int lr = 0; lr < o.nproc_per_node; ++lr) {
    int fds[2];
    if (::pipe(fds) != 0) throw IoError("pipe failed");
    Child& c = kids[static_cast<size_t>(lr)];
    c.rank = o.node_rank * o.nproc_per_node + lr;
    pid_t pid = ::fork();
    if (pid < 0) throw IoError("fork failed");
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      ::setpgid(0, 0);  // own process group: signals reach the rank's subprocesses too
      if (::getppid() != parent) ::_exit(1);
      ::dup2(fds[1], STDERR_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::setenv("RANK", std::to_string(c.rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(lr).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node).c_str(), 1);
      ::setenv("MASTER_ADDR", o.master_addr.c_str(), 1);
      ::setenv("MASTER_PORT", std::to_string(o.master_port).c_str(), 1);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(exe.c_str()));
      for (const auto& a : o.args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(exe.c_str(), argv.data());
      std::fprintf(stderr, "exec %s failed: %s\n", exe.c_str(), std::strerror(errno));
      ::_exit(127);
    }
    ::close(fds[1]);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    ::setpgid(pid, pid);  // also from the parent, so there is no race with the first kill
    c.pid = pid;
    c.err_fd = fds[0];
  }

  LaunchResult result;
  bool stopping = false;
  int forwarded = 0;
  auto stop_deadline = std::chrono::steady_clock::time_point::max();
  auto stop_others = [&](int sig) {
    for (auto& c : kids)
      if (c.running) ::kill(-c.pid, sig);
  };
  while (true) {
    std::vector<pollfd> pfds;
    for (auto& c : kids)
      if (c.err_fd >= 0) pfds.push_back({c.err_fd, POLLIN, 0});
    if (!pfds.empty()) ::poll(pfds.data(), pfds.size(), 100);
    else ::usleep(100000);
    for (auto& c : kids)
      if (c.err_fd >= 0) drain(c);
    if (int sig = g_signal.exchange(0); sig != 0 && forwarded < 2) {
      // Preemption: pass the signal on; ranks checkpoint and exit.
      stop_others(sig);
      ++forwarded;
    }
    bool any_running = false;
    for (auto& c : kids) {
      if (!c.running) continue;
      int st = 0;
      pid_t r = ::waitpid(c.pid, &st, WNOHANG);
      if (r == c.pid) {
        c.running = false;
        c.status = st;
        drain(c);
        if (!c.partial.empty()) emit(c, c.partial);
        ::close(c.err_fd);
        c.err_fd = -1;
        const bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        if (!ok && result.failed_rank < 0) {
          result.failed_rank = c.rank;
          result.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
          std::string why = WIFEXITED(st) ? "exited with code " + std::to_string(WEXITSTATUS(st))
                                          : std::string("was killed by signal ") + strsignal(WTERMSIG(st));
          result.failure = "rank " + std::to_string(c.rank) + " " + why;
          if (!c.tail.empty()) {
            result.failure += "; its last output:";
            for (const auto& l : c.tail) result.failure += "\n  " + l;
          }
          if (!stopping) {
            stopping = true;
            stop_others(SIGTERM);
            stop_deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(static_cast<int64_t>(o.kill_timeout_s * 1000));
          }
        }
      } else {
        any_running = true;
      }
    }
    if (!any_running) break;
    if (stopping && std::chrono::steady_clock::now() > stop_deadline) stop_others(SIGKILL);
  }
  return result;
}

}  // namespace agentrl::dist
