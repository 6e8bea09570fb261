// Response -> env action projections of published protocols, as pure string
// functions (no env state). The agent loop picks one with
// `rollout.projection` (rollout/rollout_config.h); `env` (the default) is the
// env's own extract_action.
//
// verl-agent's text-env projection (agent_system/environments/env_package/
// {alfworld,webshop}/projection.py, verl-agent at d0b9724), reproduced in its
// observable behaviour:
//   - the whole response is lower-cased as Python's lower() does
//     (envs/text_case.h: every letter, not only ASCII);
//   - the action is the text between the FIRST "<action>" and the FIRST
//     "</action>", stripped; when "</action>" comes first the slice is empty
//     (and still counts as found);
//   - without either tag the response is invalid and the env still receives
//     its last `fallback_chars` characters (code points), lower-cased (30 in
//     the ALFWorld projection, 20 in the WebShop one);
//   - the response is invalid unless it contains both "<think>" and
//     "</think>" (anywhere, case-sensitive) and no CJK unified ideograph
//     (U+4E00..U+9FFF).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>

namespace agentrl::envs {

struct Projection {
  std::string action;  // what the env receives
  bool valid = false;  // the response has the protocol's format
};

Projection verl_agent_projection(const std::string& response, size_t fallback_chars = 30);

// True when the UTF-8 text holds a code point in U+4E00..U+9FFF.
bool has_cjk_unified_ideograph(const std::string& utf8);

// The last n code points of UTF-8 text (all of it when shorter).
std::string last_code_points(const std::string& utf8, size_t n);

}  // namespace agentrl::envs
