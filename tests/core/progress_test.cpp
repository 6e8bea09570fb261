#include "agentrl/core/progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

#include "agentrl/core/fs.h"
#include "core/test_util.h"

namespace agentrl {
namespace {
using ::testing::HasSubstr;

struct Capture {
  testing::ScratchDir dir;
  std::string path = dir.file("out.txt");
  std::FILE* f = std::fopen(path.c_str(), "w+");
  ~Capture() {
    if (f) std::fclose(f);
  }
  std::vector<std::string> lines() {
    std::fflush(f);
    std::istringstream in(read_file(path));
    std::vector<std::string> out;
    std::string l;
    while (std::getline(in, l)) out.push_back(l);
    return out;
  }
};

TEST(ProgressBar, PlainModePrintsAtMostEveryInterval) {
  Capture c;
  double now = 0;
  ProgressBar bar(100, "rollout", {c.f, 10.0, 0, 20, [&] { return now; }});
  for (int i = 1; i <= 50; ++i) {
    now = i;  // one second per item
    bar.update(i);
  }
  // Printed at t=1 (first), 11, 21, 31, 41: five lines.
  EXPECT_EQ(c.lines().size(), 5u);
}

TEST(ProgressBar, PlainLineShowsDoneTotalRateAndEta) {
  Capture c;
  double now = 0;
  ProgressBar bar(100, "rollout", {c.f, 10.0, 0, 20, [&] { return now; }});
  now = 10;
  bar.update(25, "tokens/s 1830");
  // 25 items in 10 s = 2.5/s; 75 left -> 30 s.
  ASSERT_EQ(c.lines().size(), 1u);
  EXPECT_EQ(c.lines()[0], "rollout 25/100  25%  2.5/s  ETA 00:30  tokens/s 1830");
}

TEST(ProgressBar, CompletionIsAlwaysPrintedOnce) {
  Capture c;
  double now = 0;
  ProgressBar bar(10, "eval", {c.f, 1000.0, 0, 20, [&] { return now; }});
  bar.update(1);
  now = 2;
  bar.update(10);
  bar.finish();
  const auto lines = c.lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "eval 10/10 100%  5/s  elapsed 00:02");
}

TEST(ProgressBar, TtyModeRedrawsOneLineWithBar) {
  Capture c;
  double now = 0;
  ProgressBar bar(4, "load", {c.f, 10.0, 1, 8, [&] { return now; }});
  now = 1;
  bar.update(1);
  now = 2;
  bar.update(2);
  bar.finish();
  const auto lines = c.lines();
  ASSERT_EQ(lines.size(), 1u);  // all redraws on one line, then a newline
  EXPECT_THAT(lines[0], HasSubstr("\rload [##------] 1/4  25%"));
  EXPECT_THAT(lines[0], HasSubstr("\rload [####----] 2/4  50%  1/s  ETA 00:02\033[K"));
}

TEST(ProgressBar, ConcurrentUpdatesDoNotInterleaveLines) {
  Capture c;
  {
    ProgressBar bar(4000, "work", {c.f, 0.0, 0, 20, {}});
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([&, t] {
        for (int i = 0; i < 1000; ++i) bar.update(t * 1000 + i);
      });
    for (auto& t : ts) t.join();
  }
  for (const auto& l : c.lines()) EXPECT_THAT(l, ::testing::StartsWith("work ")) << l;
}

TEST(ProgressBar, FormatDuration) {
  EXPECT_EQ(format_duration(0), "00:00");
  EXPECT_EQ(format_duration(75), "01:15");
  EXPECT_EQ(format_duration(3723), "01:02:03");
  EXPECT_EQ(format_duration(NAN), "--:--");
}

}  // namespace
}  // namespace agentrl
