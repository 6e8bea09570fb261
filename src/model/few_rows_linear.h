// Internal to the model layer (transformer.cpp, the engine's cached forward
// and lm head): y = x W^T + b for a few rows of x, float32 on the CPU.
//
// What: a decode step multiplies a handful of rows (one per sequence) by
// every weight matrix of the model, a product bound by reading W from memory
// once per step. ATen's linear takes OpenBLAS's gemv for one row and its
// sgemm, which packs W into blocks first, for more. This kernel reads each
// row of W once, straight from the weight, multiplies it with all of x's rows
// while it is in cache (tiles of 2-4 W rows x 1-4 x rows, 8 float lanes, FMA
// on AVX2 CPUs), and prefetches the next tile of a large W. All products of
// a 0.5B-shape decode step: 1 row 128 -> 70 ms, 8 rows 173 -> 111 ms
// (docs/benchmarks.md, "Engine: few-row products, and agentrl's kernels on
// both cores").
//
// Numerics: each output is one dot product summed in 8 lanes (lane sums, then
// the tail), whatever the thread count or the row count: the same inputs give
// the same bits on one machine. The order differs from OpenBLAS's, so the
// result equals torch::linear up to float rounding (tests: within 1e-5 of
// the sum of |x_k w_k| per output).
//
// Shapes: x [M, K], w [N, K] (nn::Linear's layout), bias [N] or undefined;
// returns [M, N]. All CPU float32 contiguous (infer_kernels_apply). Errors:
// anything else, or M > kFewRowsMax, is a c10::Error (TORCH_CHECK); callers
// ask few_rows_linear_applies() first.
//
// Thread-safety: pure; output features are split over ATen's intra-op
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
