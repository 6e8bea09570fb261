// Error types used across agentrl.
//
// Every user-facing failure throws a subclass of agentrl::Error whose message
// names the offending file / key / line / value and what was expected. The CLI
// catches Error at the top level, prints what() and exits with exit_code():
// 2 for usage and configuration errors, 1 for runtime failures. Code never
// calls abort() for bad input and never silently falls back to a default.
//
// Thread-safety: these are plain value types.
#pragma once

#include <stdexcept>
#include <string>

namespace agentrl {

// Base of all agentrl errors. Runtime failure (exit code 1) unless a subclass
// says otherwise.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  virtual int exit_code() const { return 1; }
};

// Bad configuration: unknown key, wrong type, out-of-range value, missing
// required file named by the config. Exit code 2.
class ConfigError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 2; }
};

// Bad command-line usage. Exit code 2.
class UsageError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 2; }
};

// A data or model file that cannot be read or is malformed (truncated
// safetensors, bad JSONL line, broken PDDL). The message names the file and,
// where it applies, the line. Exit code 1.
class FormatError : public Error {
 public:
  using Error::Error;
};

// Operating-system level failure (open/write/rename/fork failed). Exit code 1.
class IoError : public Error {
 public:
  using Error::Error;
};

}  // namespace agentrl
