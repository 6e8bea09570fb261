// The play loop's response reading: one action per line for envs with
// admissible actions, multi-line responses ended by a "." line for free-text
// envs (code tool, Deep Search), and the explicit --lines overrides.
#include <gtest/gtest.h>

#include <sstream>

#include "agentrl/envs/env_tools.h"

namespace agentrl::envs {
namespace {

// Records every action it receives; ends when an action contains "DONE".
// Free-text (no admissible actions) unless `choices` is set. Its
// extract_action keeps the text after "RESPONSE:" (to show that multi-line
// input goes through it).
class RecordingEnv : public Env {
 public:
  RecordingEnv(std::vector<std::string>* log, bool choices) : log_(log), choices_(choices) {}
  std::string reset(const Task&, uint64_t) override { return "ready"; }
  StepResult step(const std::string& action) override {
    log_->push_back(action);
    StepResult r;
    r.observation = "got " + std::to_string(action.size()) + " bytes";
    r.done = action.find("DONE") != std::string::npos;
    r.info.success = r.done;
    r.reward = r.done ? 1.0 : 0.0;
    return r;
  }
  std::vector<std::string> admissible_actions() const override {
    return choices_ ? std::vector<std::string>{"look", "wait"} : std::vector<std::string>{};
  }
  std::string task_description() const override { return "type"; }
  std::optional<std::string> expert_action() override { return std::nullopt; }
  std::optional<std::string> extract_action(const std::string& response) const override {
    const std::string tag = "RESPONSE:";
    auto p = response.find(tag);
    if (p == std::string::npos) return std::nullopt;
    return response.substr(p + tag.size());
  }
  int max_steps() const override { return 10; }

 private:
  std::vector<std::string>* log_;
  bool choices_;
};

class OneTask : public TaskSource {
 public:
  std::vector<std::string> splits() const override { return {"test"}; }
  size_t size(const std::string&) const override { return 1; }
  Task get(const std::string& split, size_t i) const override { return {"t0", split, static_cast<int64_t>(i), "x"}; }
};

class RecordingSuite : public EnvSuite {
 public:
  explicit RecordingSuite(bool choices) : choices_(choices) {}
  const std::string& name() const override { return name_; }
  const TaskSource& tasks() const override { return tasks_; }
  std::unique_ptr<Env> make_env() const override { return std::make_unique<RecordingEnv>(&log, choices_); }
  std::string eval_split() const override { return "test"; }
  mutable std::vector<std::string> log;

 private:
  std::string name_ = "recording";
  OneTask tasks_;
  bool choices_;
};

PlaySummary play_text(const RecordingSuite& suite, const std::string& input, ResponseLines lines,
                      std::string* out_text = nullptr) {
  std::istringstream in(input);
  std::ostringstream out;
  PlayOptions o;
  o.task_index = 0;
  o.lines = lines;
  PlaySummary s = play(suite, o, in, out);
  if (out_text) *out_text = out.str();
  return s;
}

TEST(EnvToolsPlay, AFreeTextEnvReadsMultiLineResponsesEndedByADotLine) {
  RecordingSuite suite(/*choices=*/false);
  const std::string input =
      "RESPONSE:Let me compute.\n```python\nprint(1)\n```\n.\n"
      "\n"
      "RESPONSE:DONE\n"
      ".\n";
  std::string out;
  PlaySummary s = play_text(suite, input, ResponseLines::kAuto, &out);
  ASSERT_EQ(suite.log.size(), 2u) << out;
  // Newlines kept, the "." line not part of the response, extract_action applied.
  EXPECT_EQ(suite.log[0], "Let me compute.\n```python\nprint(1)\n```");
  EXPECT_EQ(suite.log[1], "DONE");
  EXPECT_TRUE(s.success);
  EXPECT_EQ(s.steps, 2);
  EXPECT_NE(out.find("multi-line responses"), std::string::npos) << out;
}

TEST(EnvToolsPlay, EndOfInputEndsTheLastResponseAndQuitStops) {
  RecordingSuite suite(false);
  PlaySummary s = play_text(suite, "RESPONSE:a\nb", ResponseLines::kAuto);
  ASSERT_EQ(suite.log.size(), 1u);
  EXPECT_EQ(suite.log[0], "a\nb");
  EXPECT_EQ(s.steps, 1);

  RecordingSuite quit_suite(false);
  s = play_text(quit_suite, "quit\nRESPONSE:DONE\n.\n", ResponseLines::kAuto);
  EXPECT_TRUE(quit_suite.log.empty());
  EXPECT_EQ(s.steps, 0);
}

TEST(EnvToolsPlay, AResponseWithoutTheEnvsFormatIsSentAsTyped) {
  RecordingSuite suite(false);
  play_text(suite, "no tag here\nsecond line\n.\n", ResponseLines::kAuto);
  ASSERT_EQ(suite.log.size(), 1u);
  EXPECT_EQ(suite.log[0], "no tag here\nsecond line");
}

TEST(EnvToolsPlay, AnEnvWithAdmissibleActionsKeepsOneActionPerLine) {
  RecordingSuite suite(/*choices=*/true);
  PlaySummary s = play_text(suite, "look\n2\nDONE now\n", ResponseLines::kAuto);
  ASSERT_EQ(suite.log.size(), 3u);
  EXPECT_EQ(suite.log[0], "look");
  EXPECT_EQ(suite.log[1], "wait");  // a number picks the admissible action
  EXPECT_EQ(suite.log[2], "DONE now");
  EXPECT_TRUE(s.success);
}

TEST(EnvToolsPlay, LinesOptionOverridesTheEnvsKind) {
  RecordingSuite multi(/*choices=*/true);
  play_text(multi, "RESPONSE:x\ny\n.\nRESPONSE:DONE\n", ResponseLines::kMulti);
  ASSERT_EQ(multi.log.size(), 2u);
  EXPECT_EQ(multi.log[0], "x\ny");

  RecordingSuite single(/*choices=*/false);
  play_text(single, "x\nDONE\n", ResponseLines::kSingle);
  ASSERT_EQ(single.log.size(), 2u);
  EXPECT_EQ(single.log[0], "x");  // single-line mode sends the line as typed
}

}  // namespace
}  // namespace agentrl::envs
