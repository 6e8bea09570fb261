// `agentrl dashboard` through the binary, on a real two-iteration run made by
// the test (tiny CPU policy, EMPG, ALFWorld): every endpoint's JSON, the page
// and its files, torn files of a run that is being written, a directory that
// is not a run, and requests that try to leave the run directory. Then a
// headless Chromium renders the page (skipped where Chromium cannot run).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace agentrl {
namespace {

// `agentrl dashboard ARGS --port 0` in the background; the port comes from
// the URL line it prints. Stopped with SIGTERM at the end.
class DashboardProcess {
 public:
  explicit DashboardProcess(const std::vector<std::string>& args) {
    int out[2];
    if (::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::dup2(out[1], 2);
      ::close(out[0]);
      std::vector<std::string> argv_s = {std::string(AGENTRL_BINARY_DIR) + "/agentrl", "dashboard"};
      argv_s.insert(argv_s.end(), args.begin(), args.end());
      argv_s.push_back("--port");
      argv_s.push_back("0");
      std::vector<char*> argv;
      for (auto& a : argv_s) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    std::string text;
    char c;
    while (::read(out[0], &c, 1) == 1) {
      text += c;
      if (c == '\n' && text.find("http://") != std::string::npos) break;
    }
    output_ = text;
    fd_ = out[0];
    const auto colon = text.rfind(':', text.find("/ ;"));
    if (colon != std::string::npos) port_ = std::atoi(text.c_str() + colon + 1);
  }
  ~DashboardProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  int port_ = -1;
  std::string output_;
};

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
  json j() const { return json::parse(body, nullptr, false); }
};

// A plain HTTP/1.0 GET on 127.0.0.1 (the raw request line is sent as given,
// so paths with ".." reach the server unnormalised).
HttpReply http_get(int port, const std::string& target) {
  HttpReply r;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return r;
  }
  const std::string req = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) return r;
  std::string raw;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) raw.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const auto head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return r;
  r.status = std::atoi(raw.c_str() + raw.find(' ') + 1);
  const std::string head = raw.substr(0, head_end);
  const auto ct = head.find("Content-Type: ");
  if (ct != std::string::npos) r.content_type = head.substr(ct + 14, head.find("\r\n", ct) - ct - 14);
  r.body = raw.substr(head_end + 4);
  return r;
}

// Two RL iterations of the ALFWorld EMPG config on a tiny CPU policy, with
// trajectories dumped (made once for all tests of this file).
const std::string& trained_run() {
  static const std::string dir = [] {
    const auto out = fs::temp_directory_path() / ("agentrl_dashboard_" + std::to_string(::getpid()));
    fs::remove_all(out);
    const std::string cfg = std::string(AGENTRL_SOURCE_DIR) + "/configs/alfworld_empg.yaml";
    auto r = testing::run_agentrl(
        "train " + cfg + " runtime.output_dir=" + out.string() +
        " runtime.name=run model.path= model.dtype=float32 model.device=cpu model.gradient_checkpointing=false"
        " model.init.hidden_size=32 model.init.num_hidden_layers=1 model.init.num_attention_heads=2"
        " model.init.num_key_value_heads=1 model.init.intermediate_size=64 model.init.max_position_embeddings=4096"
        " tokenizer.train=true tokenizer.vocab_size=600 tokenizer.vocab_size_is_limit=true"
        " tokenizer.corpus_episodes=4 engine.max_batch_size=8 engine.kv_budget_tokens=65536"
        " engine.kv_memory_fraction=0 engine.max_seq_len=4096 rollout.group_size=2 rollout.tasks_per_iteration=2"
        " rollout.max_turns=2 rollout.max_new_tokens=12 rollout.max_context_tokens=4096 rollout.concurrency=4"
        " rollout.dump_trajectories=true trainer.iterations=2 trainer.eval_every=0 trainer.eval_episodes=1"
        " trainer.save_every=1 trainer.micro_batch_tokens=8192 runtime.num_threads=1 sft.enabled=false");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return (out / "run").string();
  }();
  return dir;
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = trained_run();
    ASSERT_TRUE(fs::exists(fs::path(run_) / "metrics.jsonl")) << "the training run failed";
  }
  std::string run_;
};

TEST_F(DashboardTest, ServesThePageAndItsFilesFromTheBinary) {
  DashboardProcess d({run_});
  ASSERT_GT(d.port(), 0) << d.output();
  auto page = http_get(d.port(), "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.content_type.find("text/html"), std::string::npos);
  EXPECT_NE(page.body.find("app.js"), std::string::npos);
  auto js = http_get(d.port(), "/app.js"), css = http_get(d.port(), "/app.css");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.content_type, "text/css; charset=utf-8");  // a browser ignores a style sheet of another type
  // Debian's dygraphs when installed (setup installs it), a clear 404 otherwise.
  auto lib = http_get(d.port(), "/lib/dygraph.min.js");
  if (fs::exists("/usr/share/javascript/dygraphs/dygraph.min.js"))
    EXPECT_EQ(lib.status, 200);
  else
    EXPECT_NE(lib.body.find("libjs-dygraphs"), std::string::npos) << lib.body;
}

TEST_F(DashboardTest, RunsMetricsAndSummaryDescribeTheRun) {
  DashboardProcess d({run_, "/nonexistent/agentrl_run"});
  ASSERT_GT(d.port(), 0) << d.output();
  auto runs = http_get(d.port(), "/api/runs").j();
  ASSERT_EQ(runs["runs"].size(), 2u) << runs.dump();
  EXPECT_TRUE(runs["runs"][0]["is_run"].get<bool>());
  EXPECT_EQ(runs["runs"][0]["iterations"], 2);
  EXPECT_FALSE(runs["runs"][1]["is_run"].get<bool>());
  EXPECT_NE(runs["runs"][1]["problems"][0].get<std::string>().find("not a directory"), std::string::npos);

  auto m = http_get(d.port(), "/api/runs/0/metrics").j();
  ASSERT_TRUE(m["rows"].is_array()) << m.dump();
  EXPECT_EQ(m["rows"].back()["step"], 2);
  std::set<std::string> keys = m["keys"].get<std::set<std::string>>();
  for (const char* k : {"rollout/success_rate", "actor/pg_loss", "empg/g_mean", "time/rollout_s"})
    EXPECT_TRUE(keys.count(k)) << k << " not in " << m["keys"].dump();
  EXPECT_TRUE(m["problems"].empty()) << m["problems"].dump();

  auto s = http_get(d.port(), "/api/runs/0/summary").j();
  EXPECT_EQ(s["env"], "alfworld");
  EXPECT_EQ(s["estimator"], "empg");
  EXPECT_EQ(s["iterations"], 2);
  ASSERT_GE(s["checkpoints"].size(), 2u) << s["checkpoints"].dump();  // save_every=1 (and the start)
  EXPECT_EQ(s["checkpoints"].back()["name"], "step_000002");
  EXPECT_EQ(s["checkpoints"].back()["iteration"], 2);
  EXPECT_GT(s["checkpoints"].back()["bytes"].get<double>(), 1000.0);
  EXPECT_GT(s["time_s"]["rollout"].get<double>(), 0.0);
  EXPECT_NE(s["config_yaml"].get<std::string>().find("adv_estimator: empg"), std::string::npos);
  EXPECT_EQ(s["reproduce"], "agentrl train " + run_ + "/config.yaml");
  auto no_run = http_get(d.port(), "/api/runs/7/metrics");
  EXPECT_EQ(no_run.status, 404);
  EXPECT_EQ(no_run.j()["error"], "no run 7 (this dashboard serves 2)");
}

TEST_F(DashboardTest, EpisodeShowsTokensAdvantagesAndTheGroup) {
  DashboardProcess d({run_});
  ASSERT_GT(d.port(), 0) << d.output();
  auto list = http_get(d.port(), "/api/runs/0/rollouts").j();
  ASSERT_EQ(list["iterations"].size(), 2u) << list.dump();
  EXPECT_EQ(list["iterations"][0]["episodes"], 4);
  EXPECT_TRUE(list["iterations"][0]["has_advantages"].get<bool>());

  auto it = http_get(d.port(), "/api/runs/0/rollouts/1").j();
  ASSERT_EQ(it["episodes"].size(), 4u) << it.dump();
  auto e = http_get(d.port(), "/api/runs/0/rollouts/1/episodes/0").j();
  ASSERT_TRUE(e["episode"].is_object()) << e.dump();
  EXPECT_TRUE(e["problems"].empty()) << e["problems"].dump();
  const auto& turns = e["episode"]["turns"];
  ASSERT_FALSE(turns.empty());
  // Token pieces decode (with the run's own tokenizer) to the response.
  std::string joined;
  for (const auto& t : turns[0]["tokens"]) {
    joined += t["t"].get<std::string>();
    EXPECT_TRUE(t["lp"].is_number() && t["h"].is_number()) << t.dump();
  }
  EXPECT_EQ(turns[0]["tokens"].size(), turns[0]["n_generated"].get<size_t>());
  EXPECT_NE(joined.find(turns[0]["response"].get<std::string>().substr(0, 5)), std::string::npos)
      << joined << " vs " << turns[0]["response"];
  // The config has no filter: every episode is in the trained batch, with a
  // turn advantage and EMPG's per-step values that the trainer wrote.
  EXPECT_TRUE(e["episode"]["in_batch"].get<bool>()) << e["episode"].dump();
  EXPECT_TRUE(turns[0]["advantage"].is_number()) << turns[0].dump();
  for (const char* k : {"empg/gain", "empg/bonus", "empg/entropy"})
    EXPECT_TRUE(turns[0]["details"][k].is_number()) << k << " in " << turns[0]["details"].dump();
  for (const auto& row : it["episodes"]) {
    EXPECT_TRUE(row["in_batch"].get<bool>()) << row.dump();
    EXPECT_TRUE(row["advantage_mean"].is_number()) << row.dump();
  }
  // The group: every episode with the same group id, this one included.
  ASSERT_EQ(e["group"].size(), 2u);
  for (const auto& g : e["group"]) EXPECT_EQ(g["group_id"], e["episode"]["group_id"]);
  auto no_it = http_get(d.port(), "/api/runs/0/rollouts/9");
  EXPECT_EQ(no_it.status, 404);
  EXPECT_EQ(no_it.j()["error"], "run '" + run_ + "' has no rollouts of iteration 9");
  auto no_ep = http_get(d.port(), "/api/runs/0/rollouts/1/episodes/99");
  EXPECT_EQ(no_ep.status, 404);
  EXPECT_EQ(no_ep.j()["error"], "iteration 1 has 4 episodes; no episode 99");
}

TEST_F(DashboardTest, PathsOutsideTheRunAreRefused) {
  DashboardProcess d({run_});
  ASSERT_GT(d.port(), 0) << d.output();
  for (const char* p : {"/../../etc/passwd", "/lib/../../../../etc/passwd", "/lib/..%2f..%2f..%2fetc%2fpasswd",
                        "/api/runs/0/../../../etc/passwd", "/api/runs/0/rollouts/..%2f..%2fconfig.yaml",
                        "/%2e%2e/%2e%2e/etc/passwd", "/app.js/../../../etc/passwd"}) {
    auto r = http_get(d.port(), p);
    EXPECT_TRUE(r.status == 404 || r.status == 400) << p << " -> " << r.status;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << p;
    if (r.status == 404) {
      EXPECT_NE(r.body.find("\"error\""), std::string::npos) << p << ": " << r.body;
    }
  }
}

// A copy of the run with torn last lines, as a crash or a live writer leaves
// them: the page gets what could be read and the problems.
TEST_F(DashboardTest, TornFilesOfARunBeingWrittenAreReportedNotFatal) {
  const fs::path copy = fs::path(run_).parent_path() / "torn";
  fs::remove_all(copy);
  fs::copy(run_, copy, fs::copy_options::recursive);
  std::ofstream(copy / "metrics.jsonl", std::ios::app) << "{\"step\": 3, \"rollout/succ";
  std::ofstream(copy / "rollouts" / "iter_2.jsonl", std::ios::app) << "not json\n{\"episode_id\": \"x\", \"tur";
  DashboardProcess d({copy.string()});
  ASSERT_GT(d.port(), 0) << d.output();
  auto m = http_get(d.port(), "/api/runs/0/metrics").j();
  EXPECT_EQ(m["rows"].back()["step"], 2);
  ASSERT_EQ(m["problems"].size(), 1u) << m.dump();
  EXPECT_NE(m["problems"][0].get<std::string>().find("incomplete last line"), std::string::npos);
  auto it = http_get(d.port(), "/api/runs/0/rollouts/2").j();
  EXPECT_EQ(it["episodes"].size(), 4u);
  ASSERT_EQ(it["problems"].size(), 2u) << it.dump();
  EXPECT_NE(it["problems"][0].get<std::string>().find("line 5: not a JSON object"), std::string::npos);
  EXPECT_EQ(http_get(d.port(), "/api/runs/0/rollouts/2/episodes/3").status, 200);
  // The writer finishes the line and starts the next iteration: the same
  // server shows it (the page polls; nothing is cached).
  std::ofstream(copy / "metrics.jsonl", std::ios::app) << "ess_rate\": 0.5}\n";
  fs::copy_file(copy / "rollouts" / "iter_1.jsonl", copy / "rollouts" / "iter_3.jsonl");
  m = http_get(d.port(), "/api/runs/0/metrics").j();
  EXPECT_TRUE(m["problems"].empty()) << m.dump();
  EXPECT_EQ(m["rows"].back()["step"], 3);
  EXPECT_EQ(m["rows"].back()["values"]["rollout/success_rate"], 0.5);
  EXPECT_EQ(http_get(d.port(), "/api/runs/0/rollouts").j()["iterations"].size(), 3u);
  EXPECT_EQ(http_get(d.port(), "/api/runs/0/rollouts/3").j()["episodes"].size(), 4u);
  fs::remove_all(copy);
}

TEST_F(DashboardTest, WithoutItsTokenizerARunStillShowsTokenValues) {
  const fs::path copy = fs::path(run_).parent_path() / "no_tokenizer";
  fs::remove_all(copy);
  fs::copy(run_, copy, fs::copy_options::recursive);
  fs::remove_all(copy / "tokenizer");
  DashboardProcess d({copy.string()});
  ASSERT_GT(d.port(), 0) << d.output();
  auto e = http_get(d.port(), "/api/runs/0/rollouts/1/episodes/0").j();
  ASSERT_EQ(e["problems"].size(), 1u) << e.dump();
  EXPECT_NE(e["problems"][0].get<std::string>().find("token texts unavailable"), std::string::npos);
  const auto& tok = e["episode"]["turns"][0]["tokens"][0];
  EXPECT_EQ(tok["t"].get<std::string>()[0], '#') << tok.dump();
  EXPECT_TRUE(tok["lp"].is_number());
  fs::remove_all(copy);
}

// Headless Chromium opens the deep link of an episode and the curves; the
// rendered DOM must hold the turns, coloured token spans and a chart per
// metric. The screenshot is left in the build directory.
TEST_F(DashboardTest, HeadlessChromiumRendersCurvesAndAnEpisode) {
  std::string browser;
  for (const char* b : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(b)) browser = b;
  if (browser.empty()) GTEST_SKIP() << "no Chromium (apt-get install chromium) to render the page";
  DashboardProcess d({run_});
  ASSERT_GT(d.port(), 0) << d.output();
  const std::string base = "http://127.0.0.1:" + std::to_string(d.port()) + "/";
  const std::string flags = " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                            (fs::temp_directory_path() / ("agentrl_chromium_" + std::to_string(::getpid()))).string() +
                            " --virtual-time-budget=15000 --window-size=1280,1600";
  auto dump = [&](const std::string& hash) {
    testing::CommandResult r;
    const std::string cmd = browser + flags + " --dump-dom '" + base + hash + "' 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[65536];
    for (size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
    r.exit_code = p ? ::pclose(p) : -1;
    return r;
  };
  auto probe = dump("#summary");
  if (probe.output.find("<body") == std::string::npos)
    GTEST_SKIP() << "Chromium cannot run here (exit " << probe.exit_code << ")";
  EXPECT_NE(probe.output.find("data-ready=\"1\""), std::string::npos) << probe.output.substr(0, 2000);
  EXPECT_NE(probe.output.find("agentrl train"), std::string::npos);  // the reproduce command

  auto ep = dump("#trajectories/run=0/iter=1/episode=0");
  EXPECT_NE(ep.output.find("data-ready=\"1\""), std::string::npos);
  EXPECT_NE(ep.output.find("class=\"turn"), std::string::npos) << ep.output.substr(0, 3000);
  EXPECT_NE(ep.output.find("class=\"tok"), std::string::npos);
  EXPECT_NE(ep.output.find("data-lp=\""), std::string::npos);
  EXPECT_NE(ep.output.find("episode-row"), std::string::npos);

  auto curves = dump("#curves");
  EXPECT_NE(curves.output.find("data-key=\"rollout/success_rate\""), std::string::npos)
      << curves.output.substr(0, 3000);
  EXPECT_NE(curves.output.find("data-key=\"empg/g_mean\""), std::string::npos);
  if (fs::exists("/usr/share/javascript/dygraphs/dygraph.min.js")) {
    EXPECT_NE(curves.output.find("dygraph"), std::string::npos);  // charts drawn, not the fallback note
  }
  const std::string shot = std::string(AGENTRL_BINARY_DIR) + "/dashboard_screenshot.png";
  std::system((browser + flags + " --screenshot=" + shot + " '" + base + "#trajectories/run=0/iter=1/episode=0' >/dev/null 2>&1").c_str());
  EXPECT_TRUE(fs::exists(shot));
}

}  // namespace
}  // namespace agentrl
