#include "agentrl/core/collective.h"

namespace agentrl {
Collective& local_collective() {
  static LocalCollective c;
  return c;
}
}  // namespace agentrl
