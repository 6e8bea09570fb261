// Internal to src/core: value formatting shared by the config writer,
// describe() and error messages.
#pragma once

#include <string>

#include "agentrl/core/config.h"

namespace agentrl::config::detail {

// Shortest decimal text that parses back to exactly `x` (YAML spelling for
// inf/nan), e.g. 1e-06, 0.1, 3.
std::string format_double(double x);
// "a number in (0, 1]" / "an integer >= 1" ...
std::string describe_range(const Range& r, bool integer);
// A YAML scalar for `s`: plain when unambiguous, else double-quoted.
std::string yaml_quote(const std::string& s);

}  // namespace agentrl::config::detail
