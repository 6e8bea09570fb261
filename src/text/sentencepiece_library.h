// Access to libsentencepiece without linking it (internal).
//
// Why: Debian's libsentencepiece.so.0 bundles its own protobuf-lite and
// exports those symbols. Any agentrl process also loads the system
// libprotobuf.so.32 (core's TensorBoard writer, LibTorch), which comes first
// in the global symbol scope, so SentencePiece's generated code would call
// into a different protobuf version and die on its first model load
// ("CHECK failed: scc->visit_status ..."). Loading the library with
// dlopen(RTLD_DEEPBIND) makes it resolve its own symbols first. The few
// non-virtual entry points we need are looked up with dlsym; everything else
// is a virtual call through the processor's vtable, which needs no symbol.
//
// Thread-safety: library() loads once (thread-safe static initialisation).
#pragma once

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <memory>
#include <string>
#include <unordered_map>

namespace agentrl::text::detail {

// A new SentencePieceProcessor from the DEEPBIND-loaded library. Throws
// agentrl::Error if the library cannot be loaded.
std::unique_ptr<sentencepiece::SentencePieceProcessor> new_sentencepiece_processor();

// SentencePieceTrainer::Train(kwargs) after SetRandomGeneratorSeed(seed).
// Returns "" on success, else SentencePiece's error message.
std::string train_sentencepiece_model(const std::unordered_map<std::string, std::string>& kwargs, unsigned int seed);

// The error message of a SentencePiece status ("" when ok).
std::string status_message(const sentencepiece::util::Status& status);

}  // namespace agentrl::text::detail
