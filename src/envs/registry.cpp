#include "agentrl/envs/registry.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "agentrl/core/error.h"

namespace agentrl::envs {
namespace {
std::map<std::string, EnvRegistration>& table() {
  static std::map<std::string, EnvRegistration> t;
  return t;
}
std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void register_env(EnvRegistration reg) {
  std::lock_guard<std::mutex> lock(table_mutex());
  auto name = reg.name;
  if (!table().emplace(name, std::move(reg)).second)
    throw std::logic_error("environment registered twice: " + name);
}

std::vector<std::string> registered_envs() {
  std::lock_guard<std::mutex> lock(table_mutex());
  std::vector<std::string> names;
  for (auto& [name, reg] : table()) names.push_back(name);
  return names;
}

std::shared_ptr<EnvSuite> make_env_suite(const std::string& name, const config::ExtensionSections& sections) {
  EnvRegistration reg;
  {
    std::lock_guard<std::mutex> lock(table_mutex());
    auto it = table().find(name);
    if (it == table().end()) {
      std::string known;
      for (auto& [n, r] : table()) known += (known.empty() ? "" : ", ") + n;
      throw ConfigError("unknown environment 'env.name: " + name + "'; registered environments: " + known);
    }
    reg = it->second;
  }
  return reg.make_suite(sections.get(name));
}

}  // namespace agentrl::envs
