// Registry of environments by name.
//
// Each env folder registers itself from a static initialiser:
//
//   AGENTRL_REGISTER_ENV(alfworld, AlfworldConfig, "ALFWorld household tasks",
//                        [](const AlfworldConfig& c) { return std::make_shared<AlfworldSuite>(c); });
//
// which also registers its config section (top-level YAML key = env name)
// with the config system. The trainer creates the suite with
// make_env_suite(name, sections).
//
// Thread-safety: registration happens during static initialisation; lookups
// are safe to call concurrently afterwards.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agentrl/core/config.h"
#include "agentrl/envs/env.h"

namespace agentrl::envs {

struct EnvRegistration {
  std::string name;
  std::string doc;
  // Builds the suite from the env's config section (the registered type).
  std::function<std::shared_ptr<EnvSuite>(const config::Section&)> make_suite;
};

void register_env(EnvRegistration reg);
std::vector<std::string> registered_envs();
// Throws ConfigError naming the unknown env and listing the registered ones.
std::shared_ptr<EnvSuite> make_env_suite(const std::string& name, const config::ExtensionSections& sections);

template <class Config>
struct EnvRegistrar {
  EnvRegistrar(const char* name, const char* doc,
               std::function<std::shared_ptr<EnvSuite>(const Config&)> make) {
    config::register_section({name, doc, [] { return std::make_unique<config::TypedSection<Config>>(); }, ""});
    register_env({name, doc, [make, name = std::string(name)](const config::Section& s) {
                    auto* typed = dynamic_cast<const config::TypedSection<Config>*>(&s);
                    if (typed == nullptr) throw std::logic_error("env config type mismatch for " + name);
                    return make(typed->value);
                  }});
  }
};

#define AGENTRL_REGISTER_ENV(NAME, CONFIG, DOC, MAKE) \
  static ::agentrl::envs::EnvRegistrar<CONFIG> agentrl_env_registrar_##NAME(#NAME, DOC, MAKE)

}  // namespace agentrl::envs
