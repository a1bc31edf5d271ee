#pragma once
// SUITE=tasks: the pieces main.cpp runs.

#include "common/report.hpp"

namespace tasks_bench {

/// Nanoseconds per task, submit to completion, for the three shapes.
struct Shapes {
  double chain = 0, independent = 0, tree = 0;
};

constexpr int chain_tasks = 100000;
constexpr int independent_tasks = 100000;
constexpr int tree_leaves = 1024;  // 2047 tasks reduce 2048 values

Shapes tessera_overhead(bool quick);
/// StarPU with its CPU workers, the same shapes with STARPU_RW / STARPU_R; false without StarPU.
bool starpu_overhead(bool quick, Shapes& out);

void dgemm(tessera::bench::Report& report, bool quick);
/// The DGEMM loop on a GPU through cuBLAS (CUDA builds); false when tessera's C differs.
bool dgemm_cuda(tessera::bench::Report& report, bool quick);

}  // namespace tasks_bench
