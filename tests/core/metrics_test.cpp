#include "agentrl/core/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "agentrl/core/crc32c.h"
#include "agentrl/core/error.h"
#include "agentrl/core/fs.h"
#include "agentrl/core/tensorboard_reader.h"
#include "core/test_util.h"

namespace agentrl {
namespace {
using ::testing::HasSubstr;

std::vector<nlohmann::json> jsonl_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

// ---- CRC-32C ----------------------------------------------------------------

TEST(Crc32c, KnownTestVectors) {
  // Check value of CRC-32C (Castagnoli) from the CRC catalogue.
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0x00000000u);
  // RFC 3720 B.4: 32 bytes of zeros -> 0x8A9136AA, 32 bytes of 0xFF -> 0x62A8AB43.
  const std::string zeros(32, '\0'), ones(32, '\xff');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
}

TEST(Crc32c, IncrementalEqualsOneShot) {
  EXPECT_EQ(crc32c("6789", 4, crc32c("12345", 5)), 0xE3069283u);
}

TEST(Crc32c, MaskIsRotateRight15PlusConstant) {
  const uint32_t c = 0xE3069283u;
  EXPECT_EQ(masked_crc32c("123456789", 9), ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

TEST(TfRecord, FrameLayout) {
  const std::string f = tfrecord_frame("abc");
  ASSERT_EQ(f.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(f.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(f.substr(12, 3), "abc");
}

// ---- console ------------------------------------------------------------------

TEST(ConsoleSink, CompactLineWithSelectedKeysInGivenOrder) {
  const Scalars s = {{"loss", 0.031234}, {"reward", 0.5}, {"other", 7}};
  EXPECT_EQ(format_metrics_line(12, s, {"reward", "loss", "missing"}), "step 12 | reward 0.5 | loss 0.03123");
  EXPECT_EQ(format_metrics_line(3, {{"b", 2}, {"a", 1e-7}}), "step 3 | a 1e-07 | b 2");
}

TEST(ConsoleSink, WritesOneLinePerStep) {
  testing::ScratchDir dir;
  const std::string p = dir.file("console.txt");
  std::FILE* f = std::fopen(p.c_str(), "w");
  ConsoleSink sink({}, f);
  sink.write(1, 0, {{"x", 1}});
  sink.write(2, 0, {{"x", 2}});
  std::fclose(f);
  EXPECT_EQ(read_file(p), "step 1 | x 1\nstep 2 | x 2\n");
}

// ---- JSONL --------------------------------------------------------------------

TEST(JsonlSink, OneParsableObjectPerStepWithStepWallTimeAndScalars) {
  testing::ScratchDir dir;
  const std::string p = dir.file("metrics.jsonl");
  {
    JsonlSink sink(p);
    sink.write(1, 100.5, {{"loss", 0.25}, {"reward/mean", -1.5}});
    sink.write(2, 101.0, {{"loss", 0.125}});
  }
  const auto lines = jsonl_lines(p);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["step"], 1);
  EXPECT_EQ(lines[0]["wall_time"], 100.5);
  EXPECT_EQ(lines[0]["loss"], 0.25);
  EXPECT_EQ(lines[0]["reward/mean"], -1.5);
  EXPECT_EQ(lines[1]["step"], 2);
  EXPECT_EQ(lines[1]["loss"], 0.125);
  EXPECT_THAT(read_file(p), ::testing::StartsWith("{\"step\":1,\"wall_time\":100.5,"));
}

TEST(JsonlSink, NonFiniteValuesBecomeNull) {
  testing::ScratchDir dir;
  const std::string p = dir.file("metrics.jsonl");
  { JsonlSink(p).write(1, 0, {{"a", std::nan("")}, {"b", INFINITY}}); }
  const auto lines = jsonl_lines(p);
  EXPECT_TRUE(lines[0]["a"].is_null());
  EXPECT_TRUE(lines[0]["b"].is_null());
}

TEST(JsonlSink, ReopenAppends) {
  testing::ScratchDir dir;
  const std::string p = dir.file("metrics.jsonl");
  { JsonlSink(p).write(1, 0, {{"x", 1}}); }
  { JsonlSink(p).write(2, 0, {{"x", 2}}); }
  EXPECT_EQ(jsonl_lines(p).size(), 2u);
}

TEST(JsonlSink, ResumeTruncatesStepsAfterCheckpoint) {
  testing::ScratchDir dir;
  const std::string p = dir.file("metrics.jsonl");
  {
    JsonlSink sink(p);
    for (int s = 1; s <= 5; ++s) sink.write(s, 0, {{"x", s * 1.0}});
  }
  {
    JsonlSink resumed(p, /*truncate_after_step=*/3);
    resumed.write(4, 0, {{"x", 40}});
  }
  const auto lines = jsonl_lines(p);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2]["step"], 3);
  EXPECT_EQ(lines[3]["step"], 4);
  EXPECT_EQ(lines[3]["x"], 40.0);
}

TEST(JsonlSink, TornLastLineDoesNotCorruptNextRecord) {
  testing::ScratchDir dir;
  const std::string p = dir.file("metrics.jsonl");
  write_file_atomic(p, "{\"step\":1,\"wall_time\":0,\"x\":1}\n{\"step\":2,\"wa");
  { JsonlSink(p, 1).write(2, 0, {{"x", 2}}); }
  const auto lines = jsonl_lines(p);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["step"], 2);
}

TEST(JsonlSink, ReservedKeyIsRejected) {
  testing::ScratchDir dir;
  JsonlSink sink(dir.file("m.jsonl"));
  EXPECT_THROW(sink.write(1, 0, {{"step", 1}}), Error);
}

TEST(JsonlSink, UnwritablePathIsIoError) {
  try {
    JsonlSink sink("/nonexistent_agentrl_dir/m.jsonl");
    FAIL() << "opened";
  } catch (const IoError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("cannot open metrics file '/nonexistent_agentrl_dir/m.jsonl'"));
  }
}

// ---- TensorBoard ---------------------------------------------------------------

TEST(TensorBoardSink, FileDecodesBackToTagsValuesAndSteps) {
  testing::ScratchDir dir;
  std::string path;
  {
    TensorBoardSink sink(dir.file("tb"));
    path = sink.path();
    sink.write(10, 1000.25, {{"loss", 0.5}, {"reward/mean", -2}});
    sink.write(20, 1001.0, {{"loss", 0.25}});
  }
  EXPECT_THAT(std::filesystem::path(path).filename().string(), ::testing::StartsWith("events.out.tfevents."));
  EXPECT_EQ(find_tensorboard_event_files(dir.file("tb")), std::vector<std::string>{path});
  const TensorBoardEvents ev = read_tensorboard_events(path);
  EXPECT_EQ(ev.file_version, "brain.Event:2");
  EXPECT_EQ(ev.num_events, 3);
  ASSERT_EQ(ev.scalars.size(), 3u);
  EXPECT_EQ(ev.scalars[0].tag, "loss");
  EXPECT_EQ(ev.scalars[0].value, 0.5f);
  EXPECT_EQ(ev.scalars[0].step, 10);
  EXPECT_EQ(ev.scalars[0].wall_time, 1000.25);
  EXPECT_EQ(ev.scalars[1].tag, "reward/mean");
  EXPECT_EQ(ev.scalars[1].value, -2.0f);
  EXPECT_EQ(ev.scalars[2].step, 20);
  EXPECT_EQ(ev.scalars[2].value, 0.25f);
}

// Hand-encoded Event bytes (protobuf wire format) pin the field numbers to
// TensorFlow's event.proto: step = field 2 (varint), summary = field 5,
// Summary.value = 1, Value.tag = 1, Value.simple_value = 2 (fixed32).
TEST(TensorBoardSink, WireFormatMatchesTensorflowFieldNumbers) {
  testing::ScratchDir dir;
  std::string path;
  {
    TensorBoardSink sink(dir.path());
    path = sink.path();
    sink.write(3, 0.0, {{"a", 1.0}});
  }
  const std::string bytes = read_file(path);
  // Skip the first record (file_version).
  const uint64_t len0 = static_cast<unsigned char>(bytes[0]);
  const size_t off = 12 + len0 + 4;
  const uint64_t len1 = static_cast<unsigned char>(bytes[off]);
  const std::string data = bytes.substr(off + 12, len1);
  // wall_time 0.0 is the proto3 default, so it is not on the wire.
  // 0x10 03: step=3. 0x2a 0a: summary, 10 bytes. 0x0a 08: value, 8 bytes.
  // 0x0a 01 'a': tag (3 bytes). 0x15 + float 1.0 little endian 00 00 80 3f (5 bytes).
  const std::string expected("\x10\x03\x2a\x0a\x0a\x08\x0a\x01" "a" "\x15\x00\x00\x80\x3f", 14);
  EXPECT_EQ(data, expected);
}

TEST(TensorBoardReader, CorruptedDataIsFormatErrorNamingRecord) {
  testing::ScratchDir dir;
  std::string path;
  {
    TensorBoardSink sink(dir.path());
    path = sink.path();
    sink.write(1, 0, {{"x", 1}});
  }
  std::string bytes = read_file(path);
  bytes[bytes.size() - 6] ^= 0x01;  // inside the last record's data
  write_file_atomic(path, bytes);
  try {
    read_tensorboard_events(path);
    FAIL() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(path + ": record 1 at byte "));
    EXPECT_THAT(std::string(e.what()), HasSubstr("data CRC mismatch"));
  }
}

TEST(TensorBoardReader, TruncatedFileIsFormatError) {
  testing::ScratchDir dir;
  std::string path;
  {
    TensorBoardSink sink(dir.path());
    path = sink.path();
    sink.write(1, 0, {{"x", 1}});
  }
  std::string bytes = read_file(path);
  write_file_atomic(path, bytes.substr(0, bytes.size() - 3));
  EXPECT_THROW(read_tensorboard_events(path), FormatError);
}

TEST(TensorBoardSink, TwoSinksInOneDirectoryGetDistinctFiles) {
  testing::ScratchDir dir;
  TensorBoardSink a(dir.path());
  TensorBoardSink b(dir.path());
  EXPECT_NE(a.path(), b.path());
}

// ---- MetricsLogger -------------------------------------------------------------

TEST(MetricsLogger, FansOutToAllSinksFromManyThreads) {
  testing::ScratchDir dir;
  MetricsLogger logger;
  logger.add_sink(std::make_unique<JsonlSink>(dir.file("m.jsonl")));
  auto tb = std::make_unique<TensorBoardSink>(dir.file("tb"));
  const std::string tb_path = tb->path();
  logger.add_sink(std::move(tb));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) logger.log(t * 100 + i, {{"v", 1.0 * i}});
    });
  for (auto& th : threads) th.join();
  logger.flush();
  EXPECT_EQ(jsonl_lines(dir.file("m.jsonl")).size(), 100u);
  EXPECT_EQ(read_tensorboard_events(tb_path).scalars.size(), 100u);
}

}  // namespace
}  // namespace agentrl
