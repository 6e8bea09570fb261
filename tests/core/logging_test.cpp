#include "agentrl/core/logging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "core/test_util.h"

namespace agentrl {
namespace {
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Logging, FileReceivesLinesAtOrAboveLevel) {
  testing::ScratchDir dir;
  const std::string path = dir.file("log.txt");
  init_logging({"warn", 0, 1, path, false});
  log().info("quiet line");
  log().warn("loud line {}", 42);
  log().flush();
  const std::string text = read_file(path);
  EXPECT_THAT(text, HasSubstr("[warning] loud line 42"));
  EXPECT_THAT(text, Not(HasSubstr("quiet line")));
  EXPECT_THAT(text, Not(HasSubstr("[rank")));
  init_logging({});
}

TEST(Logging, RankPrefixWhenMoreThanOneRank) {
  testing::ScratchDir dir;
  const std::string path = dir.file("log.txt");
  init_logging({"info", 1, 2, path, false});
  log().info("hello");
  log().flush();
  EXPECT_THAT(read_file(path), HasSubstr("[info] [rank 1] hello"));
  init_logging({});
}

TEST(Logging, LogFileIsAppendedNotTruncated) {
  testing::ScratchDir dir;
  const std::string path = dir.file("log.txt");
  init_logging({"info", 0, 1, path, false});
  log().info("first run");
  log().flush();
  init_logging({"info", 0, 1, path, false});
  log().info("second run");
  log().flush();
  const std::string text = read_file(path);
  EXPECT_THAT(text, HasSubstr("first run"));
  EXPECT_THAT(text, HasSubstr("second run"));
  init_logging({});
}

TEST(Logging, InfoLinesReachTheFileWithoutAnExplicitFlush) {
  // `tail -f runs/NAME/log.txt` follows a run; debug lines stay buffered.
  testing::ScratchDir dir;
  const std::string path = dir.file("log.txt");
  init_logging({"debug", 0, 1, path, false});
  log().debug("buffered line");
  log().info("step 1 | done");
  EXPECT_THAT(read_file(path), HasSubstr("step 1 | done"));
  init_logging({});
}

TEST(Logging, UnknownLevelIsConfigError) {
  try {
    parse_log_level("verbose");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "unknown log level 'verbose', expected one of: trace, debug, info, warn, error, critical, off");
  }
  EXPECT_EQ(parse_log_level("debug"), spdlog::level::debug);
}

TEST(Logging, UnopenableLogFileIsIoError) {
  testing::ScratchDir dir;
  write_file_atomic(dir.file("plain"), "x");
  const std::string bad = dir.file("plain") + "/log.txt";  // parent is a file
  try {
    init_logging({"info", 0, 1, bad, false});
    FAIL() << "accepted";
  } catch (const IoError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("cannot open log file '" + bad + "'"));
  }
}

TEST(Logging, LoggerIsRegisteredWithSpdlogUnderItsName) {
  init_logging({"info", 0, 1, "", false});
  EXPECT_EQ(spdlog::get("agentrl").get(), &log());
  EXPECT_EQ(spdlog::default_logger_raw(), &log());
  init_logging({});
}

TEST(Logging, PatternHasRankOnlyForMultipleRanks) {
  EXPECT_THAT(log_pattern(3, 4), HasSubstr("[rank 3] %v"));
  EXPECT_THAT(log_pattern(0, 1), Not(HasSubstr("rank")));
}

}  // namespace
}  // namespace agentrl
