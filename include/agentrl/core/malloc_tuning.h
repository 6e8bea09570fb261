// Keeps the memory of freed large blocks in the process for reuse (glibc).
//
// Why: glibc serves blocks above its mmap threshold (128 KiB, raised
// dynamically to at most 32 MiB) with a fresh mmap and unmaps them on free,
// and trims the heap top above 128 KiB. A CPU training step allocates and
// frees tensors of tens of MiB (attention scores, logits, activations'
// gradients) many times, so each allocation paid a page fault per 4 KiB
// page and the kernel's zeroing: measured on the quickstart's policy, a
// forward + backward of 16 x 1200 tokens took 6.6 s with glibc's defaults and
// 1.6 s with this tuning (docs/benchmarks.md, "CPU memory reuse"). PyTorch's
// CPU tuning guides get the same effect by preloading jemalloc/tcmalloc; this
// needs no extra library.
//
// What: mallopt(M_MMAP_THRESHOLD and M_TRIM_THRESHOLD, 2 GiB, the largest
// value mallopt takes): allocations come from the heap and freed memory stays there, so
// the process's resident memory stays at its peak instead of shrinking
// between steps (the peak itself is unchanged). Set AGENTRL_MALLOC_TUNING=0 in
// the environment to keep glibc's defaults. A no-op (returns false) off glibc.
//
// Thread-safety: call once, early in main, before other threads allocate.
#pragma once

namespace agentrl {

// Applies the tuning unless AGENTRL_MALLOC_TUNING=0; true when applied.
bool tune_malloc_for_tensor_reuse();

}  // namespace agentrl
