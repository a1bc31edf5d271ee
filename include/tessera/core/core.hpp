#pragma once
// Everything in tessera/core: one include for code that wants the whole vocabulary.

#include "tessera/core/box.hpp"
#include "tessera/core/dims.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/format.hpp"
#include "tessera/core/host_device.hpp"
#include "tessera/core/index.hpp"
#include "tessera/core/unrolled_for.hpp"
