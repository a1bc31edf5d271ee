// DOC core-page begin
#include <tessera/core/core.hpp>

#include <cstddef>
#include <iostream>

int main() {
  // A 4x3 tile in the corner of an 8x6 domain, and the one-cell halo it reads, clipped to the domain.
  const tessera::Box<2> domain{tessera::Extent{8, 6}};
  const tessera::Box<2> tile{{4, 0}, {8, 3}};
  const tessera::Box<2> halo = tile.grown(1).intersect(domain);
  const tessera::BoxList<2> ring = tessera::difference(halo, tile);  // at most 2 * D disjoint boxes

  // The ring's boxes against a plain count of the halo's points that are not the tile's.
  std::size_t in_boxes = 0, counted = 0;
  for (const tessera::Box<2>& piece : ring) in_boxes += piece.volume();
  tessera::for_each_index(halo, [&](const tessera::Index<2>& p) { counted += tile.contains(p) ? 0 : 1; });

  const tessera::Extent<2> size = tile.extent();  // x fastest in memory
  const bool ok = in_boxes == counted && counted == 8 && size.linear(tessera::Index{1, 2}) == 1 + 2 * 4 &&
                  size.delinear(9) == tessera::Index{1, 2} && size[tessera::dim_y] == 3;
  std::cout << "core: halo " << halo << ", " << ring.size() << " boxes of " << in_boxes << " points around " << tile
            << (ok ? "" : ": WRONG") << '\n';
  return ok ? 0 : 1;
}
// DOC core-page end
