#pragma once
// Element-wise operations of the catalog: Map with one to three inputs and MapIndexed. The
// lambda runs on every element where the firing runs (a parallel loop on the host, the device's
// stream, a CUDA grid where the file is compiled by nvcc: mark it TESSERA_HOST_DEVICE there).
//
//   auto& sq = flow::map<double>(f, "square", [](double x) { return x * x; });
//   auto& ax = flow::map2<double, double>(f, "axpy", [](double x, double y) { return 2 * x + y; });

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/flow/context.hpp"
#include "tessera/flow/flow.hpp"
#include "tessera/flow/operation.hpp"

namespace tessera::flow {

namespace detail {
[[noreturn]] void throw_shapes_differ(const std::string& op, std::span<const std::size_t> a,
                                      std::span<const std::size_t> b);
template <std::size_t D>
void check_same_shape(const Operation& op, const std::array<std::size_t, D>& a, const std::array<std::size_t, D>& b) {
  if (a != b) throw_shapes_differ(op.name(), a, b);
}
}  // namespace detail

/// g(f(x)): what Map∘Map fuses into.
template <typename F, typename G>
struct Compose {
  F f;
  G g;
  template <typename X>
  TESSERA_HOST_DEVICE auto operator()(const X& x) const {
    return g(f(x));
  }
};

/// y[i] = f(x[i]).
template <typename T, std::size_t D, typename F, typename Variant = tessera::detail::build_variant>
class Map : public Operation {
 public:
  using result_type = std::invoke_result_t<const F&, T>;
  InputPort<Array<T, D>, Map> input{*this, "input"};
  OutputPort<Array<result_type, D>, Map> output{*this, "output"};

  Map(std::string name, F f) : Operation(std::move(name)), f_(std::move(f)) {}
  void fire(Context& c) override {
    const auto& x = c.get(input);
    auto y = c.allocate<result_type>(x.shape());
    result_type* const py = y.data;
    const T* px = c.read(x);
    const auto f = f_;
    auto body = [px, py, f] TESSERA_HOST_DEVICE(std::size_t i) { py[i] = f(px[i]); };
    c.launch<decltype(body), Variant>(name(), x.size(), body);
    c.emit(output, std::move(y.array));
  }
  const F& function() const noexcept { return f_; }

 private:
  F f_;
};

/// z[i] = f(x[i], y[i]); the inputs must have one shape.
template <typename A, typename B, std::size_t D, typename F, typename Variant = tessera::detail::build_variant>
class Map2 : public Operation {
 public:
  using result_type = std::invoke_result_t<const F&, A, B>;
  InputPort<Array<A, D>, Map2> first{*this, "first"};
  InputPort<Array<B, D>, Map2> second{*this, "second"};
  OutputPort<Array<result_type, D>, Map2> output{*this, "output"};

  Map2(std::string name, F f) : Operation(std::move(name)), f_(std::move(f)) {}
  void fire(Context& c) override {
    const auto& x = c.get(first);
    const auto& y = c.get(second);
    detail::check_same_shape(*this, x.shape(), y.shape());
    auto z = c.allocate<result_type>(x.shape());
    result_type* const pz = z.data;
    const A* px = c.read(x);
    const B* py = c.read(y);
    const auto f = f_;
    auto body = [px, py, pz, f] TESSERA_HOST_DEVICE(std::size_t i) { pz[i] = f(px[i], py[i]); };
    c.launch<decltype(body), Variant>(name(), x.size(), body);
    c.emit(output, std::move(z.array));
  }

 private:
  F f_;
};

/// r[i] = f(x[i], y[i], z[i]); the inputs must have one shape.
template <typename A, typename B, typename C, std::size_t D, typename F,
          typename Variant = tessera::detail::build_variant>
class Map3 : public Operation {
 public:
  using result_type = std::invoke_result_t<const F&, A, B, C>;
  InputPort<Array<A, D>, Map3> first{*this, "first"};
  InputPort<Array<B, D>, Map3> second{*this, "second"};
  InputPort<Array<C, D>, Map3> third{*this, "third"};
  OutputPort<Array<result_type, D>, Map3> output{*this, "output"};

  Map3(std::string name, F f) : Operation(std::move(name)), f_(std::move(f)) {}
  void fire(Context& c) override {
    const auto& x = c.get(first);
    const auto& y = c.get(second);
    const auto& z = c.get(third);
    detail::check_same_shape(*this, x.shape(), y.shape());
    detail::check_same_shape(*this, x.shape(), z.shape());
    auto r = c.allocate<result_type>(x.shape());
    result_type* const pr = r.data;
    const A* px = c.read(x);
    const B* py = c.read(y);
    const C* pz = c.read(z);
    const auto f = f_;
    auto body = [px, py, pz, pr, f] TESSERA_HOST_DEVICE(std::size_t i) { pr[i] = f(px[i], py[i], pz[i]); };
    c.launch<decltype(body), Variant>(name(), x.size(), body);
    c.emit(output, std::move(r.array));
  }

 private:
  F f_;
};

/// y[i] = f(i, x[i]), i the row-major flat index.
template <typename T, std::size_t D, typename F, typename Variant = tessera::detail::build_variant>
class MapIndexed : public Operation {
 public:
  using result_type = std::invoke_result_t<const F&, std::size_t, T>;
  InputPort<Array<T, D>, MapIndexed> input{*this, "input"};
  OutputPort<Array<result_type, D>, MapIndexed> output{*this, "output"};

  MapIndexed(std::string name, F f) : Operation(std::move(name)), f_(std::move(f)) {}
  void fire(Context& c) override {
    const auto& x = c.get(input);
    auto y = c.allocate<result_type>(x.shape());
    result_type* const py = y.data;
    const T* px = c.read(x);
    const auto f = f_;
    auto body = [px, py, f] TESSERA_HOST_DEVICE(std::size_t i) { py[i] = f(i, px[i]); };
    c.launch<decltype(body), Variant>(name(), x.size(), body);
    c.emit(output, std::move(y.array));
  }

 private:
  F f_;
};

template <typename T, std::size_t D = 1, typename F, typename Variant = tessera::detail::build_variant>
Map<T, D, F, Variant>& map(Flow& flow, std::string name, F f) {
  return flow.add<Map<T, D, F, Variant>>(std::move(name), std::move(f));
}
template <typename A, typename B, std::size_t D = 1, typename F, typename Variant = tessera::detail::build_variant>
Map2<A, B, D, F, Variant>& map2(Flow& flow, std::string name, F f) {
  return flow.add<Map2<A, B, D, F, Variant>>(std::move(name), std::move(f));
}
template <typename A, typename B, typename C, std::size_t D = 1, typename F,
          typename Variant = tessera::detail::build_variant>
Map3<A, B, C, D, F, Variant>& map3(Flow& flow, std::string name, F f) {
  return flow.add<Map3<A, B, C, D, F, Variant>>(std::move(name), std::move(f));
}
template <typename T, std::size_t D = 1, typename F, typename Variant = tessera::detail::build_variant>
MapIndexed<T, D, F, Variant>& map_indexed(Flow& flow, std::string name, F f) {
  return flow.add<MapIndexed<T, D, F, Variant>>(std::move(name), std::move(f));
}

}  // namespace tessera::flow
