#pragma once
// The Graph front end: tensor operations split over blocks, reductions, halo-aware padded
// access, conditional passes and subgraphs. See docs/graph.md.

#include "tessera/graph/graph.hpp"
#include "tessera/graph/padded_access.hpp"
