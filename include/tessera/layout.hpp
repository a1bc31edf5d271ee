#pragma once
// The layout layer: Records with polymorphic layout, their vectors, and how each layout places
// them in tensor rows. See docs/layout.md.

#include "tessera/layout/layout.hpp"
#include "tessera/layout/layout_traits.hpp"
#include "tessera/layout/record.hpp"
#include "tessera/layout/storage_descriptor.hpp"
#include "tessera/layout/vec.hpp"
