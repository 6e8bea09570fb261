// release_intra_op_team (agentrl/model/intra_op_team.h): it frees the calling
// thread's OpenMP team, and the next parallel region on that thread splits
// its work over as many threads as before (a new team, the same settings).
#include "agentrl/model/intra_op_team.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>

namespace {

// The distinct threads an at::parallel_for of 2 items of grain 1 runs on.
size_t threads_of_a_parallel_for() {
  std::mutex mu;
  std::set<std::thread::id> ids;
  at::parallel_for(0, 64, 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> g(mu);
    ids.insert(std::this_thread::get_id());
  });
  return ids.size();
}

}  // namespace

// Two intra-op threads for one test (a team to free even where the test
// runner gives a process one thread), the earlier count back after it.
class IntraOpTeam : public ::testing::Test {
 protected:
  void SetUp() override {
    threads_ = at::get_num_threads();
    at::set_num_threads(2);
  }
  void TearDown() override { at::set_num_threads(threads_); }
  int threads_ = 1;
};

TEST_F(IntraOpTeam, ReleasedTeamIsRebuiltWithTheSameThreadCount) {
  const size_t before = threads_of_a_parallel_for();
#ifdef _OPENMP
  EXPECT_EQ(before, 2u) << "OpenMP build, 2 intra-op threads: two threads share 64 items";
  EXPECT_TRUE(agentrl::model::release_intra_op_team());
  EXPECT_TRUE(agentrl::model::release_intra_op_team()) << "again, with no team: nothing to do, not an error";
#endif
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_EQ(threads_of_a_parallel_for(), before);
}

// Inside a parallel region of a team it is a no-op that says so.
TEST_F(IntraOpTeam, RefusesInsideAParallelRegion) {
  bool inside = true;
  at::parallel_for(0, 2, 1, [&](int64_t b, int64_t) {
    if (b == 0 && at::in_parallel_region()) inside = agentrl::model::release_intra_op_team();
  });
  EXPECT_FALSE(inside);
}
