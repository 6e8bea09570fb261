// CRC-32C (Castagnoli), as used by TFRecord framing of TensorBoard event
// files. Hand-written (table driven) because none of the packaged libraries
// agentrl links exposes it.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace agentrl {

// CRC-32C of `n` bytes, continuing from `crc` (0 to start).
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

// TFRecord's masked CRC: rotate right by 15 and add 0xa282ead8
// (tensorflow/core/lib/hash/crc32c.h, Mask()).
uint32_t masked_crc32c(const void* data, size_t n);

}  // namespace agentrl
