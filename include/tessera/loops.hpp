#pragma once
// The loops front end: OPS-style structured-mesh loops (blocks, datasets with halos, stencils,
// par_loop) recorded into lazy chains that run on the executor, on the host or sim devices.
#include <tessera/loops/block.hpp>
#include <tessera/loops/dataset.hpp>
#include <tessera/loops/par_loop.hpp>
#include <tessera/loops/reduction.hpp>
