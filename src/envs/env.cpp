#include "agentrl/envs/env.h"

#include <algorithm>
#include <random>

#include "agentrl/core/rng.h"
#include "agentrl/core/strings.h"

namespace agentrl::envs {

std::vector<Task> TaskSource::ordered(const std::string& split, uint64_t seed) const {
  const size_t n = size(split);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  // Fisher-Yates with agentrl's portable generator, so the order is the same
  // on every platform and standard library.
  Rng rng(seed);
  for (size_t i = n; i > 1; --i) {
    size_t j = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(i) - 1));
    std::swap(order[i - 1], order[j]);
  }
  std::vector<Task> out;
  out.reserve(n);
  for (size_t i : order) out.push_back(get(split, i));
  return out;
}

using strings::trim;

std::optional<std::string> Env::extract_action(const std::string& response) const {
  const std::string open = "<action>", close = "</action>";
  size_t start = response.rfind(open);
  if (start == std::string::npos) return std::nullopt;
  size_t body = start + open.size();
  size_t end = response.find(close, body);
  if (end == std::string::npos) return std::nullopt;
  std::string action = trim(response.substr(body, end - body));
  if (action.empty()) return std::nullopt;
  return action;
}

}  // namespace agentrl::envs
