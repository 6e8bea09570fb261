// safetensors reader (memory-mapped) and writer; see safetensors.h for the
// format. Header validation lives in safetensors_header.cpp.
#include "agentrl/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "agentrl/core/error.h"
#include "atomic_file.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; big-endian hosts would need byte swapping");

namespace agentrl::model {

namespace {
using json = nlohmann::json;

constexpr std::pair<StDtype, torch::Dtype> kTorchDtypes[] = {
    {StDtype::F64, torch::kFloat64}, {StDtype::F32, torch::kFloat32}, {StDtype::F16, torch::kFloat16},
    {StDtype::BF16, torch::kBFloat16}, {StDtype::I64, torch::kInt64}, {StDtype::I32, torch::kInt32},
    {StDtype::I16, torch::kInt16},   {StDtype::I8, torch::kInt8},     {StDtype::U8, torch::kUInt8},
    {StDtype::BOOL, torch::kBool}};
}  // namespace

torch::Dtype st_dtype_to_torch(StDtype d) {
  for (const auto& [st, t] : kTorchDtypes)
    if (st == d) return t;
  throw FormatError("internal: unknown safetensors dtype");
}

StDtype st_dtype_from_torch(torch::Dtype d) {
  for (const auto& [st, t] : kTorchDtypes)
    if (t == d) return st;
  throw FormatError(std::string("safetensors: cannot store torch dtype ") + c10::toString(d));
}

// ---- SafetensorsFile ----------------------------------------------------------

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open " + path + ": " + detail::errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::string err = detail::errno_text();
    ::close(fd);
    throw IoError("cannot stat " + path + ": " + err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError("cannot read " + path + ": not a regular file");
  }
  auto file = std::shared_ptr<SafetensorsFile>(new SafetensorsFile());
  file->path_ = path;
  file->size_ = static_cast<uint64_t>(st.st_size);
  if (file->size_ > 0) {
    // MAP_PRIVATE + PROT_WRITE: views handed out are copy-on-write, so a
    // caller writing into one gets a private page instead of a SIGSEGV, and
    // the file itself is never modified.
    void* base = ::mmap(nullptr, file->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
      std::string err = detail::errno_text();
      ::close(fd);
      throw IoError("cannot mmap " + path + ": " + err);
    }
    uint64_t len = file->size_;
    file->mapping_ = std::shared_ptr<void>(base, [len](void* p) { ::munmap(p, len); });
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  const auto* bytes = static_cast<const uint8_t*>(file->mapping_.get());
  file->header_ = parse_safetensors_header(bytes, file->size_, file->size_, path);
  for (size_t i = 0; i < file->header_.tensors.size(); ++i) file->index_[file->header_.tensors[i].name] = i;
  return file;
}

SafetensorsFile::~SafetensorsFile() = default;

const StTensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

torch::Tensor SafetensorsFile::tensor(const std::string& name) const {
  const StTensorInfo* t = find(name);
  if (t == nullptr) throw FormatError(path_ + ": no tensor named '" + name + "'");
  auto opts = torch::TensorOptions().dtype(st_dtype_to_torch(t->dtype)).device(torch::kCPU);
  if (t->begin == t->end) return torch::empty(t->shape, opts);
  char* ptr = static_cast<char*>(mapping_.get()) + header_.data_offset() + t->begin;
  std::shared_ptr<void> keep = mapping_;
  torch::Tensor view = torch::from_blob(
      ptr, t->shape, [keep](void*) mutable { keep.reset(); }, opts);
  // Vectorised kernels may assume element alignment; files from the reference
  // writer are aligned, hand-made ones need not be.
  if (reinterpret_cast<uintptr_t>(ptr) % st_dtype_size(t->dtype) != 0) return view.clone();
  return view;
}

// ---- SafetensorsSet -----------------------------------------------------------

namespace {

json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) throw FormatError(path + ": not valid JSON");
  return j;
}

bool is_plain_file_name(const std::string& s) {
  return !s.empty() && s.find('/') == std::string::npos && s != "." && s != "..";
}

}  // namespace

SafetensorsSet SafetensorsSet::open(const std::string& path) {
  namespace fs = std::filesystem;
  std::string target = path;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / "model.safetensors.index.json")) {
      target = (fs::path(path) / "model.safetensors.index.json").string();
    } else if (fs::exists(fs::path(path) / "model.safetensors")) {
      target = (fs::path(path) / "model.safetensors").string();
    } else {
      throw ConfigError(path + ": no model.safetensors or model.safetensors.index.json in this directory");
    }
  }
  SafetensorsSet set;
  set.source_ = target;
  const bool is_index = target.size() >= 5 && target.compare(target.size() - 5, 5, ".json") == 0;
  if (!is_index) {
    set.files_.push_back(SafetensorsFile::open(target));
    for (const auto& t : set.files_[0]->header().tensors) set.where_[t.name] = 0;
    return set;
  }
  json idx = read_json_file(target);
  auto wm = idx.is_object() ? idx.find("weight_map") : idx.end();
  if (wm == idx.end() || !wm->is_object()) throw FormatError(target + ": missing object key 'weight_map'");
  std::map<std::string, size_t> shard_pos;
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    if (!it->is_string()) throw FormatError(target + ": weight_map['" + it.key() + "'] is not a string");
    std::string shard = it->get<std::string>();
    if (!is_plain_file_name(shard))
      throw FormatError(target + ": weight_map['" + it.key() + "'] = '" + shard +
                        "' is not a file name in the index's directory");
    shard_pos.emplace(shard, 0);
  }
  fs::path dir = fs::path(target).parent_path();
  for (auto& [shard, pos] : shard_pos) {
    pos = set.files_.size();
    set.files_.push_back(SafetensorsFile::open((dir / shard).string()));
    for (const auto& t : set.files_.back()->header().tensors) {
      auto [it, inserted] = set.where_.emplace(t.name, pos);
      if (!inserted)
        throw FormatError(target + ": tensor '" + t.name + "' is stored in two shards, " +
                          set.files_[it->second]->path() + " and " + set.files_.back()->path());
    }
  }
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    size_t pos = shard_pos.at(it->get<std::string>());
    if (set.files_[pos]->find(it.key()) == nullptr)
      throw FormatError(target + ": weight_map puts tensor '" + it.key() + "' in " + set.files_[pos]->path() +
                        ", which has no such tensor");
  }
  return set;
}

std::vector<std::string> SafetensorsSet::names() const {
  std::vector<std::string> out;
  for (const auto& [name, pos] : where_) out.push_back(name);
  return out;
}

const StTensorInfo& SafetensorsSet::info(const std::string& name) const {
  auto it = where_.find(name);
  if (it == where_.end()) throw FormatError(source_ + ": no tensor named '" + name + "'");
  return *files_[it->second]->find(name);
}

torch::Tensor SafetensorsSet::tensor(const std::string& name) const {
  auto it = where_.find(name);
  if (it == where_.end()) throw FormatError(source_ + ": no tensor named '" + name + "'");
  return files_[it->second]->tensor(name);
}

const std::string& SafetensorsSet::file_of(const std::string& name) const {
  auto it = where_.find(name);
  return it == where_.end() ? source_ : files_[it->second]->path();
}

const std::map<std::string, std::string>& SafetensorsSet::metadata() const {
  static const std::map<std::string, std::string> empty;
  return files_.empty() ? empty : files_[0]->header().metadata;
}

// ---- Writer -------------------------------------------------------------------

namespace {

torch::Dtype stored_dtype(const torch::Tensor& t, c10::optional<torch::Dtype> dtype) {
  return (dtype.has_value() && t.is_floating_point()) ? *dtype : t.scalar_type();
}

}  // namespace

uint64_t stored_bytes(const torch::Tensor& t, c10::optional<torch::Dtype> dtype) {
  return static_cast<uint64_t>(t.numel()) * st_dtype_size(st_dtype_from_torch(stored_dtype(t, dtype)));
}

void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata, c10::optional<torch::Dtype> dtype) {
  std::set<std::string> seen;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__")
      throw FormatError(path + ": cannot save a tensor named '" + name + "'");
    if (!seen.insert(name).second) throw FormatError(path + ": tensor name '" + name + "' given twice");
    if (!t.defined()) throw FormatError(path + ": tensor '" + name + "' is undefined");
  }
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto esize = [&](size_t i) { return st_dtype_size(st_dtype_from_torch(stored_dtype(tensors[i].second, dtype))); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (esize(a) != esize(b)) return esize(a) > esize(b);
    return tensors[a].first < tensors[b].first;
  });
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (size_t i : order) {
    const auto& [name, t] = tensors[i];
    uint64_t bytes = stored_bytes(t, dtype);
    header[name] = {{"dtype", st_dtype_name(st_dtype_from_torch(stored_dtype(t, dtype)))},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  detail::write_file_atomic(path, [&](detail::FileSink& sink) {
    uint8_t len[8];
    uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
    sink.write(len, 8);
    sink.write(text.data(), text.size());
    for (size_t i : order) {
      const torch::Tensor& t = tensors[i].second;
      torch::Tensor c = t.detach().to(torch::kCPU).to(stored_dtype(t, dtype)).contiguous();
      sink.write(c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
    }
  });
}

}  // namespace agentrl::model
