#include "agentrl/rollout/rollout_pool.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "agentrl/core/rng.h"
#include "agentrl/model/intra_op_team.h"

namespace agentrl::rollout {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// An env call running on its own thread. The caller waits with a deadline:
// a call that finished in time is joined; one that overran is detached and
// abandoned (it keeps this state alive until it finishes), so a hanging env
// never blocks the rollout. Finished threads are joined, never detached:
// glibc can crash in pthread_detach when the thread exits at that moment
// (seen once in ~10^5 env calls of a quickstart run).
struct Outcome {
  bool ok = false;
  std::string error;
};
struct DetachedCall {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  Outcome outcome;
  double seconds = 0.0;  // how long fn ran
  std::thread thread;    // touched by the caller only

  ~DetachedCall() {
    if (thread.joinable()) thread.detach();  // never waited for (an exception unwound the caller)
  }

  static std::shared_ptr<DetachedCall> start(std::function<void()> fn) {
    auto call = std::make_shared<DetachedCall>();
    call->thread = std::thread([call, fn = std::move(fn)] {
      const auto t0 = Clock::now();
      Outcome o;
      try {
        fn();
        o.ok = true;
      } catch (const std::exception& e) {
        o.error = e.what();
      } catch (...) {
        o.error = "unknown exception";
      }
      std::lock_guard<std::mutex> lock(call->mu);
      call->outcome = std::move(o);
      call->seconds = seconds_since(t0);
      call->finished = true;
      call->cv.notify_all();
    });
    return call;
  }
  // False when `deadline` passed first (the thread is then abandoned).
  bool wait_until(Clock::time_point deadline) {
    bool done;
    {
      std::unique_lock<std::mutex> lock(mu);
      done = cv.wait_until(lock, deadline, [this] { return finished; });
    }
    if (done) thread.join();
    else thread.detach();
    return done;
  }
};

constexpr const char* kTimeoutError = "episode exceeded its wall-clock timeout";

Outcome run_until(std::function<void()> fn, Clock::time_point deadline, bool* timed_out) {
  auto call = DetachedCall::start(std::move(fn));
  *timed_out = !call->wait_until(deadline);
  if (*timed_out) return {false, kTimeoutError};
  std::lock_guard<std::mutex> lock(call->mu);
  return call->outcome;
}

void accumulate(const Trajectory& t, RolloutStats& s) {
  s.episodes += 1;
  if (t.failed) {
    s.failed += 1;
    return;
  }
  s.turns += static_cast<int64_t>(t.turns.size());
  for (const auto& turn : t.turns) {
    s.invalid_turns += turn.invalid_action;
    s.void_turns += turn.void_turn;
    s.generated_tokens += static_cast<int64_t>(turn.generated_tokens.size());
  }
  s.successes += t.success;
  s.reward_sum += t.reward;
}

Trajectory failed_trajectory(const EpisodeSpec& spec, const std::string& error) {
  Trajectory t;
  t.group_id = spec.group_id;
  t.sample_index = spec.sample_index;
  t.episode_id = spec.episode_id;
  t.task_id = spec.task.id;
  t.task_type = spec.task.task_type;
  t.failed = true;
  t.error = error;
  return t;
}

}  // namespace

std::map<std::string, double> RolloutStats::scalars(const std::string& p) const {
  const double ok = static_cast<double>(episodes - failed);
  const double n_turns = static_cast<double>(std::max<int64_t>(turns, 1));
  std::map<std::string, double> m;
  m[p + "episodes"] = static_cast<double>(episodes);
  m[p + "failed_episodes"] = static_cast<double>(failed);
  m[p + "timed_out_episodes"] = static_cast<double>(timed_out);
  m[p + "success_rate"] = ok > 0 ? successes / ok : 0.0;
  m[p + "reward_mean"] = ok > 0 ? reward_sum / ok : 0.0;
  m[p + "turns_per_episode"] = ok > 0 ? turns / ok : 0.0;
  m[p + "valid_action_ratio"] = turns > 0 ? 1.0 - invalid_turns / n_turns : 0.0;
  m[p + "void_turn_rate"] = turns > 0 ? void_turns / n_turns : 0.0;
  m[p + "generated_tokens"] = static_cast<double>(generated_tokens);
  m[p + "tokens_per_s"] = wall_seconds > 0 ? generated_tokens / wall_seconds : 0.0;
  m[p + "wall_s"] = wall_seconds;
  m[p + "generation_s"] = generation_seconds;
  m[p + "env_s"] = env_seconds;
  return m;
}

RolloutStats& RolloutStats::operator+=(const RolloutStats& o) {
  episodes += o.episodes;
  failed += o.failed;
  timed_out += o.timed_out;
  turns += o.turns;
  invalid_turns += o.invalid_turns;
  void_turns += o.void_turns;
  generated_tokens += o.generated_tokens;
  successes += o.successes;
  reward_sum += o.reward_sum;
  wall_seconds += o.wall_seconds;
  generation_seconds += o.generation_seconds;
  env_seconds += o.env_seconds;
  return *this;
}

void RolloutStats::all_reduce(Collective& collective) {
  std::vector<double> v{double(episodes), double(failed),     double(timed_out),  double(turns),
                        double(invalid_turns), double(void_turns), double(generated_tokens), double(successes),
                        reward_sum,         generation_seconds, env_seconds};
  collective.all_reduce_sum(v);
  episodes = int64_t(v[0]);
  failed = int64_t(v[1]);
  timed_out = int64_t(v[2]);
  turns = int64_t(v[3]);
  invalid_turns = int64_t(v[4]);
  void_turns = int64_t(v[5]);
  generated_tokens = int64_t(v[6]);
  successes = int64_t(v[7]);
  reward_sum = v[8];
  generation_seconds = v[9] / collective.world_size();
  env_seconds = v[10];
}

RolloutPool::RolloutPool(Generator& generator, std::shared_ptr<const envs::EnvSuite> suite,
                         std::shared_ptr<const AgentContext> ctx)
    : generator_(generator), suite_(std::move(suite)), ctx_(std::move(ctx)) {}

std::vector<Trajectory> RolloutPool::run(const std::vector<EpisodeSpec>& episodes, RolloutStats* stats) {
  // This thread waits while the engine computes: its OpenMP team would make
  // the engine's parallel regions ~6x dearer (intra_op_team.h).
  model::release_intra_op_team();
  RolloutStats local;
  auto t0 = Clock::now();
  auto out = ctx_->rollout.deterministic ? run_lockstep(episodes, local) : run_threaded(episodes, local);
  local.wall_seconds = seconds_since(t0);
  for (const auto& t : out) accumulate(t, local);
  // Episodes are over: their cached KV state can go.
  std::set<std::string> keys;
  for (const auto& e : episodes)
    if (!e.cache_key.empty()) keys.insert(e.cache_key);
  for (const auto& k : keys) generator_.release(k);
  if (stats) *stats = local;
  return out;
}

std::vector<Trajectory> RolloutPool::run_lockstep(const std::vector<EpisodeSpec>& episodes, RolloutStats& stats) {
  // Per-episode state lives in a shared Slot: an env call that overruns the
  // deadline is abandoned on its detached thread, which keeps its Slot alive
  // and never touches anything else.
  struct Slot {
    std::shared_ptr<EpisodeRunner> runner;
    std::optional<GenerationRequest> pending;
    bool finished = false;
  };
  const size_t n = episodes.size();
  std::vector<std::shared_ptr<Slot>> slots(n);
  for (auto& s : slots) s = std::make_shared<Slot>();
  std::vector<Trajectory> out(n);
  // Lock-step couples the episodes' wall clocks (everyone waits for the
  // slowest env call of a turn), so the timeout budgets each episode's own
  // env time: a hung env exhausts only its own budget.
  std::vector<double> env_used(n, 0.0);
  const double budget = ctx_->rollout.episode_timeout_s;
  const size_t width = static_cast<size_t>(std::max<int64_t>(1, ctx_->rollout.concurrency));
  // At most `capacity` episodes are in flight (one cached sequence each);
  // the next one in order starts as soon as one finishes.
  const int64_t max_seqs = generator_.max_sequences();
  const size_t capacity = max_seqs > 0 ? std::min(n, static_cast<size_t>(max_seqs)) : n;
  size_t next = 0, in_flight = 0;
  std::vector<bool> retired(n, false);
  // Episodes still open per cache key: a key's cached state is released once
  // its last episode ends, so finished episodes do not crowd out live ones.
  std::map<std::string, int64_t> open_per_key;
  for (const auto& e : episodes)
    if (!e.cache_key.empty()) open_per_key[e.cache_key] += 1;
  auto retire = [&](size_t i) {
    if (retired[i]) return;
    retired[i] = true;
    --in_flight;
    const auto& key = episodes[i].cache_key;
    if (!key.empty() && --open_per_key[key] == 0) generator_.release(key);
  };

  // Runs work(slot) for the listed episodes, `width` at a time, in parallel.
  auto env_phase = [&](const std::vector<size_t>& ids,
                       const std::function<std::function<void()>(size_t)>& make_work) {
    for (size_t b = 0; b < ids.size(); b += width) {
      const size_t m = std::min(width, ids.size() - b);
      std::vector<std::shared_ptr<DetachedCall>> waits(m);
      const auto phase_start = Clock::now();
      for (size_t j = 0; j < m; ++j) waits[j] = DetachedCall::start(make_work(ids[b + j]));
      for (size_t j = 0; j < m; ++j) {
        const size_t i = ids[b + j];
        const auto deadline = phase_start + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(std::max(0.0, budget - env_used[i])));
        const bool done = waits[j]->wait_until(deadline);
        std::lock_guard<std::mutex> lock(waits[j]->mu);
        if (done && waits[j]->outcome.ok) {
          env_used[i] += waits[j]->seconds;
          continue;
        }
        out[i] = failed_trajectory(episodes[i], done ? waits[j]->outcome.error : kTimeoutError);
        stats.timed_out += !done;
        slots[i] = std::make_shared<Slot>();  // abandon the old slot to its thread
        slots[i]->finished = true;
        retire(i);
      }
    }
  };

  // Starts the next episodes in order while there is room.
  auto admit = [&] {
    std::vector<size_t> ids;
    while (next < n && in_flight < capacity) {
      ids.push_back(next++);
      ++in_flight;
    }
    env_phase(ids, [&](size_t i) -> std::function<void()> {
      auto slot = slots[i];
      auto suite = suite_;
      auto ctx = ctx_;
      EpisodeSpec spec = episodes[i];
      return [slot, suite, ctx, spec] {
        slot->runner = std::make_shared<EpisodeRunner>(suite->make_env(), spec, ctx);
        slot->pending = slot->runner->start();
      };
    });
  };
  // Collects the trajectories of episodes that have no request pending.
  auto collect_finished = [&] {
    for (size_t i = 0; i < next; ++i) {
      Slot& slot = *slots[i];
      if (slot.finished || slot.pending) continue;
      stats.env_seconds += slot.runner->env_seconds();
      out[i] = slot.runner->take_trajectory();
      slot.finished = true;
      retire(i);
    }
  };

  while (true) {
    collect_finished();
    admit();
    collect_finished();  // an episode may end at its start
    std::vector<size_t> active;
    std::vector<GenerationRequest> batch;
    for (size_t i = 0; i < next; ++i) {
      Slot& slot = *slots[i];
      if (slot.finished) continue;
      active.push_back(i);
      batch.push_back(*slot.pending);
    }
    if (active.empty()) {
      if (next < n) continue;
      break;
    }
    auto g0 = Clock::now();
    auto results = generator_.generate_batch(std::move(batch));
    stats.generation_seconds += seconds_since(g0);
    std::vector<size_t> position(n, 0);
    for (size_t k = 0; k < active.size(); ++k) position[active[k]] = k;
    env_phase(active, [&](size_t i) -> std::function<void()> {
      auto slot = slots[i];
      GenerationResult r = std::move(results[position[i]]);
      return [slot, r = std::move(r)] { slot->pending = slot->runner->on_generation(r); };
    });
  }
  return out;
}

std::vector<Trajectory> RolloutPool::run_threaded(const std::vector<EpisodeSpec>& episodes, RolloutStats& stats) {
  const size_t n = episodes.size();
  std::vector<Trajectory> out(n);
  std::mutex stats_mutex;
  const size_t width = static_cast<size_t>(std::max<int64_t>(1, ctx_->rollout.concurrency));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    while (true) {
      size_t i = next.fetch_add(1);
      if (i >= n) return;
      auto result = std::make_shared<Trajectory>();
      auto gen_seconds = std::make_shared<double>(0.0);
      auto env_seconds = std::make_shared<double>(0.0);
      auto spec = episodes[i];
      auto ctx = ctx_;
      auto suite = suite_;
      Generator* gen = &generator_;
      bool timed_out = false;
      auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(ctx_->rollout.episode_timeout_s));
      Outcome o = run_until(
          [=] {
            EpisodeRunner runner(suite->make_env(), spec, ctx);
            auto req = runner.start();
            while (req) {
              auto g0 = Clock::now();
              GenerationResult r = gen->submit(std::move(*req)).get();
              *gen_seconds += seconds_since(g0);
              req = runner.on_generation(r);
            }
            *env_seconds = runner.env_seconds();
            *result = runner.take_trajectory();
          },
          deadline, &timed_out);
      std::lock_guard<std::mutex> lock(stats_mutex);
      if (o.ok) {
        out[i] = std::move(*result);
        stats.generation_seconds += *gen_seconds;
        stats.env_seconds += *env_seconds;
      } else {
        out[i] = failed_trajectory(spec, o.error);
        stats.timed_out += timed_out;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 0; w < std::min(width, n); ++w) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return out;
}

std::vector<EpisodeSpec> make_group_episodes(const std::vector<envs::Task>& tasks, int64_t group_size,
                                             uint64_t seed, int64_t iteration) {
  std::vector<EpisodeSpec> out;
  for (size_t g = 0; g < tasks.size(); ++g) {
    const uint64_t env_seed = mix_seed(mix_seed(seed, static_cast<uint64_t>(iteration)), g);
    for (int64_t s = 0; s < group_size; ++s) {
      EpisodeSpec e;
      e.task = tasks[g];
      e.env_seed = env_seed;
      e.sample_seed = mix_seed(env_seed, static_cast<uint64_t>(s) + 1);
      e.group_id = static_cast<int64_t>(g);
      e.sample_index = s;
      e.episode_id = std::to_string(iteration) + "-" + std::to_string(g) + "-" + std::to_string(s);
      e.cache_key = "it" + std::to_string(iteration) + "-g" + std::to_string(g);
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace agentrl::rollout
