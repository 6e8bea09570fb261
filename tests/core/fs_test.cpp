#include "agentrl/core/fs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "agentrl/core/error.h"
#include "core/test_util.h"

namespace agentrl {
namespace {
using ::testing::HasSubstr;

TEST(AtomicWrite, CreatesAndReplacesFile) {
  testing::ScratchDir dir;
  const std::string p = dir.file("a.txt");
  write_file_atomic(p, "first");
  EXPECT_EQ(read_file(p), "first");
  write_file_atomic(p, std::string("sec\0ond", 7));
  EXPECT_EQ(read_file(p), std::string("sec\0ond", 7));
}

TEST(AtomicWrite, LeavesNoTemporaryFiles) {
  testing::ScratchDir dir;
  write_file_atomic(dir.file("a.txt"), "x");
  write_file_atomic(dir.file("a.txt"), "y");
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) n += e.is_regular_file();
  EXPECT_EQ(n, 1);
}

// The child writes the temporary file and is SIGKILLed at the point between
// write+fsync and rename: the target must still hold the old content.
TEST(AtomicWrite, KillBeforeRenameKeepsOldFile) {
  testing::ScratchDir dir;
  const std::string p = dir.file("state.json");
  write_file_atomic(p, "old content");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    write_file_atomic(p, std::string(1 << 20, 'n'), [](const std::string&) { ::raise(SIGKILL); });
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_EQ(read_file(p), "old content");
}

// Kill a child at arbitrary moments while it rewrites a large file in a loop:
// the target is always either the old or a complete new version.
TEST(AtomicWrite, InterruptedWritesNeverLeavePartialTarget) {
  testing::ScratchDir dir;
  const std::string p = dir.file("big.bin");
  const std::string old_content(1 << 16, 'o');
  const std::string new_content(4 << 20, 'N');
  for (int round = 0; round < 5; ++round) {
    write_file_atomic(p, old_content);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (;;) write_file_atomic(p, new_content);
    }
    ::usleep(2000 + 7000 * round);
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    const std::string now = read_file(p);
    EXPECT_TRUE(now == old_content || now == new_content) << "partial target of " << now.size() << " bytes";
  }
}

TEST(ReadFile, MissingFileNamesPath) {
  try {
    read_file("/nonexistent/agentrl/x.bin");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_STREQ(e.what(), "cannot read '/nonexistent/agentrl/x.bin': No such file or directory");
  }
}

TEST(ReadFile, DirectoryIsAnError) {
  testing::ScratchDir dir;
  try {
    read_file(dir.path());
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read '" + dir.path() + "': is a directory");
  }
}

TEST(AtomicWrite, MissingDirectoryIsIoErrorNamingTarget) {
  testing::ScratchDir dir;
  const std::string p = dir.file("no/such/dir/a.txt");
  try {
    write_file_atomic(p, "x");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("(to write '" + p + "'): No such file or directory"));
  }
}

TEST(EnsureDir, CreatesNestedDirectoriesAndIsIdempotent) {
  testing::ScratchDir dir;
  const std::string p = dir.file("a/b/c");
  ensure_dir(p);
  ensure_dir(p);
  EXPECT_TRUE(std::filesystem::is_directory(p));
}

TEST(EnsureDir, FileInTheWayIsAnError) {
  testing::ScratchDir dir;
  write_file_atomic(dir.file("f"), "x");
  EXPECT_THROW(ensure_dir(dir.file("f")), IoError);
  EXPECT_THROW(ensure_dir(dir.file("f/sub")), IoError);
}

TEST(RenameAtomic, MovesFile) {
  testing::ScratchDir dir;
  write_file_atomic(dir.file("a"), "payload");
  rename_atomic(dir.file("a"), dir.file("b"));
  EXPECT_EQ(read_file(dir.file("b")), "payload");
  EXPECT_FALSE(std::filesystem::exists(dir.file("a")));
  EXPECT_THROW(rename_atomic(dir.file("a"), dir.file("c")), IoError);
}

}  // namespace
}  // namespace agentrl
