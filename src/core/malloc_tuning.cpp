#include "agentrl/core/malloc_tuning.h"

#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace agentrl {

bool tune_malloc_for_tensor_reuse() {
  const char* env = std::getenv("AGENTRL_MALLOC_TUNING");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
#if defined(__GLIBC__)
  // mallopt takes an int: 2 GiB - 1 is the largest value for both. A call
  // glibc refuses (returns 0) leaves its default: correct, only slower.
  constexpr int kLargest = std::numeric_limits<int>::max();
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, kLargest) != 0;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, kLargest) != 0;
  return mmap_ok && trim_ok;
#else
  return false;
#endif
}

}  // namespace agentrl
