#pragma once
// TESSERA_INDEPENDENT_LANES: put before a CPU loop over the lanes of a strip (cpu_block.hpp) or
// of a reduction (reduction.hpp) to promise the compiler that its iterations are independent.
//
// It is `GCC ivdep` rather than `omp simd`: GCC lowers `omp simd` before inlining and turns each
// lane's iterator copy into an array of structs that its vectoriser then rejects ("more than one
// data ref in stmt"); ivdep makes the same promise after inlining, when those copies have become
// scalars. `GCC unroll 1` keeps the lane loop a loop until the vectoriser sees it: GCC otherwise
// unrolled short strips completely first, and the SLP vectoriser that then got the straight-line
// code ignores ivdep (SAXPY ran scalar).

#if defined(__clang__)
#define TESSERA_INDEPENDENT_LANES _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__CUDACC__)
// nvcc's front end does not know GCC's unroll pragma; CPU strips in .cu files lose only that.
#define TESSERA_INDEPENDENT_LANES _Pragma("GCC ivdep")
#elif defined(__GNUC__)
#define TESSERA_INDEPENDENT_LANES _Pragma("GCC ivdep") _Pragma("GCC unroll 1")
#else
#define TESSERA_INDEPENDENT_LANES
#endif
