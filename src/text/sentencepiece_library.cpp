#include "sentencepiece_library.h"

#include <dlfcn.h>

#include "agentrl/core/error.h"

// The calls below hand util::Status values across the library boundary, so
// this translation unit needs Status's out-of-line destructor and
// error_message(). They are defined here, identically to SentencePiece's
// src/error.cc (Rep is {code, error_message} in every 0.1.x release), so that
// nothing references the library's symbols at link time.
namespace sentencepiece::util {
struct Status::Rep {
  StatusCode code;
  std::string error_message;
};
Status::~Status() {}
const char* Status::error_message() const { return rep_ ? rep_->error_message.c_str() : ""; }
}  // namespace sentencepiece::util

namespace agentrl::text::detail {
namespace {

using TrainFn = sentencepiece::util::Status (*)(const std::unordered_map<std::string, std::string>&,
                                                sentencepiece::SentenceIterator*, std::string*);

struct Library {
  void (*construct)(void*) = nullptr;
  void (*set_seed)(unsigned int) = nullptr;
  TrainFn train = nullptr;
  std::string error;

  Library() {
#if defined(__SANITIZE_ADDRESS__)
    // ASan refuses RTLD_DEEPBIND, and without it the protobuf clash above
    // crashes: SentencePiece is unavailable in sanitizer builds.
    error = "SentencePiece tokenizers are unavailable in AddressSanitizer builds (RTLD_DEEPBIND is not supported)";
    return;
#endif
    if (void* linked = dlopen("libsentencepiece.so.0", RTLD_LAZY | RTLD_NOLOAD)) {
      // Already in the global scope (some library linked it, e.g. a linker
      // without --as-needed kept agentrl_text's link to it): DEEPBIND cannot
      // apply any more and its first model load would fail inside protobuf.
      dlclose(linked);
      error = "libsentencepiece.so.0 is linked into the process; agentrl must load it itself with RTLD_DEEPBIND "
              "(its bundled protobuf clashes with libprotobuf): link agentrl_text with -Wl,--as-needed or "
              "without -lsentencepiece";
      return;
    }
    const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
    void* core = dlopen("libsentencepiece.so.0", flags);
    void* trainer = core ? dlopen("libsentencepiece_train.so.0", flags) : nullptr;
    if (!core || !trainer) {
      const char* e = dlerror();
      error = std::string("cannot load libsentencepiece (install libsentencepiece0): ") + (e ? e : "unknown error");
      return;
    }
    construct = reinterpret_cast<void (*)(void*)>(dlsym(core, "_ZN13sentencepiece22SentencePieceProcessorC1Ev"));
    set_seed = reinterpret_cast<void (*)(unsigned int)>(dlsym(core, "_ZN13sentencepiece22SetRandomGeneratorSeedEj"));
    train = reinterpret_cast<TrainFn>(dlsym(
        trainer,
        "_ZN13sentencepiece20SentencePieceTrainer5TrainERKSt13unordered_mapINSt7__cxx1112basic_stringIcSt11char_"
        "traitsIcESaIcEEES7_St4hashIS7_ESt8equal_toIS7_ESaISt4pairIKS7_S7_EEEPNS_16SentenceIteratorEPS7_"));
    if (!construct || !set_seed || !train) error = "libsentencepiece lacks an expected symbol (version mismatch?)";
  }
};

const Library& library() {
  static const Library lib;
  if (!lib.error.empty()) throw Error(lib.error);
  return lib;
}

}  // namespace

std::unique_ptr<sentencepiece::SentencePieceProcessor> new_sentencepiece_processor() {
  const Library& lib = library();
  void* mem = ::operator new(sizeof(sentencepiece::SentencePieceProcessor));
  lib.construct(mem);
  // Deleted through its virtual destructor, i.e. by the library's code.
  return std::unique_ptr<sentencepiece::SentencePieceProcessor>(static_cast<sentencepiece::SentencePieceProcessor*>(mem));
}

std::string train_sentencepiece_model(const std::unordered_map<std::string, std::string>& kwargs, unsigned int seed) {
  const Library& lib = library();
  lib.set_seed(seed);
  sentencepiece::util::Status status = lib.train(kwargs, nullptr, nullptr);
  return status_message(status);
}

std::string status_message(const sentencepiece::util::Status& status) {
  if (status.ok()) return "";
  std::string m = status.error_message();
  return m.empty() ? std::string("unknown SentencePiece error") : m;
}

}  // namespace agentrl::text::detail
