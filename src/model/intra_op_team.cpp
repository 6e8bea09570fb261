#include "agentrl/model/intra_op_team.h"

#if defined(_OPENMP)
#include <omp.h>
// omp_pause_resource_all is OpenMP 5.0; GCC declares it from GCC 10 on while
// still reporting OpenMP 4.5 in _OPENMP.
#if _OPENMP >= 201811 || (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10)
#define AGENTRL_HAVE_OMP_PAUSE 1
#endif
#endif

namespace agentrl::model {

bool release_intra_op_team() {
#ifdef AGENTRL_HAVE_OMP_PAUSE
  if (omp_in_parallel()) return false;
  // Soft pause: the runtime frees the threads and keeps its settings (the
  // thread count at::set_num_threads gave), so the next region rebuilds the
  // team as it was.
  return omp_pause_resource_all(omp_pause_soft) == 0;
#else
  return false;
#endif
}

}  // namespace agentrl::model
