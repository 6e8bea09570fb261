#include "agentrl/core/jsonl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "core/test_util.h"

namespace agentrl {
namespace {
using ::testing::HasSubstr;

TEST(Jsonl, ReadsValuesAndSkipsBlankLines) {
  testing::ScratchDir dir;
  const std::string p = dir.file("d.jsonl");
  write_file_atomic(p, "{\"a\":1}\n\n   \n[1,2]\r\n\"s\"");
  const auto v = read_jsonl(p);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0]["a"], 1);
  EXPECT_EQ(v[1], nlohmann::json::array({1, 2}));
  EXPECT_EQ(v[2], "s");
}

TEST(Jsonl, LineNumbersCountBlankLines) {
  testing::ScratchDir dir;
  const std::string p = dir.file("d.jsonl");
  write_file_atomic(p, "1\n\n2\n");
  std::vector<int64_t> lines;
  for_each_jsonl(p, [&](const nlohmann::json&, int64_t line) { lines.push_back(line); });
  EXPECT_EQ(lines, (std::vector<int64_t>{1, 3}));
}

TEST(Jsonl, MalformedLineNamesFileAndLine) {
  testing::ScratchDir dir;
  const std::string p = dir.file("d.jsonl");
  write_file_atomic(p, "{\"a\":1}\n\n{\"a\": tru}\n");
  try {
    read_jsonl(p);
    FAIL() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::StartsWith(p + ":3: invalid JSON: parse error at line 1, column"));
  }
}

TEST(Jsonl, MissingFileIsIoError) {
  try {
    JsonlReader r("/nonexistent/agentrl.jsonl");
    FAIL() << "opened";
  } catch (const IoError& e) {
    EXPECT_STREQ(e.what(), "cannot open '/nonexistent/agentrl.jsonl': No such file or directory");
  }
}

}  // namespace
}  // namespace agentrl
