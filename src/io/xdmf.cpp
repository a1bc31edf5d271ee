#include "tessera/io/xdmf.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::io {
namespace {

// XDMF lists dimensions slowest first: z y x.
template <typename V, typename F>
std::string zyx(const std::vector<V>& values, F&& f) {
  std::ostringstream s;
  s << std::setprecision(17);
  for (std::size_t k = values.size(); k-- > 0;) s << f(values[k]) << (k ? " " : "");
  return s.str();
}

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

void check_grid(const UniformGrid& grid, const std::string& what) {
  const std::size_t d = grid.cells.size();
  if (d != 2 && d != 3)
    throw Error(what + ": the grid has " + std::to_string(d) + " dimensions; XDMF CoRectMesh grids have 2 or 3");
  if (grid.origin.size() != d || grid.spacing.size() != d)
    throw Error(what + ": the grid has " + std::to_string(d) + " cell counts but " +
                std::to_string(grid.origin.size()) + " origin and " + std::to_string(grid.spacing.size()) +
                " spacing values; give one of each per dimension, x first");
  for (std::size_t k = 0; k < d; ++k) {
    if (grid.cells[k] == 0) throw Error(what + ": the grid has 0 cells in dimension " + std::to_string(k));
    if (!(grid.spacing[k] > 0.0) || !std::isfinite(grid.spacing[k]) || !std::isfinite(grid.origin[k])) {
      std::ostringstream s;
      s << what << ": dimension " << k << " has origin " << grid.origin[k] << " and spacing " << grid.spacing[k]
        << "; both must be finite and the spacing positive";
      throw Error(s.str());
    }
  }
}

std::string xdmf_document(const UniformGrid& grid, std::span<const XdmfStep> steps) {
  check_grid(grid, "xdmf_document");
  const std::size_t d = grid.cells.size();
  const std::string points = zyx(grid.cells, [](std::size_t n) { return n + 1; });
  const std::string cells = zyx(grid.cells, [](std::size_t n) { return n; });
  const std::string origin = zyx(grid.origin, [](double v) { return v; });
  const std::string spacing = zyx(grid.spacing, [](double v) { return v; });
  const std::string topology = d == 3 ? "3DCoRectMesh" : "2DCoRectMesh";
  const std::string geometry = d == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY";

  std::ostringstream x;
  x << std::setprecision(17);
  x << "<?xml version=\"1.0\" ?>\n"
    << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
    << "<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
    << "  <Domain>\n"
    << "    <Grid Name=\"series\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfStep& step : steps) {
    x << "      <Grid Name=\"step_" << std::setw(6) << std::setfill('0') << step.step << std::setfill(' ')
      << "\" GridType=\"Uniform\">\n"
      << "        <Time Value=\"" << step.time << "\"/>\n"
      << "        <Topology TopologyType=\"" << topology << "\" Dimensions=\"" << points << "\"/>\n"
      << "        <Geometry GeometryType=\"" << geometry << "\">\n"
      << "          <DataItem Name=\"Origin\" Dimensions=\"" << d
      << "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" << origin << "</DataItem>\n"
      << "          <DataItem Name=\"Spacing\" Dimensions=\"" << d
      << "\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">" << spacing << "</DataItem>\n"
      << "        </Geometry>\n";
    for (const XdmfField& f : step.fields) {
      if (f.precision != 4 && f.precision != 8)
        throw Error("xdmf_document: field '" + f.name + "' has precision " + std::to_string(f.precision) +
                    "; XDMF floats are 4 or 8 bytes");
      x << "        <Attribute Name=\"" << escaped(f.name) << "\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
        << "          <DataItem Dimensions=\"" << cells << "\" NumberType=\"Float\" Precision=\"" << f.precision
        << "\" Format=\"HDF\">" << escaped(f.hdf5_path) << "</DataItem>\n"
        << "        </Attribute>\n";
    }
    x << "      </Grid>\n";
  }
  x << "    </Grid>\n"
    << "  </Domain>\n"
    << "</Xdmf>\n";
  return x.str();
}

}  // namespace tessera::io
