// Internal to the model layer (transformer.cpp, the engine's cached forward
// and lm head): y = x W^T + b for a few rows of x, float32 on the CPU.
//
// What: a decode step multiplies a handful of rows (one per sequence) by
// every weight matrix of the model, a product bound by reading W from memory
// once per step. ATen's linear takes OpenBLAS's gemv for one row and its
// sgemm, which packs W into blocks first, for more. This kernel reads each
// row of W once, straight from the weight, in one of two forms:
//   lane form (at most kLaneFormMaxRows rows): dot products in 8 float
//     lanes, tiles of 2-4 W rows x 1-4 x rows, the next tile of a large W
//     prefetched;
//   panel form (more rows): x packed k-major in panels of 16 (and 8) rows,
//     each W element broadcast and multiplied with a panel's rows, blocks of
//     12 or 6 W rows x 16 or 8 rows of accumulators, no horizontal sums, W
//     prefetched 4 lines ahead in every row of the block.
// FMA on AVX2 CPUs. All products of a 0.5B-shape decode step at 8 rows: 176
// ms through torch::matmul, 111 ms in the lane form, 90 ms in the panel form
// (docs/benchmarks.md, "Engine: one OpenMP team at a time, and the panel
// form").
//
// Numerics: in the lane form each output is one dot product summed in 8
// lanes (lane sums, then the tail); in the panel form one chain of
// multiply-adds over k in order, then the bias. Within a form the same
// inputs give the same bits whatever the thread count and the other rows of
// the call; a row computed in a call of at most kLaneFormMaxRows rows and in
// a larger call may differ in the last bits. The order differs from
// OpenBLAS's, so the result equals torch::linear up to float rounding
// (tests: within 1e-5 of the sum of |x_k w_k| per output).
//
// Shapes: x [M, K], w [N, K] (nn::Linear's layout), bias [N] or undefined;
// returns [M, N]. All CPU float32 contiguous (infer_kernels_apply). Errors:
// anything else, or M > kFewRowsMax, is a c10::Error (TORCH_CHECK); callers
// ask few_rows_linear_applies() first.
//
// Thread-safety: pure (the panel form packs x into a thread_local buffer of
// the calling thread); output features are split over ATen's intra-op
// threads.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace agentrl::model::detail {

// The most rows the kernel takes: a decode step of up to 64 sequences, or a
// short prefill chunk; longer prefill chunks keep sgemm's blocking.
constexpr int64_t kFewRowsMax = 64;

// Up to this many rows the lane form (dot products in 8 lanes, each W row
// read once for all rows); above it the panel form (see the .cpp).
constexpr int64_t kLaneFormMaxRows = 4;

// Whether few_rows_linear takes these operands (bias may be undefined).
bool few_rows_linear_applies(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& bias);

torch::Tensor few_rows_linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& bias);

}  // namespace agentrl::model::detail
