#include "agentrl/rollout/generator.h"

namespace agentrl::rollout {
const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kEos: return "eos";
    case FinishReason::kStopToken: return "stop_token";
    case FinishReason::kStopString: return "stop_string";
    case FinishReason::kLength: return "length";
    case FinishReason::kContextLimit: return "context_limit";
    case FinishReason::kAborted: return "aborted";
  }
  return "unknown";
}
}  // namespace agentrl::rollout
