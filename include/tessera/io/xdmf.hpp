#pragma once
// XDMF 3 descriptions of time series on uniform grids, the small XML file ParaView and VisIt open
// to find the arrays in an HDF5 file. Hdf5Series (hdf5.hpp) writes one for you; this header is
// the text generator alone (it needs no HDF5), for tools that write their own heavy data.
//
//   tessera::io::UniformGrid grid{{nx, ny}, {0.0, 0.0}, {dx, dy}};
//   std::vector<tessera::io::XdmfStep> steps{{10, 0.5, {{"density", "run.h5:/step_000010/density", 8}}}};
//   std::string xml = tessera::io::xdmf_document(grid, steps);
//
// Conventions, as XDMF has them for CoRectMesh grids: every list of dimensions, origins and
// spacings is written slowest first (z y x), the topology counts points (cells + 1), and fields
// are cell-centred with Dimensions equal to the cell counts (z y x), matching an HDF5 dataset of
// an x-fastest array.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tessera::io {

/// A uniform grid of cells, every list x first: `{{nx, ny}, {x0, y0}, {dx, dy}}`. 2 or 3
/// dimensions; origin is the low corner of cell 0, spacing the cell widths (positive).
struct UniformGrid {
  std::vector<std::size_t> cells;
  std::vector<double> origin;
  std::vector<double> spacing;
};

/// Throws tessera::Error unless `grid` has 2 or 3 dimensions, matching list lengths, non-zero
/// cell counts and finite positive spacings. `what` starts the message.
void check_grid(const UniformGrid& grid, const std::string& what);

/// One cell-centred scalar field of a step: its name and where its data lives
/// (`file.h5:/group/dataset`), stored as floating point of `precision` bytes (4 or 8).
struct XdmfField {
  std::string name;
  std::string hdf5_path;
  std::size_t precision = 8;
};

/// One time step: its number, its time and its fields.
struct XdmfStep {
  std::int64_t step = 0;
  double time = 0.0;
  std::vector<XdmfField> fields;
};

/// The XDMF 3 document: a temporal collection with one uniform grid per step.
std::string xdmf_document(const UniformGrid& grid, std::span<const XdmfStep> steps);

}  // namespace tessera::io
