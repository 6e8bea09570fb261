// Specification of the code-tool sandbox: execution, state, and the security
// cases of issue 9 (each must leave this test process running and the host
// unchanged).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/envs/codetool/sandbox.h"

namespace agentrl::envs::codetool {
namespace {

namespace fs = std::filesystem;

SandboxConfig test_config() {
  SandboxConfig c;
  c.run_timeout_s = 5.0;
  return c;
}

#define REQUIRE_SANDBOX()                                                            \
  do {                                                                               \
    auto support = probe_sandbox(test_config());                                     \
    if (!support.available) GTEST_SKIP() << "bubblewrap unusable here: " << support.reason; \
  } while (0)

// Processes on the host whose command line contains `marker`.
int processes_with_marker(const std::string& marker) {
  int n = 0;
  for (auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(marker) != std::string::npos) ++n;
  }
  return n;
}

TEST(CodetoolSandbox, RunsCodeAndCapturesStdout) {
  REQUIRE_SANDBOX();
  ExecResult r = run_python_once(test_config(), "print(6 * 7)\nprint('done')");
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.stdout_text, "42\ndone\n");
  EXPECT_EQ(r.stderr_text, "");
}

TEST(CodetoolSandbox, SessionKeepsVariablesAcrossBlocks) {
  REQUIRE_SANDBOX();
  auto s = PythonSession::start(test_config());
  EXPECT_TRUE(s->sandboxed());
  EXPECT_TRUE(s->execute("x = 20\ndef f(y):\n    return x + y").ok);
  ExecResult r = s->execute("print(f(22))");
  EXPECT_EQ(r.stdout_text, "42\n");
}

TEST(CodetoolSandbox, FinalAnswerPrintsBoxed) {
  REQUIRE_SANDBOX();
  ExecResult r = run_python_once(test_config(), "final_answer(3 ** 4)");
  EXPECT_EQ(r.stdout_text, "\\boxed{81}\n");
}

TEST(CodetoolSandbox, ExceptionReportsLastStderrLine) {
  REQUIRE_SANDBOX();
  auto s = PythonSession::start(test_config());
  ExecResult r = s->execute("print('before')\n1 / 0");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.stdout_text, "before\n");
  EXPECT_EQ(r.error_line(), "ZeroDivisionError: division by zero");
  // The session survives an exception.
  EXPECT_EQ(s->execute("print('after')").stdout_text, "after\n");
}

TEST(CodetoolSandbox, NumpyAndSympyAreAvailable) {
  REQUIRE_SANDBOX();
  ExecResult r = run_python_once(
      test_config(), "import numpy as np, sympy as sp\nprint(int(np.arange(5).sum()), sp.factorint(360))");
  EXPECT_TRUE(r.ok) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "10 {2: 3, 3: 2, 5: 1}\n");
}

TEST(CodetoolSandbox, SubprocessOutputIsCaptured) {
  REQUIRE_SANDBOX();
  ExecResult r = run_python_once(test_config(), "import os\nos.system('echo from-shell')\nos.write(1, b'raw\\n')");
  EXPECT_EQ(r.stdout_text, "from-shell\nraw\n");
}

TEST(CodetoolSandbox, RunsAsAnUnprivilegedUidOfTheRangeWhenHostIsRoot) {
  REQUIRE_SANDBOX();
  if (geteuid() != 0) GTEST_SKIP() << "uid switching applies only when agentrl runs as root";
  SandboxConfig c = test_config();
  ExecResult r = run_python_once(c, "import os\nprint(os.getuid())");
  long uid = std::stol(r.stdout_text);
  EXPECT_GE(uid, c.sandbox_uid);
  EXPECT_LT(uid, c.sandbox_uid + c.sandbox_uid_count);
}

// ---- security cases -------------------------------------------------------

TEST(CodetoolSandboxSecurity, InfiniteLoopIsKilledAtTheTimeout) {
  REQUIRE_SANDBOX();
  auto s = PythonSession::start(test_config());
  ExecResult r = s->execute("while True:\n    pass", 1.0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 2.5);
  EXPECT_FALSE(s->alive());
  EXPECT_EQ(r.error_line(), "TimeoutError: execution timed out");
}

TEST(CodetoolSandboxSecurity, SleepingForeverIsKilledAtTheTimeout) {
  REQUIRE_SANDBOX();
  ExecResult r = run_python_once(test_config(), "import time\ntime.sleep(10**6)", 1.0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 2.5);
}

TEST(CodetoolSandboxSecurity, ForkBombIsContainedAndLeavesNoProcess) {
  REQUIRE_SANDBOX();
  const std::string marker = "agentrl_forkbomb_" + std::to_string(getpid());
  {
    auto s = PythonSession::start(test_config());
    ExecResult r = s->execute("import os, time\n# " + marker +
                                  "\nimport subprocess\nfor i in range(10000):\n"
                                  "    try:\n        subprocess.Popen(['/usr/bin/sleep', '1000', '" + marker + "'])\n"
                                  "    except OSError:\n        pass\n"
                                  "    try:\n        os.fork()\n    except OSError:\n        pass\n"
                                  "time.sleep(100)",
                              2.0);
    EXPECT_TRUE(r.timed_out || r.crashed);
  }
  EXPECT_EQ(processes_with_marker(marker), 0);
}

TEST(CodetoolSandboxSecurity, MemoryBombFailsWithMemoryError) {
  REQUIRE_SANDBOX();
  ExecResult r = run_python_once(test_config(), "x = bytearray(4 << 30)");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_line(), "MemoryError");
}

TEST(CodetoolSandboxSecurity, HundredMegabytesOfOutputAreCut) {
  REQUIRE_SANDBOX();
  SandboxConfig c = test_config();
  ExecResult r = run_python_once(c, "import sys\nfor i in range(1000):\n    sys.stdout.write('x' * 100000)\n");
  EXPECT_TRUE(r.output_limit);
  EXPECT_EQ(r.stdout_text.size(), static_cast<size_t>(c.max_output_bytes));
  EXPECT_EQ(r.stdout_text.find_first_not_of('x'), std::string::npos);
  EXPECT_NE(r.error_line().find("File too large"), std::string::npos) << r.error_line();
}

TEST(CodetoolSandboxSecurity, HostSecretsAndRepoAreNotVisible) {
  REQUIRE_SANDBOX();
  std::string repo_file = std::string(AGENTRL_SOURCE_DIR) + "/CMakeLists.txt";
  ASSERT_TRUE(fs::exists(repo_file));
  ExecResult r = run_python_once(test_config(),
                                 "import os\n"
                                 "for p in ['/etc/shadow', '/root', '" + repo_file + "', '/work']:\n"
                                 "    print(p, os.path.exists(p))\n");
  EXPECT_EQ(r.stdout_text, "/etc/shadow False\n/root False\n" + repo_file + " False\n/work False\n");
  ExecResult shadow = run_python_once(test_config(), "print(open('/etc/shadow').read())");
  EXPECT_EQ(shadow.error_line(), "FileNotFoundError: [Errno 2] No such file or directory: '/etc/shadow'");
}

TEST(CodetoolSandboxSecurity, WritesOutsideTheWorkDirFailOrStayPrivate) {
  REQUIRE_SANDBOX();
  std::string host_probe = "/tmp/agentrl_sandbox_probe_" + std::to_string(getpid());
  ExecResult r = run_python_once(test_config(),
                                 "import os\n"
                                 "open('" + host_probe + "', 'w').write('inside')\n"
                                 "for p in ['/usr/pwned', '/pwned', '/etc/pwned']:\n"
                                 "    try:\n        open(p, 'w').write('x')\n        print(p, 'written')\n"
                                 "    except OSError as e:\n        print(p, 'refused')\n");
  EXPECT_TRUE(r.ok) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "/usr/pwned refused\n/pwned refused\n/etc/pwned refused\n");
  EXPECT_FALSE(fs::exists(host_probe));  // /tmp inside is a private tmpfs
  EXPECT_FALSE(fs::exists("/usr/pwned"));
  EXPECT_FALSE(fs::exists("/pwned"));
}

TEST(CodetoolSandboxSecurity, HostLoopbackIsUnreachable) {
  REQUIRE_SANDBOX();
  int server = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(server, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(server, 4), 0);
  socklen_t len = sizeof addr;
  getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ExecResult r = run_python_once(test_config(),
                                 "import socket\ns = socket.socket()\ns.settimeout(1)\n"
                                 "try:\n    s.connect(('127.0.0.1', " + std::to_string(port) + "))\n"
                                 "    print('connected')\nexcept OSError as e:\n    print(type(e).__name__)\n");
  EXPECT_EQ(r.stdout_text, "ConnectionRefusedError\n");
  int conn = accept(server, nullptr, nullptr);
  EXPECT_LT(conn, 0);  // nothing reached the host listener
  close(server);
}

TEST(CodetoolSandboxSecurity, KillingTheParentEndsOnlyTheSandbox) {
  REQUIRE_SANDBOX();
  auto s = PythonSession::start(test_config());
  ExecResult r = s->execute("import os\nos.kill(os.getppid(), 9)\nimport time\ntime.sleep(100)", 2.0);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(s->alive());
  // This process is still here and can start a new sandbox.
  EXPECT_EQ(run_python_once(test_config(), "print('alive')").stdout_text, "alive\n");
}

TEST(CodetoolSandboxSecurity, ProcessIgnoringSigtermIsKilled) {
  REQUIRE_SANDBOX();
  const std::string marker = "agentrl_noterm_" + std::to_string(getpid());
  {
    auto s = PythonSession::start(test_config());
    ExecResult r = s->execute(
        "import signal, subprocess, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "subprocess.Popen(['/usr/bin/sh', '-c', 'trap \"\" TERM; while :; do sleep 1; done', '" + marker + "'])\n"
        "time.sleep(0.3)\nprint('started')\n");
    EXPECT_EQ(r.stdout_text, "started\n");
    EXPECT_EQ(processes_with_marker(marker), 1);  // still running after the block returned
  }
  EXPECT_EQ(processes_with_marker(marker), 0);  // gone with the session
}

TEST(CodetoolSandbox, UnsandboxedModeMustBeAllowedExplicitly) {
  SandboxConfig c = test_config();
  c.bwrap = "/nonexistent/bwrap";
  try {
    PythonSession::start(c);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bubblewrap not found at '/nonexistent/bwrap'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("allow_unsandboxed: true"), std::string::npos);
  }
  c.allow_unsandboxed = true;
  auto s = PythonSession::start(c);
  EXPECT_FALSE(s->sandboxed());
  EXPECT_EQ(s->execute("print(1 + 1)").stdout_text, "2\n");
}

}  // namespace
}  // namespace agentrl::envs::codetool
