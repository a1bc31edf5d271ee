#pragma once
// The dataflow front end (Alea): operations with typed ports, FIFO streams, cycles, the
// operation catalog, placement over every device and fusion. docs/flow.md.

#include "tessera/core/error.hpp"
#include "tessera/flow/array.hpp"
#include "tessera/flow/catalog.hpp"
#include "tessera/flow/context.hpp"
#include "tessera/flow/flow.hpp"
#include "tessera/flow/operation.hpp"
#include "tessera/flow/port.hpp"
