#pragma once
// SiteRef: where one site of a tensor row lives, in the terms its layout needs. The Record view
// of a site, and the iterators that make views, pass these around by value.

#include <cstddef>

#include "tessera/core/host_device.hpp"

namespace tessera {

/// One site in tensor memory:
///   Contiguous: `base` is the site's element, `index` and `pitch` unused;
///   Strided:    `base` is the row, `index` the site within it, `pitch` the sites per row;
///   Tiled<V>:   `base` is the site's tile, `index` its lane (< V), `pitch` unused.
struct SiteRef {
  std::byte* base = nullptr;
  std::ptrdiff_t index = 0;
  std::ptrdiff_t pitch = 0;
};

}  // namespace tessera
