#pragma once
// The operation catalog (Alea Table 1) and its fusers. docs/flow.md has a table with one
// example per operation.

#include "tessera/flow/catalog/control.hpp"
#include "tessera/flow/catalog/elementwise.hpp"
#include "tessera/flow/catalog/fusers.hpp"
#include "tessera/flow/catalog/linear_algebra.hpp"
#include "tessera/flow/catalog/random.hpp"
#include "tessera/flow/catalog/rearrange.hpp"
#include "tessera/flow/catalog/reduction.hpp"
