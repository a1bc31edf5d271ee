#pragma once
// Mathematical operations of the catalog:
//
//   MatrixProduct<T>        left (Matrix<T> m x k), right (k x n)   -> output (Matrix<T> m x n)
//   MatrixVectorProduct<T>  left (Matrix<T> m x n), right (Vector n) -> output (Vector<T> m)
//   CartesianProduct<A, B>  first (Vector<A> m), second (Vector<B> n) -> output (Matrix m x n): f(a_i, b_j)
//   Convolution<T>          signal (Vector<T>), kernel (Vector<T>)   -> output: the signal's length,
//                           y[i] = sum_j kernel[j] * signal[i + K/2 - j], zero outside
//
// Products run on OpenBLAS on the host (and on a simulated device's thread) and cuBLAS on a
// CUDA GPU. Fusion gives MatrixProduct transposed operands (a Transpose before it) and an
// element-wise epilogue (a Map after it).

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/core/host_device.hpp"
#include "tessera/flow/catalog/reduction.hpp"
#include "tessera/flow/context.hpp"
#include "tessera/flow/detail/blas.hpp"
#include "tessera/flow/operation.hpp"

namespace tessera::flow {

namespace detail {
[[noreturn]] void throw_product_shapes(const std::string& op, std::size_t m, std::size_t k, std::size_t k2,
                                       std::size_t n);
}

/// How a MatrixProduct reads its operands (fusion sets these).
struct ProductOptions {
  bool transpose_left = false;   ///< use the left operand transposed
  bool transpose_right = false;  ///< use the right operand transposed
  bool right_first = false;      ///< input 0 is the right operand (a Transpose fused into it)
};

/// output = op(left) x op(right), then epilogue(x) on each element (the identity unless fused).
template <typename T, typename Epilogue = detail::Identity, typename Variant = tessera::detail::build_variant>
class MatrixProduct : public Operation {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "MatrixProduct multiplies float or double");

 public:
  using epilogue_type = Epilogue;
  static constexpr bool has_epilogue = !std::is_same_v<Epilogue, detail::Identity>;

 private:
  ProductOptions options_;  // before the ports: their names depend on it

 public:
  InputPort<Matrix<T>, MatrixProduct> left{*this, options_.right_first ? "right" : "left"};
  InputPort<Matrix<T>, MatrixProduct> right{*this, options_.right_first ? "left" : "right"};
  OutputPort<Matrix<T>, MatrixProduct> output{*this, "output"};

  explicit MatrixProduct(std::string name = "matrix product", ProductOptions options = {}, Epilogue epilogue = {})
      : Operation(std::move(name)), options_(options), epilogue_(std::move(epilogue)) {}

  void fire(Context& c) override {
    const Matrix<T>& a = c.get(options_.right_first ? right : left);
    const Matrix<T>& b = c.get(options_.right_first ? left : right);
    const bool ta = options_.transpose_left, tb = options_.transpose_right;
    const std::size_t m = ta ? a.extent(1) : a.extent(0);
    const std::size_t k = ta ? a.extent(0) : a.extent(1);
    const std::size_t k2 = tb ? b.extent(1) : b.extent(0);
    const std::size_t n = tb ? b.extent(0) : b.extent(1);
    if (k != k2) detail::throw_product_shapes(name(), m, k, k2, n);
    auto p = c.allocate<T>(std::array<std::size_t, 2>{m, n});
    T* const pp = p.data;
    const T* pa = c.read(a);
    const T* pb = c.read(b);
    detail::GemmEpilogue<T> epi;
    if constexpr (has_epilogue) {
      epi.apply = [](const void* ctx, T* x, std::size_t count) {
        const Epilogue& e = *static_cast<const Epilogue*>(ctx);
        for (std::size_t i = 0; i < count; ++i) x[i] = e(x[i]);
      };
      epi.context = &epilogue_;
    }
    if (!detail::gemm(c, ta, tb, m, n, k, pa, pb, pp, epi)) {
      if constexpr (has_epilogue) {  // a CUDA device: the epilogue is a kernel after cuBLAS
        const auto e = epilogue_;
        auto body = [pp, e] TESSERA_HOST_DEVICE(std::size_t i) { pp[i] = e(pp[i]); };
        c.launch<decltype(body), Variant>(name(), m * n, body);
      }
    }
    c.emit(output, std::move(p.array));
  }
  const ProductOptions& options() const noexcept { return options_; }
  const Epilogue& epilogue() const noexcept { return epilogue_; }

 private:
  Epilogue epilogue_;
};

template <typename T, typename Variant = tessera::detail::build_variant>
class MatrixVectorProduct : public Operation {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "MatrixVectorProduct multiplies float or double");

 public:
  InputPort<Matrix<T>, MatrixVectorProduct> left{*this, "left"};
  InputPort<Vector<T>, MatrixVectorProduct> right{*this, "right"};
  OutputPort<Vector<T>, MatrixVectorProduct> output{*this, "output"};

  explicit MatrixVectorProduct(std::string name = "matrix-vector product") : Operation(std::move(name)) {}
  void fire(Context& c) override {
    const auto& a = c.get(left);
    const auto& x = c.get(right);
    const std::size_t m = a.extent(0), n = a.extent(1);
    if (x.size() != n) detail::throw_product_shapes(name(), m, n, x.size(), 1);
    auto y = c.allocate<T>(std::array<std::size_t, 1>{m});
    T* const py = y.data;
    detail::gemm(c, false, false, m, 1, n, c.read(a), c.read(x), py);
    c.emit(output, std::move(y.array));
  }
};

template <typename A, typename B, typename F, typename Variant = tessera::detail::build_variant>
class CartesianProduct : public Operation {
 public:
  using result_type = std::invoke_result_t<const F&, A, B>;
  InputPort<Vector<A>, CartesianProduct> first{*this, "first"};
  InputPort<Vector<B>, CartesianProduct> second{*this, "second"};
  OutputPort<Matrix<result_type>, CartesianProduct> output{*this, "output"};

  CartesianProduct(std::string name, F f) : Operation(std::move(name)), f_(std::move(f)) {}
  void fire(Context& c) override {
    const auto& a = c.get(first);
    const auto& b = c.get(second);
    const std::size_t m = a.size(), n = b.size();
    auto r = c.allocate<result_type>(std::array<std::size_t, 2>{m, n});
    result_type* const pr = r.data;
    const A* pa = c.read(a);
    const B* pb = c.read(b);
    const auto f = f_;
    auto body = [pa, pb, pr, n, f] TESSERA_HOST_DEVICE(std::size_t o) { pr[o] = f(pa[o / n], pb[o % n]); };
    c.launch<decltype(body), Variant>(name(), m * n, body);
    c.emit(output, std::move(r.array));
  }

 private:
  F f_;
};

template <typename T, typename Variant = tessera::detail::build_variant>
class Convolution : public Operation {
 public:
  InputPort<Vector<T>, Convolution> signal{*this, "signal"};
  InputPort<Vector<T>, Convolution> kernel{*this, "kernel"};
  OutputPort<Vector<T>, Convolution> output{*this, "output"};

  explicit Convolution(std::string name = "convolution") : Operation(std::move(name)) {}
  void fire(Context& c) override {
    const auto& x = c.get(signal);
    const auto& w = c.get(kernel);
    const std::size_t n = x.size(), kn = w.size();
    auto y = c.allocate<T>(x.shape());
    T* const py = y.data;
    const T* px = c.read(x);
    const T* pw = c.read(w);
    const std::ptrdiff_t half = static_cast<std::ptrdiff_t>(kn / 2);
    auto body = [px, pw, py, n, kn, half] TESSERA_HOST_DEVICE(std::size_t i) {
      T acc = T(0);
      for (std::size_t j = 0; j < kn; ++j) {
        const std::ptrdiff_t s = static_cast<std::ptrdiff_t>(i) + half - static_cast<std::ptrdiff_t>(j);
        if (s >= 0 && s < static_cast<std::ptrdiff_t>(n)) acc += pw[j] * px[s];
      }
      py[i] = acc;
    };
    c.launch<decltype(body), Variant>(name(), n, body);
    c.emit(output, std::move(y.array));
  }
};

template <typename A, typename B, typename F, typename Variant = tessera::detail::build_variant>
CartesianProduct<A, B, F, Variant>& cartesian_product(Flow& flow, std::string name, F f) {
  return flow.add<CartesianProduct<A, B, F, Variant>>(std::move(name), std::move(f));
}

}  // namespace tessera::flow
