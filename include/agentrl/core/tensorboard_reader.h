// Reads TensorBoard event files (TFRecord framing + Event protos) back into
// scalars. Used by the tests of TensorBoardSink and by tools that compare
// runs. Every record's length and data CRCs are verified.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace agentrl {

struct TensorBoardScalar {
  int64_t step = 0;
  double wall_time = 0;
  std::string tag;
  float value = 0;
};

struct TensorBoardEvents {
  std::string file_version;  // from the first event ("brain.Event:2")
  int64_t num_events = 0;    // all records, file_version event included
  std::vector<TensorBoardScalar> scalars;  // in file order
};

// Throws IoError when the file cannot be read and FormatError
// "PATH: record N at byte OFFSET: <what>" for truncated records, CRC
// mismatches or undecodable protos.
TensorBoardEvents read_tensorboard_events(const std::string& path);

// The event files (events.out.tfevents.*) in a directory, sorted by name.
std::vector<std::string> find_tensorboard_event_files(const std::string& dir);

}  // namespace agentrl
