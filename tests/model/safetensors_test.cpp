// Specification of model/safetensors.*: the on-disk format (checked against
// bytes built by hand from the format description), dtype conversion rules,
// sharded indexes and every malformed-header case.
#include "agentrl/model/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agentrl/core/error.h"

namespace agentrl::model {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(::testing::TempDir()) / "st_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  std::string dir_;
};

// 8-byte little-endian length + header + data, as the format spec says.
std::string make_file(const std::string& header, const std::string& data) {
  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + header + data;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Parses `header` + `data` from memory and returns the FormatError message.
std::string parse_error(const std::string& header, const std::string& data) {
  std::string file = make_file(header, data);
  try {
    parse_safetensors_header(reinterpret_cast<const uint8_t*>(file.data()), file.size(), file.size(), "bad.safetensors");
  } catch (const FormatError& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(SafetensorsTest, WriterProducesTheSpecifiedBytes) {
  save_safetensors(path("a.safetensors"), {{"a", torch::tensor({1.0f, -2.0f})}});
  // Header: 54 bytes of JSON padded with 2 spaces to 56; 1.0f = 0x3F800000,
  // -2.0f = 0xC0000000, little-endian.
  std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string expected = make_file(header + "  ", std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8));
  EXPECT_EQ(read_bytes(path("a.safetensors")), expected);
}

TEST_F(SafetensorsTest, ReaderDecodesHandBuiltFileWithMetadata) {
  // Two I32 tensors (7 and [1, 2]) and metadata, laid out by hand.
  std::string header =
      R"({"__metadata__":{"format":"pt"},"x":{"dtype":"I32","shape":[],"data_offsets":[0,4]},)"
      R"("y":{"dtype":"I32","shape":[1,2],"data_offsets":[4,12]}})";
  std::string data("\x07\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00", 12);
  write_bytes(path("h.safetensors"), make_file(header, data));
  auto set = SafetensorsSet::open(path("h.safetensors"));
  EXPECT_EQ(set.names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(set.metadata().at("format"), "pt");
  EXPECT_EQ(set.tensor("x").item<int32_t>(), 7);
  EXPECT_TRUE(torch::equal(set.tensor("y"), torch::tensor({{1, 2}}, torch::kInt32)));
}

TEST_F(SafetensorsTest, F32RoundTripIsExact) {
  torch::Tensor t = torch::randn({3, 5}, torch::TensorOptions().dtype(torch::kFloat32));
  save_safetensors(path("f.safetensors"), {{"w", t}});
  auto set = SafetensorsSet::open(path("f.safetensors"));
  EXPECT_EQ(set.info("w").dtype, StDtype::F32);
  EXPECT_TRUE(torch::equal(set.tensor("w"), t));
}

TEST_F(SafetensorsTest, Bf16SaveRoundsToNearestEvenAndReadsBackExactly) {
  // bf16 keeps 7 mantissa bits. 1 + 2^-8 is a tie between 1 and 1 + 2^-7 and
  // rounds to even (1.0); 1 + 3*2^-9 is nearer 1 + 2^-7; -2.25 and 3.5 are exact.
  torch::Tensor t = torch::tensor({1.0f + 0.00390625f, 1.0f + 3 * 0.001953125f, -2.25f, 3.5f});
  save_safetensors(path("b.safetensors"), {{"w", t}}, {}, torch::kBFloat16);
  auto set = SafetensorsSet::open(path("b.safetensors"));
  EXPECT_EQ(set.info("w").dtype, StDtype::BF16);
  torch::Tensor back = set.tensor("w").to(torch::kFloat32);
  EXPECT_TRUE(torch::equal(back, torch::tensor({1.0f, 1.0078125f, -2.25f, 3.5f})));
  // Raw bits: 1.0 = 0x3F80, 1.0078125 = 0x3F81.
  std::string bytes = read_bytes(path("b.safetensors"));
  EXPECT_EQ(bytes.substr(bytes.size() - 8, 4), std::string("\x80\x3f\x81\x3f", 4));
}

TEST_F(SafetensorsTest, F16SaveRoundsAndReadsBackExactly) {
  // 1/3 in binary16 is 0x3555 = 1365/4096; 65504 is the largest finite value;
  // 2^-24 is the smallest subnormal.
  torch::Tensor t = torch::tensor({1.0f / 3.0f, 65504.0f, 5.9604644775390625e-8f});
  save_safetensors(path("h.safetensors"), {{"w", t}}, {}, torch::kFloat16);
  auto set = SafetensorsSet::open(path("h.safetensors"));
  EXPECT_EQ(set.info("w").dtype, StDtype::F16);
  torch::Tensor back = set.tensor("w").to(torch::kFloat32);
  EXPECT_TRUE(torch::equal(back, torch::tensor({1365.0f / 4096.0f, 65504.0f, 5.9604644775390625e-8f})));
  std::string bytes = read_bytes(path("h.safetensors"));
  EXPECT_EQ(bytes.substr(bytes.size() - 6, 2), std::string("\x55\x35", 2));
}

TEST_F(SafetensorsTest, IntegerAndBoolTensorsKeepTheirDtypeAndValues) {
  torch::Tensor i64 = torch::tensor({int64_t{1} << 40, int64_t{-3}}, torch::kInt64);
  torch::Tensor i32 = torch::tensor({-7, 9}, torch::kInt32);
  torch::Tensor u8 = torch::tensor({0, 255}, torch::kUInt8);
  torch::Tensor b = torch::tensor({true, false, true}, torch::kBool);
  // A bfloat16 target dtype applies to floating tensors only.
  save_safetensors(path("i.safetensors"), {{"i64", i64}, {"i32", i32}, {"u8", u8}, {"b", b}}, {}, torch::kBFloat16);
  auto set = SafetensorsSet::open(path("i.safetensors"));
  EXPECT_EQ(set.info("i64").dtype, StDtype::I64);
  EXPECT_EQ(set.info("b").dtype, StDtype::BOOL);
  EXPECT_TRUE(torch::equal(set.tensor("i64"), i64));
  EXPECT_TRUE(torch::equal(set.tensor("i32"), i32));
  EXPECT_TRUE(torch::equal(set.tensor("u8"), u8));
  EXPECT_TRUE(torch::equal(set.tensor("b"), b));
}

TEST_F(SafetensorsTest, DataIsOrderedByElementSizeSoEveryTensorIsAligned) {
  save_safetensors(path("m.safetensors"), {{"a_u8", torch::ones({3}, torch::kUInt8)},
                                           {"b_f32", torch::ones({2})},
                                           {"c_i64", torch::ones({1}, torch::kInt64)}});
  auto set = SafetensorsSet::open(path("m.safetensors"));
  EXPECT_EQ(set.info("c_i64").begin, 0u);
  EXPECT_EQ(set.info("b_f32").begin, 8u);
  EXPECT_EQ(set.info("a_u8").begin, 16u);
}

TEST_F(SafetensorsTest, TensorViewOutlivesTheSetAndWritesNeverReachTheFile) {
  save_safetensors(path("v.safetensors"), {{"w", torch::arange(4, torch::kFloat32)}});
  torch::Tensor view;
  {
    auto set = SafetensorsSet::open(path("v.safetensors"));
    view = set.tensor("w");
  }
  EXPECT_TRUE(torch::equal(view, torch::arange(4, torch::kFloat32)));  // mapping kept alive
  view.fill_(9.0f);                                                     // copy-on-write page
  auto again = SafetensorsSet::open(path("v.safetensors"));
  EXPECT_TRUE(torch::equal(again.tensor("w"), torch::arange(4, torch::kFloat32)));
}

TEST_F(SafetensorsTest, UnalignedTensorInHandBuiltFileIsReadCorrectly) {
  // Header of 9 bytes puts the data section at offset 17, so an F32 tensor at
  // offset 0 is not 4-byte aligned in memory.
  std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  header += std::string(9 - header.size() % 8, ' ');
  ASSERT_EQ((8 + header.size()) % 4, 1u);
  write_bytes(path("u.safetensors"), make_file(header, std::string("\x00\x00\x80\x3f", 4)));
  auto set = SafetensorsSet::open(path("u.safetensors"));
  EXPECT_EQ(set.tensor("w").item<float>(), 1.0f);
}

TEST_F(SafetensorsTest, OverwriteIsAtomicAndLeavesNoTemporaryFiles) {
  save_safetensors(path("o.safetensors"), {{"w", torch::zeros({2})}});
  save_safetensors(path("o.safetensors"), {{"w", torch::ones({3})}});
  auto set = SafetensorsSet::open(path("o.safetensors"));
  EXPECT_TRUE(torch::equal(set.tensor("w"), torch::ones({3})));
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(SafetensorsTest, WriterRejectsDuplicateNames) {
  try {
    save_safetensors(path("d.safetensors"), {{"w", torch::zeros({1})}, {"w", torch::zeros({1})}});
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tensor name 'w' given twice"));
  }
  EXPECT_FALSE(fs::exists(path("d.safetensors")));
}

// ---- Sharded checkpoints -------------------------------------------------------

TEST_F(SafetensorsTest, ShardedIndexIsReadThroughTheDirectory) {
  save_safetensors(path("model-00001-of-00002.safetensors"), {{"a", torch::ones({2})}});
  save_safetensors(path("model-00002-of-00002.safetensors"), {{"b", torch::full({3}, 2.0f)}});
  write_bytes(path("model.safetensors.index.json"),
              R"({"metadata":{"total_size":20},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
              R"("b":"model-00002-of-00002.safetensors"}})");
  auto set = SafetensorsSet::open(dir_);
  EXPECT_EQ(set.names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(torch::equal(set.tensor("b"), torch::full({3}, 2.0f)));
  EXPECT_THAT(set.file_of("b"), HasSubstr("model-00002-of-00002.safetensors"));
}

TEST_F(SafetensorsTest, IndexNamingATensorItsShardLacksIsAnError) {
  save_safetensors(path("s1.safetensors"), {{"a", torch::ones({2})}});
  write_bytes(path("model.safetensors.index.json"), R"({"weight_map":{"a":"s1.safetensors","zz":"s1.safetensors"}})");
  try {
    SafetensorsSet::open(dir_);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("model.safetensors.index.json"));
    EXPECT_THAT(e.what(), HasSubstr("tensor 'zz'"));
    EXPECT_THAT(e.what(), HasSubstr("s1.safetensors, which has no such tensor"));
  }
}

TEST_F(SafetensorsTest, IndexShardPathOutsideTheDirectoryIsRejected) {
  write_bytes(path("model.safetensors.index.json"), R"({"weight_map":{"a":"../evil.safetensors"}})");
  try {
    SafetensorsSet::open(dir_);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'../evil.safetensors' is not a file name in the index's directory"));
  }
}

TEST_F(SafetensorsTest, TensorInTwoShardsIsRejected) {
  save_safetensors(path("s1.safetensors"), {{"a", torch::ones({2})}});
  save_safetensors(path("s2.safetensors"), {{"a", torch::ones({2})}});
  write_bytes(path("model.safetensors.index.json"), R"({"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}})");
  try {
    SafetensorsSet::open(dir_);
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tensor 'a' is stored in two shards"));
  }
}

TEST_F(SafetensorsTest, DirectoryWithoutWeightsIsAConfigError) {
  try {
    SafetensorsSet::open(dir_);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no model.safetensors or model.safetensors.index.json"));
  }
}

TEST_F(SafetensorsTest, TruncatedFileOnDiskNamesTheFileAndTensor) {
  save_safetensors(path("t.safetensors"), {{"w", torch::ones({4})}});
  std::string bytes = read_bytes(path("t.safetensors"));
  write_bytes(path("t.safetensors"), bytes.substr(0, bytes.size() - 3));
  try {
    SafetensorsSet::open(path("t.safetensors"));
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("t.safetensors: safetensors tensor 'w'"));
    EXPECT_THAT(e.what(), HasSubstr("extend past the data section (13 bytes; file truncated?)"));
  }
}

// ---- Malformed headers (parsed from memory) ------------------------------------

TEST(SafetensorsHeaderTest, FileShorterThanTheLengthField) {
  std::string bytes("\x05\x00\x00", 3);
  try {
    parse_safetensors_header(reinterpret_cast<const uint8_t*>(bytes.data()), 3, 3, "tiny.safetensors");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tiny.safetensors: safetensors file is 3 bytes, shorter than its 8-byte"));
  }
}

TEST(SafetensorsHeaderTest, HeaderLengthLargerThanTheFile) {
  std::string bytes = make_file("{}", "");
  bytes[0] = 100;  // claims a 100-byte header in a 10-byte file
  try {
    parse_safetensors_header(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), bytes.size(), "x.st");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("x.st: safetensors header length 100 exceeds the file size (10 bytes"));
  }
}

TEST(SafetensorsHeaderTest, HeaderThatIsNotJson) {
  EXPECT_THAT(parse_error("{not json}", ""), HasSubstr("bad.safetensors: safetensors header is not valid JSON"));
  EXPECT_THAT(parse_error("[1, 2]  ", ""), HasSubstr("header is not a JSON object (it must start with '{')"));
}

TEST(SafetensorsHeaderTest, DeeplyNestedJsonIsRefusedBeforeParsing) {
  std::string deep = "{\"a\":" + std::string(5000, '[') + std::string(5000, ']') + "}";
  EXPECT_THAT(parse_error(deep, ""), HasSubstr("header JSON nests deeper than 8 levels"));
}

TEST(SafetensorsHeaderTest, MissingDtype) {
  EXPECT_THAT(parse_error(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", "abcd"),
              HasSubstr("bad.safetensors: safetensors tensor 'w': missing string key 'dtype'"));
}

TEST(SafetensorsHeaderTest, MissingShapeAndBadOffsets) {
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", "abcd"),
              HasSubstr("tensor 'w': missing array key 'shape'"));
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", "abcd"),
              HasSubstr("tensor 'w': missing key 'data_offsets' = [begin, end]"));
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", "abcd"),
              HasSubstr("tensor 'w': data_offsets [4, 0] end before begin"));
}

TEST(SafetensorsHeaderTest, NegativeDimension) {
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"),
              HasSubstr("tensor 'w': shape [-1] has an element that is not a non-negative integer"));
}

TEST(SafetensorsHeaderTest, UnknownDtype) {
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"F8_E9","shape":[1],"data_offsets":[0,1]}})", "a"),
              HasSubstr("bad.safetensors: safetensors tensor 'w': unknown dtype 'F8_E9'"));
}

TEST(SafetensorsHeaderTest, ShapeTimesDtypeSizeDisagreesWithOffsets) {
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", std::string(20, 'x')),
              HasSubstr("tensor 'w': shape [2, 3] x F32 (4 bytes) = 24 bytes, but data_offsets [0, 20] span 20 bytes"));
}

TEST(SafetensorsHeaderTest, ShapeProductOverflowIsCaught) {
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", ""),
              HasSubstr("tensor 'w': shape [4294967296, 4294967296] is too large"));
}

TEST(SafetensorsHeaderTest, OffsetsOutsideTheFile) {
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(8, 'x')),
              HasSubstr("tensor 'w': data_offsets [0, 16] extend past the data section (8 bytes"));
}

TEST(SafetensorsHeaderTest, OverlappingOffsets) {
  EXPECT_THAT(parse_error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                          std::string(12, 'x')),
              HasSubstr("tensor 'b': data_offsets [4, 12] overlap tensor 'a' (which ends at 8)"));
}

TEST(SafetensorsHeaderTest, HoleBetweenTensors) {
  EXPECT_THAT(parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                          R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                          std::string(12, 'x')),
              HasSubstr("tensor 'b': data_offsets [8, 12] leave a hole of 4 bytes after offset 4"));
}

TEST(SafetensorsHeaderTest, TrailingGarbage) {
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", "abcdef"),
              HasSubstr("bad.safetensors: safetensors file has 4 bytes of trailing data after the last tensor"));
}

TEST(SafetensorsHeaderTest, MetadataValuesMustBeStrings) {
  EXPECT_THAT(parse_error(R"({"__metadata__":{"n":3}})", ""),
              HasSubstr("'__metadata__' value of key 'n' is not a string"));
}

TEST(SafetensorsHeaderTest, DuplicateTensorNameIsRejected) {
  EXPECT_THAT(parse_error(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                          R"("w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                          "ab"),
              HasSubstr("bad.safetensors: safetensors header names tensor 'w' twice"));
}

TEST(SafetensorsHeaderTest, EmptyCheckpointIsValid) {
  std::string file = make_file("{}      ", "");
  StHeader h = parse_safetensors_header(reinterpret_cast<const uint8_t*>(file.data()), file.size(), file.size(), "e");
  EXPECT_TRUE(h.tensors.empty());
  EXPECT_EQ(h.data_offset(), 16u);
}

}  // namespace
}  // namespace agentrl::model
