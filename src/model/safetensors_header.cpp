// Validating parser of the safetensors header; see safetensors_header.h.
// The rules follow the reference implementation (safetensors/src/tensor.rs:
// header starts with '{', offsets must tile the data section exactly, header
// length is bounded). Torch-free so that it can be fuzzed on its own.
#include "agentrl/model/safetensors_header.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "agentrl/core/error.h"

namespace agentrl::model {
namespace {

using json = nlohmann::json;

// The reference implementation refuses headers above 100 MB (MAX_HEADER_SIZE);
// a real 7B header is ~30 kB.
constexpr uint64_t kMaxHeaderSize = 100'000'000;
// A valid header nests 3 levels ({name: {shape: [...]}}); refusing deeper
// input up front keeps pathological nesting away from the JSON library.
constexpr int kMaxJsonDepth = 8;

struct DtypeRow {
  StDtype dtype;
  const char* name;
  size_t size;
};
constexpr DtypeRow kDtypes[] = {
    {StDtype::F64, "F64", 8}, {StDtype::F32, "F32", 4},
    {StDtype::F16, "F16", 2}, {StDtype::BF16, "BF16", 2},
    {StDtype::I64, "I64", 8},   {StDtype::I32, "I32", 4},
    {StDtype::I16, "I16", 2},   {StDtype::I8, "I8", 1},
    {StDtype::U8, "U8", 1},     {StDtype::BOOL, "BOOL", 1},
};

const DtypeRow& row(StDtype d) {
  for (const auto& r : kDtypes)
    if (r.dtype == d) return r;
  throw FormatError("internal: unknown safetensors dtype");
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Maximum bracket nesting outside JSON strings (escape-aware).
int json_depth(const char* p, size_t n) {
  int depth = 0, max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < n; ++i) {
    char c = p[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      max_depth = std::max(max_depth, ++depth);
      if (max_depth > kMaxJsonDepth) return max_depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return max_depth;
}

StTensorInfo parse_entry(const std::string& file, const std::string& name, const json& e) {
  auto fail = [&](const std::string& what) -> FormatError {
    return FormatError(file + ": safetensors tensor '" + name + "': " + what);
  };
  if (!e.is_object()) throw fail("entry is not a JSON object");
  StTensorInfo t;
  t.name = name;
  auto dt = e.find("dtype");
  if (dt == e.end() || !dt->is_string()) throw fail("missing string key 'dtype'");
  if (!st_dtype_from_name(dt->get<std::string>(), &t.dtype))
    throw fail("unknown dtype '" + dt->get<std::string>() +
               "' (expected F64, F32, F16, BF16, I64, I32, I16, I8, U8 or BOOL)");
  auto sh = e.find("shape");
  if (sh == e.end() || !sh->is_array()) throw fail("missing array key 'shape'");
  uint64_t numel = 1;
  bool overflow = false;
  for (const auto& d : *sh) {
    if (!d.is_number_unsigned()) throw fail("shape " + sh->dump() + " has an element that is not a non-negative integer");
    uint64_t v = d.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) overflow = true;
    t.shape.push_back(static_cast<int64_t>(v));
    if (v != 0 && numel > std::numeric_limits<uint64_t>::max() / v) overflow = true;
    numel *= v;
  }
  auto off = e.find("data_offsets");
  if (off == e.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    throw fail("missing key 'data_offsets' = [begin, end] of two non-negative integers");
  t.begin = (*off)[0].get<uint64_t>();
  t.end = (*off)[1].get<uint64_t>();
  if (t.end < t.begin)
    throw fail("data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] end before begin");
  size_t esize = st_dtype_size(t.dtype);
  if (overflow || numel > std::numeric_limits<uint64_t>::max() / esize)
    throw fail("shape " + shape_text(t.shape) + " is too large");
  if (numel * esize != t.end - t.begin)
    throw fail("shape " + shape_text(t.shape) + " x " + st_dtype_name(t.dtype) + " (" + std::to_string(esize) +
               " bytes) = " + std::to_string(numel * esize) + " bytes, but data_offsets [" + std::to_string(t.begin) +
               ", " + std::to_string(t.end) + "] span " + std::to_string(t.end - t.begin) + " bytes");
  return t;
}

void parse_metadata(const std::string& file, const json& m, StHeader* h) {
  if (!m.is_object()) throw FormatError(file + ": safetensors '__metadata__' is not a JSON object");
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it->is_string())
      throw FormatError(file + ": safetensors '__metadata__' value of key '" + it.key() + "' is not a string");
    h->metadata[it.key()] = it->get<std::string>();
  }
}

// Offsets must tile [0, data_size) exactly: no overlap, no hole, nothing after.
void check_layout(const std::string& file, uint64_t data_size, StHeader* h) {
  auto& ts = h->tensors;
  std::stable_sort(ts.begin(), ts.end(), [](const StTensorInfo& a, const StTensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const StTensorInfo* prev = nullptr;
  for (const auto& t : ts) {
    std::string span = "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
    if (t.end > data_size)
      throw FormatError(file + ": safetensors tensor '" + t.name + "': " + span + " extend past the data section (" +
                        std::to_string(data_size) + " bytes; file truncated?)");
    if (t.begin < expected)
      throw FormatError(file + ": safetensors tensor '" + t.name + "': " + span + " overlap tensor '" + prev->name +
                        "' (which ends at " + std::to_string(expected) + ")");
    if (t.begin > expected)
      throw FormatError(file + ": safetensors tensor '" + t.name + "': " + span + " leave a hole of " +
                        std::to_string(t.begin - expected) + " bytes after offset " + std::to_string(expected));
    expected = t.end;
    prev = &t;
  }
  if (expected != data_size)
    throw FormatError(file + ": safetensors file has " + std::to_string(data_size - expected) +
                      " bytes of trailing data after the last tensor (data section " + std::to_string(data_size) +
                      " bytes, tensors end at " + std::to_string(expected) + ")");
}

}  // namespace

bool st_dtype_from_name(const std::string& name, StDtype* out) {
  for (const auto& r : kDtypes) {
    if (name == r.name) {
      *out = r.dtype;
      return true;
    }
  }
  return false;
}
const char* st_dtype_name(StDtype d) { return row(d).name; }
size_t st_dtype_size(StDtype d) { return row(d).size; }

int64_t StTensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

StHeader parse_safetensors_header(const uint8_t* data, size_t size, uint64_t file_size, const std::string& name) {
  if (size > file_size) throw FormatError(name + ": internal: buffer larger than the file");
  if (file_size < 8)
    throw FormatError(name + ": safetensors file is " + std::to_string(file_size) +
                      " bytes, shorter than its 8-byte header length");
  if (size < 8) throw FormatError(name + ": safetensors header length not available");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | data[i];  // little-endian u64
  StHeader h;
  h.header_size = n;
  if (n > file_size - 8)
    throw FormatError(name + ": safetensors header length " + std::to_string(n) + " exceeds the file size (" +
                      std::to_string(file_size) + " bytes; truncated or not a safetensors file)");
  if (n > kMaxHeaderSize)
    throw FormatError(name + ": safetensors header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (size - 8 < n) throw FormatError(name + ": safetensors header is not fully available");
  const char* text = reinterpret_cast<const char*>(data + 8);
  if (n < 2 || text[0] != '{')
    throw FormatError(name + ": safetensors header is not a JSON object (it must start with '{')");
  if (json_depth(text, n) > kMaxJsonDepth)
    throw FormatError(name + ": safetensors header JSON nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  // The JSON library keeps the last of duplicate keys; a header naming a
  // tensor twice is ambiguous, so it is refused.
  std::set<std::string> top_keys;
  std::string duplicate;
  json::parser_callback_t on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && !top_keys.insert(parsed.get<std::string>()).second &&
        duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json j = json::parse(text, text + n, on_event, /*allow_exceptions=*/false);
  if (!duplicate.empty())
    throw FormatError(name + ": safetensors header names tensor '" + duplicate + "' twice");
  if (j.is_discarded() || !j.is_object()) {
    std::string why;
    try {
      json probe = json::parse(text, text + n);
      (void)probe;
    } catch (const json::exception& e) {
      why = std::string(": ") + e.what();
    }
    throw FormatError(name + ": safetensors header is not valid JSON" + why);
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") {
      parse_metadata(name, *it, &h);
    } else {
      if (it.key().empty()) throw FormatError(name + ": safetensors header has a tensor with an empty name");
      h.tensors.push_back(parse_entry(name, it.key(), *it));
    }
  }
  check_layout(name, file_size - 8 - n, &h);
  return h;
}


}  // namespace agentrl::model
