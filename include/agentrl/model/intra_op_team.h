// The calling thread's team of intra-op worker threads (OpenMP, the team
// ATen's at::parallel_for and agentrl's CPU kernels split their work over).
//
// What: a thread that has run a parallel region keeps its team's workers
// asleep in a pool until the thread ends. libgomp lets workers spin between
// regions only while it manages no more threads than the machine has cores;
// past that (the trainer's main thread and the engine's loop thread, each
// with a team, on 2 cores) it puts them to sleep at once, and every parallel
// region then wakes its workers through the kernel: on this project's
// 2-core VM a small region run by a second thread took 14.0 us while the
// first kept its team, 2.4 us once it had freed it (engine_bench
// BM_ParallelRegion; docs/benchmarks.md, "Engine: one OpenMP team at a time,
// and the panel form"). A tiny-shape decode step has tens of regions. release_intra_op_team() frees the calling
// thread's team: a thread about to hand the CPUs to another one (the caller
// of the engine, the engine going idle) calls it; its next parallel region
// makes a new team (a thread start, tens of microseconds).
//
// Runtimes: built and measured with GCC's libgomp (Debian's LibTorch and
// pytorch.org's use it), whose soft pause frees the calling thread's pool
// only. LLVM's libomp implements the call too (its pause puts the runtime's
// idle threads to sleep); not tested here.
//
// Thread-safety: acts on the calling thread's own team only (libgomp); a
// no-op inside a parallel region, without OpenMP, or where the OpenMP
// runtime lacks omp_pause_resource_all (OpenMP 5.0).
#pragma once

namespace agentrl::model {

// Frees the calling thread's intra-op worker threads, if it has any. Returns
// false where it cannot (inside a parallel region, no OpenMP, a runtime
// without omp_pause_resource_all); the caller goes on either way.
bool release_intra_op_team();

}  // namespace agentrl::model
