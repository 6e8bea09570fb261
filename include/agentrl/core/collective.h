// Cross-process reductions of plain numbers, used by batch-global statistics
// (EMPG's entropy min/max and mean scale, REINFORCE++ whitening, metrics).
//
// LocalCollective is the single-process identity. dist/ provides a c10d
// implementation so that a multi-rank computation equals the single-process
// one. Torch-free interface.
//
// Thread-safety: collectives must be called by all ranks in the same order,
// from one thread per rank.
#pragma once

#include <vector>

namespace agentrl {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // In-place element-wise reductions across ranks.
  virtual void all_reduce_sum(std::vector<double>& values) = 0;
  virtual void all_reduce_min(std::vector<double>& values) = 0;
  virtual void all_reduce_max(std::vector<double>& values) = 0;
};

class LocalCollective final : public Collective {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  void all_reduce_sum(std::vector<double>&) override {}
  void all_reduce_min(std::vector<double>&) override {}
  void all_reduce_max(std::vector<double>&) override {}
};

// Process-wide default (LocalCollective unless dist installs another).
Collective& local_collective();

}  // namespace agentrl
