#pragma once
// Reductions of the catalog, each deterministic (catalog/detail/fold.hpp: the same bits for any
// number of workers, on the host, a simulated device or a GPU):
//
//   Reduce<T>         input (Array<T, D>)               -> output (Scalar<T>): op-fold from identity
//   MapReduce<T>      input                             -> output: op-fold of f(x) (Map followed by Reduce, fused)
//   ScalarProduct<T>  first, second (Vector<T>)         -> output (Scalar<T>)
//   Average<T>        input (Array<T, D>)               -> output (Scalar<T>): the mean
//   Variance<T>       input (Array<T, D>)               -> output (Scalar<T>): the sample variance (n - 1)
//   ReduceBy<T>       keys (Vector<int32_t>), values    -> output (Vector<T>, one per key in [0, keys))
//   Scan<T>           input (Vector<T>)                 -> output (Vector<T>): inclusive op-scan

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/flow/catalog/detail/fold.hpp"
#include "tessera/flow/catalog/elementwise.hpp"
#include "tessera/flow/context.hpp"
#include "tessera/flow/flow.hpp"

namespace tessera::flow {

namespace detail {
[[noreturn]] void throw_empty_statistic(const std::string& op, std::size_t n, std::size_t needed);
struct Identity {
  template <typename X>
  TESSERA_HOST_DEVICE X operator()(const X& x) const {
    return x;
  }
};
struct Plus {
  template <typename X>
  TESSERA_HOST_DEVICE X operator()(const X& a, const X& b) const {
    return a + b;
  }
};
}  // namespace detail

template <typename T, std::size_t D, typename Op, typename Variant = tessera::detail::build_variant>
class Reduce : public Operation {
 public:
  InputPort<Array<T, D>, Reduce> input{*this, "input"};
  OutputPort<Scalar<T>, Reduce> output{*this, "output"};

  Reduce(std::string name, T identity, Op op) : Operation(std::move(name)), identity_(identity), op_(std::move(op)) {}
  void fire(Context& c) override {
    const auto& x = c.get(input);
    const std::size_t n = x.size();
    const T* px = c.read(x);
    auto r = detail::fold_to_scalar<Variant>(
        c, name(), n, identity_, op_, [px] TESSERA_HOST_DEVICE(std::size_t i) { return px[i]; }, detail::Identity{});
    c.emit(output, std::move(r.array));
  }
  const T& identity() const noexcept { return identity_; }
  const Op& op() const noexcept { return op_; }

 private:
  T identity_;
  Op op_;
};

/// Reduce of f(x): what a Map followed by a Reduce fuses into (one pass, no array between).
template <typename T, std::size_t D, typename F, typename R, typename Op,
          typename Variant = tessera::detail::build_variant>
class MapReduce : public Operation {
 public:
  InputPort<Array<T, D>, MapReduce> input{*this, "input"};
  OutputPort<Scalar<R>, MapReduce> output{*this, "output"};

  MapReduce(std::string name, F f, R identity, Op op)
      : Operation(std::move(name)), f_(std::move(f)), identity_(identity), op_(std::move(op)) {}
  void fire(Context& c) override {
    const auto& x = c.get(input);
    const std::size_t n = x.size();
    const T* px = c.read(x);
    const auto f = f_;
    auto r = detail::fold_to_scalar<Variant>(
        c, name(), n, identity_, op_, [px, f] TESSERA_HOST_DEVICE(std::size_t i) { return static_cast<R>(f(px[i])); },
        detail::Identity{});
    c.emit(output, std::move(r.array));
  }

 private:
  F f_;
  R identity_;
  Op op_;
};

template <typename T, std::size_t D = 1, typename Op, typename Variant = tessera::detail::build_variant>
Reduce<T, D, Op, Variant>& reduce(Flow& flow, std::string name, T identity, Op op) {
  return flow.add<Reduce<T, D, Op, Variant>>(std::move(name), identity, std::move(op));
}

/// sum of x[i] * y[i].
template <typename T, typename Variant = tessera::detail::build_variant>
class ScalarProduct : public Operation {
 public:
  InputPort<Vector<T>, ScalarProduct> first{*this, "first"};
  InputPort<Vector<T>, ScalarProduct> second{*this, "second"};
  OutputPort<Scalar<T>, ScalarProduct> output{*this, "output"};

  explicit ScalarProduct(std::string name = "scalar product") : Operation(std::move(name)) {}
  void fire(Context& c) override {
    const auto& x = c.get(first);
    const auto& y = c.get(second);
    detail::check_same_shape(*this, x.shape(), y.shape());
    const std::size_t n = x.size();
    const T* px = c.read(x);
    const T* py = c.read(y);
    auto r = detail::fold_to_scalar<Variant>(
        c, name(), n, T(0), detail::Plus{}, [px, py] TESSERA_HOST_DEVICE(std::size_t i) { return px[i] * py[i]; },
        detail::Identity{});
    c.emit(output, std::move(r.array));
  }
};

/// The mean; an empty array is a tessera::Error.
template <typename T, std::size_t D = 1, typename Variant = tessera::detail::build_variant>
class Average : public Operation {
 public:
  InputPort<Array<T, D>, Average> input{*this, "input"};
  OutputPort<Scalar<T>, Average> output{*this, "output"};

  explicit Average(std::string name = "average") : Operation(std::move(name)) {}
  void fire(Context& c) override {
    const auto& x = c.get(input);
    const std::size_t n = x.size();
    if (n == 0) detail::throw_empty_statistic(name(), n, 1);
    const T* px = c.read(x);
    const T count = static_cast<T>(n);
    auto r = detail::fold_to_scalar<Variant>(
        c, name(), n, T(0), detail::Plus{}, [px] TESSERA_HOST_DEVICE(std::size_t i) { return px[i]; },
        [count] TESSERA_HOST_DEVICE(T s) { return s / count; });
    c.emit(output, std::move(r.array));
  }
};

/// The sample variance, sum (x - mean)^2 / (n - 1), in two passes; fewer than two values is a
/// tessera::Error.
template <typename T, std::size_t D = 1, typename Variant = tessera::detail::build_variant>
class Variance : public Operation {
 public:
  InputPort<Array<T, D>, Variance> input{*this, "input"};
  OutputPort<Scalar<T>, Variance> output{*this, "output"};

  explicit Variance(std::string name = "variance") : Operation(std::move(name)) {}
  void fire(Context& c) override {
    const auto& x = c.get(input);
    const std::size_t n = x.size();
    if (n < 2) detail::throw_empty_statistic(name(), n, 2);
    const T* px = c.read(x);
    const T count = static_cast<T>(n);
    auto mean = detail::fold_to_scalar<Variant>(
        c, name(), n, T(0), detail::Plus{}, [px] TESSERA_HOST_DEVICE(std::size_t i) { return px[i]; },
        [count] TESSERA_HOST_DEVICE(T s) { return s / count; });
    const T* const mean_at = mean.data;  // read on the device, where the first pass left it
    auto r = detail::fold_to_scalar<Variant>(
        c, name(), n, T(0), detail::Plus{},
        [px, mean_at] TESSERA_HOST_DEVICE(std::size_t i) {
          const T d = px[i] - mean_at[0];
          return d * d;
        },
        [count] TESSERA_HOST_DEVICE(T s) { return s / (count - T(1)); });
    c.emit(output, std::move(r.array));
  }
};

/// out[k] = op-fold of the values whose key is k, for k in [0, num_keys), in index order per
/// chunk of the input; values with a key outside [0, num_keys) are left out.
template <typename T, typename Op, typename Variant = tessera::detail::build_variant>
class ReduceBy : public Operation {
 public:
  InputPort<Vector<std::int32_t>, ReduceBy> keys{*this, "keys"};
  InputPort<Vector<T>, ReduceBy> values{*this, "values"};
  OutputPort<Vector<T>, ReduceBy> output{*this, "output"};

  ReduceBy(std::string name, std::size_t num_keys, T identity, Op op)
      : Operation(std::move(name)), num_keys_(num_keys), identity_(identity), op_(std::move(op)) {}
  void fire(Context& c) override {
    const auto& k = c.get(keys);
    const auto& v = c.get(values);
    detail::check_same_shape(*this, k.shape(), v.shape());
    const std::size_t n = v.size();
    const std::size_t chunks = detail::fold_chunks(n);
    const std::size_t nk = num_keys_;
    auto part = c.allocate<T>(std::array<std::size_t, 1>{chunks * nk});
    T* const pp = part.data;
    auto r = c.allocate<T>(std::array<std::size_t, 1>{nk});
    T* const pr = r.data;
    const std::int32_t* pk = c.read(k);
    const T* pv = c.read(v);
    const T id = identity_;
    const auto op = op_;
    auto per_chunk = [=] TESSERA_HOST_DEVICE(std::size_t ch) {
      T* p = pp + ch * nk;
      for (std::size_t j = 0; j < nk; ++j) p[j] = id;
      const std::size_t lo = ch * detail::fold_chunk;
      const std::size_t hi = lo + detail::fold_chunk < n ? lo + detail::fold_chunk : n;
      for (std::size_t i = lo; i < hi; ++i) {
        const std::int32_t key = pk[i];
        if (key >= 0 && static_cast<std::size_t>(key) < nk) p[key] = op(p[key], pv[i]);
      }
    };
    c.launch<decltype(per_chunk), Variant>(name(), chunks, per_chunk);
    auto join = [=] TESSERA_HOST_DEVICE(std::size_t j) {
      T acc = id;
      for (std::size_t ch = 0; ch < chunks; ++ch) acc = op(acc, pp[ch * nk + j]);
      pr[j] = acc;
    };
    c.launch<decltype(join), Variant>(name(), nk, join);
    c.emit(output, std::move(r.array));
  }

 private:
  std::size_t num_keys_;
  T identity_;
  Op op_;
};

/// y[i] = x[0] op x[1] op ... op x[i], in three passes over fixed chunks (chunk totals, their
/// running fold, each chunk's scan from its offset).
template <typename T, typename Op, typename Variant = tessera::detail::build_variant>
class Scan : public Operation {
 public:
  InputPort<Vector<T>, Scan> input{*this, "input"};
  OutputPort<Vector<T>, Scan> output{*this, "output"};

  Scan(std::string name, T identity, Op op) : Operation(std::move(name)), identity_(identity), op_(std::move(op)) {}
  void fire(Context& c) override {
    const auto& x = c.get(input);
    const std::size_t n = x.size();
    const std::size_t chunks = detail::fold_chunks(n);
    auto tot = c.allocate<T>(std::array<std::size_t, 1>{chunks});
    T* const pt = tot.data;
    auto y = c.allocate<T>(x.shape());
    T* const py = y.data;
    const T* px = c.read(x);
    const T id = identity_;
    constexpr std::size_t C = detail::fold_chunk;
    const auto op = op_;
    auto totals = [=] TESSERA_HOST_DEVICE(std::size_t ch) {
      T acc = id;
      const std::size_t hi = (ch + 1) * C < n ? (ch + 1) * C : n;
      for (std::size_t i = ch * C; i < hi; ++i) acc = op(acc, px[i]);
      pt[ch] = acc;
    };
    c.launch<decltype(totals), Variant>(name(), chunks, totals);
    auto offsets = [=] TESSERA_HOST_DEVICE(std::size_t) {  // exclusive, in place
      T acc = id;
      for (std::size_t ch = 0; ch < chunks; ++ch) {
        const T t = pt[ch];
        pt[ch] = acc;
        acc = op(acc, t);
      }
    };
    c.launch<decltype(offsets), Variant>(name(), 1, offsets);
    auto scan = [=] TESSERA_HOST_DEVICE(std::size_t ch) {
      T acc = pt[ch];
      const std::size_t hi = (ch + 1) * C < n ? (ch + 1) * C : n;
      for (std::size_t i = ch * C; i < hi; ++i) {
        acc = op(acc, px[i]);
        py[i] = acc;
      }
    };
    c.launch<decltype(scan), Variant>(name(), n == 0 ? 0 : chunks, scan);
    c.emit(output, std::move(y.array));
  }

 private:
  T identity_;
  Op op_;
};

template <typename T, typename Op, typename Variant = tessera::detail::build_variant>
ReduceBy<T, Op, Variant>& reduce_by(Flow& flow, std::string name, std::size_t num_keys, T identity, Op op) {
  return flow.add<ReduceBy<T, Op, Variant>>(std::move(name), num_keys, identity, std::move(op));
}
template <typename T, typename Op, typename Variant = tessera::detail::build_variant>
Scan<T, Op, Variant>& scan(Flow& flow, std::string name, T identity, Op op) {
  return flow.add<Scan<T, Op, Variant>>(std::move(name), identity, std::move(op));
}

}  // namespace tessera::flow
