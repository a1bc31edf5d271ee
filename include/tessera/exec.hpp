#pragma once
// Kernel execution over tensors: for_each, reduce, and their options. See docs/kernels.md.

#include "tessera/exec/access_graph.hpp"
#include "tessera/exec/exec_options.hpp"
#include "tessera/exec/for_each.hpp"
#include "tessera/exec/reduce_into.hpp"
#include "tessera/exec/reduction.hpp"
#include "tessera/exec/tensor_concept.hpp"
