// Choosing and checking how a distributed tensor is cut over ranks, compiled once.
#include <tessera/core/error.hpp>
#include <tessera/tensor/rank_decomposition.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>

namespace tessera {

namespace {

std::string grid_text(const std::vector<std::size_t>& g) {
  std::ostringstream os;
  os << '{';
  for (std::size_t d = 0; d < g.size(); ++d) os << (d ? ", " : "") << g[d];
  os << '}';
  return os.str();
}

// Halo sites of one layer of padding that a grid cuts: each internal cut across dimension d
// is a face of the product of the other sizes.
double halo_sites(const std::vector<std::size_t>& grid, const std::size_t* sizes) {
  double total = 0;
  for (std::size_t d = 0; d < grid.size(); ++d) {
    double face = 1;
    for (std::size_t k = 0; k < grid.size(); ++k)
      if (k != d) face *= static_cast<double>(sizes[k]);
    total += static_cast<double>(grid[d] - 1) * face;
  }
  return total;
}

}  // namespace

std::size_t RankDecomposition::coord(std::size_t rank, std::size_t dim) const noexcept {
  for (std::size_t d = 0; d < dim; ++d) rank /= grid[d];
  return rank % grid[dim];
}

std::size_t RankDecomposition::rank_of(const std::int64_t* coords) const noexcept {
  std::size_t rank = 0;
  for (std::size_t d = grid.size(); d-- > 0;) {
    std::size_t c = 0;
    while (c + 1 < grid[d] && cuts[d][c + 1] <= coords[d]) ++c;
    rank = rank * grid[d] + c;
  }
  return rank;
}

RankDecomposition make_rank_decomposition(const std::string& name, std::size_t dims, const std::size_t* sizes,
                                          const std::size_t* requested, std::size_t ranks, const std::size_t* blocks) {
  const std::string who = "tensor '" + name + "'";
  auto fits = [&](const std::vector<std::size_t>& g) {
    for (std::size_t d = 0; d < dims; ++d)
      if (sizes[d] / g[d] < blocks[d]) return false;  // the smallest part along d: floor(n / R)
    return true;
  };
  std::size_t given = 0;
  for (std::size_t d = 0; d < dims; ++d) given += requested[d] != 0;
  std::vector<std::size_t> grid(dims, 1);
  if (given == dims) {
    grid.assign(requested, requested + dims);
    std::size_t product = 1;
    for (std::size_t g : grid) product *= g;
    if (product != ranks)
      throw Error(who + ": rank_grid " + grid_text(grid) + " has " + std::to_string(product) +
                  " ranks, but the run has " + std::to_string(ranks) +
                  "; give a grid whose product is the number of ranks, or leave it all zero " + "to have it chosen");
    for (std::size_t d = 0; d < dims; ++d)
      if (sizes[d] / grid[d] < blocks[d])
        throw Error(who + ": rank_grid " + grid_text(grid) + " cuts dimension " + std::to_string(d) + " (" +
                    std::to_string(sizes[d]) + " cells) into parts of " + std::to_string(sizes[d] / grid[d]) +
                    " cells, fewer than the " + std::to_string(blocks[d]) +
                    " blocks each rank cuts its part into; use fewer ranks along it, or fewer partitions");
  } else if (given != 0) {
    throw Error(who + ": rank_grid " + grid_text(std::vector<std::size_t>(requested, requested + dims)) +
                " is partly given; give every dimension's number of ranks, or leave it all zero to have it chosen");
  } else {
    // Every factorisation of `ranks` into `dims` factors; few for any real rank count.
    std::vector<std::size_t> best, trial(dims, 1);
    double best_cost = std::numeric_limits<double>::infinity();
    std::function<void(std::size_t, std::size_t)> search = [&](std::size_t d, std::size_t left) {
      if (d + 1 == dims) {
        trial[d] = left;
        if (!fits(trial)) return;
        const double cost = halo_sites(trial, sizes);
        // Ties keep the first: the search puts small factors first, so it cuts slower dimensions.
        if (cost < best_cost) best_cost = cost, best = trial;
        return;
      }
      for (std::size_t f = 1; f <= left; ++f)
        if (left % f == 0) {
          trial[d] = f;
          search(d + 1, left / f);
        }
    };
    search(0, ranks);
    if (best.empty()) {
      std::ostringstream os;
      os << who << ": cannot cut {";
      for (std::size_t d = 0; d < dims; ++d) os << (d ? ", " : "") << sizes[d];
      os << "} cells over " << ranks << " ranks with " << grid_text(std::vector<std::size_t>(blocks, blocks + dims))
         << " blocks per rank: every way leaves some rank fewer cells than blocks along a dimension; use fewer "
            "ranks, fewer partitions, or a larger tensor";
      throw Error(os.str());
    }
    grid = best;
  }
  RankDecomposition r;
  r.grid = grid;
  r.cuts.resize(dims);
  for (std::size_t d = 0; d < dims; ++d) {
    const std::size_t base = sizes[d] / grid[d], extra = sizes[d] % grid[d];
    std::int64_t at = 0;
    r.cuts[d].push_back(0);
    for (std::size_t i = 0; i < grid[d]; ++i) {
      at += static_cast<std::int64_t>(base + (i < extra ? 1 : 0));
      r.cuts[d].push_back(at);
    }
  }
  return r;
}

}  // namespace tessera

namespace tessera {

std::int64_t declaration_hash(const std::string& s) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return static_cast<std::int64_t>(h);
}

namespace {

std::string list(const std::int64_t* v, std::int64_t n) {
  std::ostringstream os;
  os << '{';
  for (std::int64_t d = 0; d < n; ++d) os << (d ? ", " : "") << v[d];
  os << '}';
  return os.str();
}

// What differs between two declarations, as "sizes {64, 64} against {64, 32}".
std::string difference(const TensorDeclaration& a, const TensorDeclaration& b) {
  std::vector<std::string> parts;
  if (a.dims != b.dims) parts.push_back(std::to_string(a.dims) + " dimensions against " + std::to_string(b.dims));
  if (a.name_hash != b.name_hash) parts.push_back("another name (or another tensor declared in its place)");
  if (a.element_bytes != b.element_bytes || a.type_hash != b.type_hash)
    parts.push_back("another element type or layout (" + std::to_string(a.element_bytes) + "-byte elements against " +
                    std::to_string(b.element_bytes) + ")");
  const std::int64_t n = std::min<std::int64_t>(std::max(a.dims, b.dims), TensorDeclaration::max_dims);
  auto field = [&](const char* what, const std::int64_t* x, const std::int64_t* y) {
    if (!std::equal(x, x + n, y)) parts.push_back(std::string(what) + " " + list(x, n) + " against " + list(y, n));
  };
  field("sizes", a.sizes, b.sizes);
  field("padding", a.padding, b.padding);
  field("partitions", a.partitions, b.partitions);
  field("sub-partitions", a.sub_partitions, b.sub_partitions);
  field("rank_grid", a.rank_grid, b.rank_grid);
  field("periodic", a.periodic, b.periodic);
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

bool same(const TensorDeclaration& a, const TensorDeclaration& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

void check_same_declaration(Ranks& ranks, const std::string& name, const TensorDeclaration& mine) {
  const std::uint64_t channel = ranks.next_channel();
  std::vector<TensorDeclaration> all(static_cast<std::size_t>(ranks.size()));
  all_gather(ranks, channel, &mine, sizeof mine, all.data());
  for (std::size_t k = 1; k < all.size(); ++k) {
    if (same(all[k], all[0])) continue;
    const std::string who = "tensor '" + name + "'";
    const std::string advice =
        "; every rank must declare a distributed tensor with the same sizes and options, in the same order";
    if (static_cast<int>(k) == ranks.rank())
      throw Error(who + ": this rank (" + std::to_string(k) + ") declared it with " + difference(all[k], all[0]) +
                  " on rank 0" + advice);
    throw Error(who + ": rank " + std::to_string(k) + " declared it differently from rank 0 (" +
                difference(all[k], all[0]) + ")" + advice);
  }
}

}  // namespace tessera
