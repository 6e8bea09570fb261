// Real data beside the project (../shared/data, AGENTRL_SHARED_DATA_DIR):
// present on development machines and in CI, absent on a user's machine.
//
// REQUIRE_SHARED_DATA(path) skips the test only when the whole data folder is
// absent. Where the folder is present, a missing `path` fails the test (the
// data moved or the test names a wrong file): a real-data test never turns
// green by skipping on a machine that has the data.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#define REQUIRE_SHARED_DATA(path)                                                                   \
  do {                                                                                              \
    const std::string agentrl_required_path_ = (path);                                              \
    if (!std::filesystem::exists(agentrl_required_path_)) {                                         \
      if (std::filesystem::exists(AGENTRL_SHARED_DATA_DIR))                                         \
        FAIL() << "real data folder " << AGENTRL_SHARED_DATA_DIR << " is present but lacks "        \
               << agentrl_required_path_;                                                           \
      GTEST_SKIP() << "real data absent (" << AGENTRL_SHARED_DATA_DIR << "): " << agentrl_required_path_; \
    }                                                                                               \
  } while (0)
