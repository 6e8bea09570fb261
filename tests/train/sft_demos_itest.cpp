// Expert demonstrations with deliberate mistakes (sft.demo_mistake_rate) and
// the SFT data built from them: mistakes are real env steps in the context,
// every mistake is followed by the expert's recovery, the SFT loss covers the
// expert's commands only, and the chat JSONL export ("weight": 0) trains on
// exactly the same tokens as the trajectories it came from.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "agentrl/core/error.h"
#include "agentrl/envs/alfworld/alfworld_env.h"
#include "agentrl/envs/registry.h"
#include "agentrl/rollout/demos.h"
#include "agentrl/train/sft.h"
#include "rollout/rollout_test_support.h"

namespace agentrl::train {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(DemoMistakes, MistakenCommandChangesExactlyOneWholeNumber) {
  Rng rng(5);
  const std::string cmd = "take mug 3 from desk 2";
  std::set<std::string> seen;
  for (int i = 0; i < 400; ++i) {
    auto m = rollout::mistaken_command(cmd, rng);
    ASSERT_TRUE(m.has_value());
    const auto a = words(cmd), b = words(*m);
    ASSERT_EQ(a.size(), b.size()) << *m;
    int changed = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      if (a[k] == b[k]) continue;
      ++changed;
      const int64_t n = std::stoll(b[k]);
      EXPECT_TRUE(k == 2 || k == 5) << "only a number changes: " << *m;
      EXPECT_GE(n, 1) << *m;
      EXPECT_LE(n, std::max<int64_t>(3, std::stoll(a[k]) + 1)) << *m;
    }
    EXPECT_EQ(changed, 1) << *m;
    seen.insert(*m);
  }
  // Both numbers are picked, every other value of each: mug 1,2,4 and desk 1,3.
  EXPECT_EQ(seen, (std::set<std::string>{"take mug 1 from desk 2", "take mug 2 from desk 2", "take mug 4 from desk 2",
                                         "take mug 3 from desk 1", "take mug 3 from desk 3"}));
  EXPECT_FALSE(rollout::mistaken_command("look", rng).has_value());
  EXPECT_FALSE(rollout::mistaken_command("go to desk2 a1", rng).has_value()) << "no whole-word number";
}

struct Fixture {
  std::shared_ptr<envs::EnvSuite> suite;
  std::shared_ptr<rollout::AgentContext> ctx;
};

Fixture alfworld_full_context() {
  config::ExtensionSections sections;
  auto& c = sections.as<envs::alfworld::AlfworldConfig>("alfworld");
  c.expert = "search";
  c.max_receptacles = 6;
  c.task_types = {"pick"};
  c.max_steps = 30;
  Fixture f;
  f.suite = envs::make_env_suite("alfworld", sections);
  f.ctx = std::make_shared<rollout::AgentContext>();
  f.ctx->rollout.context_mode = "full";
  f.ctx->rollout.max_turns = 30;
  f.ctx->rollout.max_context_tokens = 1 << 20;
  f.ctx->rollout.observation_token_budget = 1 << 16;
  f.ctx->prompt.expert_response = "<action>{action}</action>";
  f.ctx->tokenizer = std::make_shared<agentrl::testing::ByteTokenizer>();
  f.ctx->chat = text::ChatTemplate::create("chatml", f.ctx->tokenizer, "");
  return f;
}

TEST(DemoMistakes, MistakesAreEnvStepsFollowedByTheRecoveryAndCarryNoLoss) {
  auto f = alfworld_full_context();
  auto clean = rollout::expert_trajectories(*f.suite, "train", 40, 11, f.ctx, 0.0);
  auto noisy = rollout::expert_trajectories(*f.suite, "train", 40, 11, f.ctx, 0.3);
  ASSERT_EQ(clean.size(), 40u);
  ASSERT_EQ(noisy.size(), 40u);
  int64_t mistakes = 0, rejected = 0, clean_turns = 0;
  for (const auto& t : clean) {
    clean_turns += static_cast<int64_t>(t.turns.size());
    for (const auto& turn : t.turns) {
      EXPECT_FALSE(turn.demo_mistake);
      EXPECT_FALSE(turn.invalid_action) << "the expert's own commands are all valid: " << turn.action;
    }
  }
  for (const auto& t : noisy) {
    EXPECT_TRUE(t.success);
    for (size_t k = 0; k < t.turns.size(); ++k) {
      const auto& turn = t.turns[k];
      if (!turn.demo_mistake) {
        EXPECT_FALSE(turn.invalid_action) << t.episode_id << " turn " << k << ": " << turn.action;
        continue;
      }
      ++mistakes;
      rejected += turn.invalid_action;
      ASSERT_LT(k + 1, t.turns.size()) << "a mistake is never the last step: the expert recovers after it";
      EXPECT_FALSE(t.turns[k + 1].demo_mistake) << "never two mistakes in a row";
      EXPECT_NE(turn.action, t.turns[k + 1].action) << t.episode_id << " turn " << k;
    }
  }
  // ~0.3 of the expert steps (fewer: never right after a mistake) get a mistake first.
  EXPECT_GT(mistakes, clean_turns / 8);
  EXPECT_GT(rejected, mistakes / 2) << "most mistakes name an instance that is not there: the env rejects them";

  // SFT data: loss exactly on the expert's generated tokens.
  auto seqs = sft_sequences_from_trajectories(noisy, 1 << 20);
  ASSERT_EQ(seqs.size(), noisy.size());
  for (size_t i = 0; i < noisy.size(); ++i) {
    int64_t expert_tokens = 0;
    for (const auto& turn : noisy[i].turns)
      if (!turn.demo_mistake) expert_tokens += static_cast<int64_t>(turn.generated_tokens.size());
    double trained = 0;
    for (float m : seqs[i].loss_mask) trained += m;
    EXPECT_EQ(static_cast<int64_t>(trained), expert_tokens) << noisy[i].episode_id;
  }

  // Same seed, same mistakes.
  auto again = rollout::expert_trajectories(*f.suite, "train", 40, 11, f.ctx, 0.3);
  ASSERT_EQ(again.size(), noisy.size());
  for (size_t i = 0; i < noisy.size(); ++i) {
    ASSERT_EQ(again[i].turns.size(), noisy[i].turns.size());
    for (size_t k = 0; k < noisy[i].turns.size(); ++k) EXPECT_EQ(again[i].turns[k].action, noisy[i].turns[k].action);
  }
}

TEST(DemoMistakes, ChatJsonlExportTrainsOnTheSameTokensAsTheTrajectories) {
  auto f = alfworld_full_context();
  auto noisy = rollout::expert_trajectories(*f.suite, "train", 12, 3, f.ctx, 0.3);
  ASSERT_EQ(noisy.size(), 12u);
  const fs::path file = fs::temp_directory_path() / ("agentrl_demo_mistakes_" + std::to_string(::getpid()) + ".jsonl");
  int64_t weight0 = 0, mistakes = 0;
  {
    std::ofstream out(file);
    for (const auto& t : noisy) {
      for (const auto& turn : t.turns) mistakes += turn.demo_mistake;
      for (const auto& conv : rollout::trajectory_to_conversations(t, f.ctx->prompt)) {
        for (const auto& m : conv["messages"]) weight0 += m.contains("weight") && m["weight"] == 0;
        out << conv.dump() << "\n";
      }
    }
  }
  ASSERT_GT(mistakes, 0);
  EXPECT_EQ(weight0, mistakes);
  auto from_file = sft_sequences_from_jsonl(file.string(), *f.ctx->chat, 1 << 20);
  auto from_trajs = sft_sequences_from_trajectories(noisy, 1 << 20);
  fs::remove(file);
  ASSERT_EQ(from_file.size(), from_trajs.size());
  for (size_t i = 0; i < from_file.size(); ++i) {
    // The rendered file ends with the template's newline after the last
    // <|im_end|>, which the trajectory (ending at the generated <|im_end|>)
    // does not have; it is context, never trained.
    auto file_ids = from_file[i].ids;
    auto file_mask = from_file[i].loss_mask;
    ASSERT_GE(file_ids.size(), from_trajs[i].ids.size());
    ASSERT_LE(file_ids.size(), from_trajs[i].ids.size() + 1) << "episode " << i;
    if (file_ids.size() > from_trajs[i].ids.size()) {
      EXPECT_EQ(file_mask.back(), 0.f);
      file_ids.pop_back();
      file_mask.pop_back();
    }
    EXPECT_EQ(file_ids, from_trajs[i].ids) << "episode " << i;
    EXPECT_EQ(file_mask, from_trajs[i].loss_mask) << "episode " << i;
  }
}

TEST(DemoMistakes, ObservationLossWeightsWhatTheEnvReturnedAndNothingElse) {
  auto f = alfworld_full_context();
  auto noisy = rollout::expert_trajectories(*f.suite, "train", 12, 3, f.ctx, 0.3);
  const float w = 0.25f;
  auto plain = sft_sequences_from_trajectories(noisy, 1 << 20);
  auto weighted = sft_sequences_from_trajectories(noisy, 1 << 20, w);
  ASSERT_EQ(weighted.size(), noisy.size());
  for (size_t i = 0; i < noisy.size(); ++i) {
    const auto& t = noisy[i];
    ASSERT_EQ(weighted[i].ids, plain[i].ids);
    ASSERT_EQ(weighted[i].loss_mask.size(), plain[i].loss_mask.size());
    // Walk the episode: the first prompt is never trained, later context
    // (observation + markup) carries w, the expert's commands 1, mistakes 0.
    size_t pos = 0;
    for (size_t k = 0; k < t.turns.size(); ++k) {
      for (size_t c = 0; c < t.turns[k].context_tokens.size(); ++c, ++pos)
        ASSERT_EQ(weighted[i].loss_mask[pos], k == 0 ? 0.f : w) << t.episode_id << " turn " << k << " context " << c;
      for (size_t g = 0; g < t.turns[k].generated_tokens.size(); ++g, ++pos) {
        ASSERT_EQ(weighted[i].loss_mask[pos], t.turns[k].demo_mistake ? 0.f : 1.f) << t.episode_id << " turn " << k;
        ASSERT_EQ(weighted[i].loss_mask[pos], plain[i].loss_mask[pos]);
      }
    }
    EXPECT_EQ(pos, weighted[i].ids.size());
  }
  EXPECT_THROW(sft_sequences_from_trajectories(noisy, 1 << 20, 1.5f), UsageError);
  EXPECT_THROW(sft_sequences_from_trajectories(noisy, 1 << 20, -0.1f), UsageError);
}

// Window mode: a row per turn; the whole prompt of every turn (but its first
// token, which has no predecessor) carries the weight, the expert's command
// 1, a mistaken command 0.
TEST(DemoMistakes, ObservationLossInWindowModeWeightsEveryTurnsPrompt) {
  auto f = alfworld_full_context();
  f.ctx->rollout.context_mode = "window";
  f.ctx->rollout.window_turns = 2;
  auto noisy = rollout::expert_trajectories(*f.suite, "train", 8, 5, f.ctx, 0.3);
  const float w = 0.5f;
  auto weighted = sft_sequences_from_trajectories(noisy, 1 << 20, w);
  size_t row = 0, mistakes = 0;
  for (const auto& t : noisy) {
    ASSERT_EQ(t.context_mode, rollout::ContextMode::kWindow);
    for (const auto& turn : t.turns) {
      ASSERT_LT(row, weighted.size());
      const auto& s = weighted[row++];
      ASSERT_EQ(s.ids.size(), turn.context_tokens.size() + turn.generated_tokens.size());
      for (size_t c = 0; c < turn.context_tokens.size(); ++c)
        ASSERT_EQ(s.loss_mask[c], c == 0 ? 0.f : w) << t.episode_id << " context " << c;
      for (size_t g = 0; g < turn.generated_tokens.size(); ++g)
        ASSERT_EQ(s.loss_mask[turn.context_tokens.size() + g], turn.demo_mistake ? 0.f : 1.f);
      mistakes += turn.demo_mistake;
    }
  }
  EXPECT_EQ(row, weighted.size());
  EXPECT_GT(mistakes, 0u);
}

TEST(DemoMistakes, ObservationLossWeightIsRefusedWhereThereIsNoEnvOutputToWeight) {
  const std::string cfg = std::string(AGENTRL_SOURCE_DIR) + "/tests/data/tiny_alfworld.yaml";
  auto error_of = [&](const std::vector<std::string>& overrides) -> std::string {
    try {
      load_experiment_config(cfg, overrides);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_EQ(error_of({"sft.observation_loss_weight=0.3", "rollout.context_mode=full"}), "(accepted)");
  EXPECT_EQ(load_experiment_config(cfg, {"sft.observation_loss_weight=0.3"}).sft.observation_loss_weight, 0.3);
  EXPECT_NE(error_of({"sft.observation_loss_weight=0.3", "sft.data=chats.jsonl"}).find("sft.data"), std::string::npos);
  EXPECT_EQ(error_of({"sft.observation_loss_weight=0.3", "rollout.context_mode=window"}), "(accepted)");
  EXPECT_NE(error_of({"sft.observation_loss_weight=2"}).find("sft.observation_loss_weight"), std::string::npos);
}

TEST(DemoMistakes, JsonlWeightMustBeZeroOrOneOnAnAssistantMessage) {
  auto f = alfworld_full_context();
  const fs::path file = fs::temp_directory_path() / ("agentrl_sft_weight_" + std::to_string(::getpid()) + ".jsonl");
  auto expect_error = [&](const std::string& line2, const std::string& needle) {
    {
      std::ofstream out(file);
      out << R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"a","weight":1}]})"
          << "\n"
          << line2 << "\n";
    }
    try {
      sft_sequences_from_jsonl(file.string(), *f.ctx->chat, 1024);
      ADD_FAILURE() << "accepted: " << line2;
    } catch (const FormatError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(file.string() + ":2: "), std::string::npos) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    }
  };
  expect_error(R"({"messages":[{"role":"user","content":"hi","weight":0},{"role":"assistant","content":"a"}]})",
               "only for assistant messages");
  expect_error(R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"a","weight":0.5}]})",
               "must be 0 or 1, got 0.5");
  expect_error(R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"a","weight":"0"}]})",
               "must be 0 or 1, got \"0\"");
  fs::remove(file);
}

}  // namespace
}  // namespace agentrl::train
