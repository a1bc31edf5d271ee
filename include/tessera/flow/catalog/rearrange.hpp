#pragma once
// Operations that move elements without arithmetic:
//
//   Transpose<T>   input (Matrix<T>, m x n)                       -> output (Matrix<T>, n x m)
//   Gather<T>      values (Vector<T>), indices (Vector<int64_t>)  -> output: values[indices[i]]
//                  (T{} where an index is outside the values)

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/flow/context.hpp"
#include "tessera/flow/operation.hpp"

namespace tessera::flow {

template <typename T, typename Variant = tessera::detail::build_variant>
class Transpose : public Operation {
 public:
  InputPort<Matrix<T>, Transpose> input{*this, "input"};
  OutputPort<Matrix<T>, Transpose> output{*this, "output"};

  explicit Transpose(std::string name = "transpose") : Operation(std::move(name)) {}
  void fire(Context& c) override {
    const auto& a = c.get(input);
    const std::size_t m = a.extent(0), n = a.extent(1);
    auto t = c.allocate<T>(std::array<std::size_t, 2>{n, m});
    T* const pt = t.data;
    const T* pa = c.read(a);
    // One kernel index per 32 x 32 tile: within a tile both the reads and the writes stay in a
    // few cache lines (a strided read per element, and a division per element, cost 2x).
    constexpr std::size_t tile = 32;
    const std::size_t tiles_i = (m + tile - 1) / tile, tiles_j = (n + tile - 1) / tile;
    auto body = [pa, pt, m, n, tiles_i] TESSERA_HOST_DEVICE(std::size_t k) {
      const std::size_t i0 = (k % tiles_i) * tile, j0 = (k / tiles_i) * tile;
      const std::size_t i1 = i0 + tile < m ? i0 + tile : m, j1 = j0 + tile < n ? j0 + tile : n;
      for (std::size_t j = j0; j < j1; ++j)
        for (std::size_t i = i0; i < i1; ++i) pt[j * m + i] = pa[i * n + j];  // t(j, i) = a(i, j)
    };
    c.launch<decltype(body), Variant>(name(), tiles_i * tiles_j, body);
    c.emit(output, std::move(t.array));
  }
};

template <typename T, typename Variant = tessera::detail::build_variant>
class Gather : public Operation {
 public:
  InputPort<Vector<T>, Gather> values{*this, "values"};
  InputPort<Vector<std::int64_t>, Gather> indices{*this, "indices"};
  OutputPort<Vector<T>, Gather> output{*this, "output"};

  explicit Gather(std::string name = "gather") : Operation(std::move(name)) {}
  void fire(Context& c) override {
    const auto& v = c.get(values);
    const auto& idx = c.get(indices);
    auto g = c.allocate<T>(idx.shape());
    T* const pg = g.data;
    const T* pv = c.read(v);
    const std::int64_t* pi = c.read(idx);
    const std::int64_t n = static_cast<std::int64_t>(v.size());
    auto body = [pv, pi, pg, n] TESSERA_HOST_DEVICE(std::size_t i) {
      const std::int64_t k = pi[i];
      pg[i] = (k >= 0 && k < n) ? pv[k] : T{};
    };
    c.launch<decltype(body), Variant>(name(), idx.size(), body);
    c.emit(output, std::move(g.array));
  }
};

}  // namespace tessera::flow
