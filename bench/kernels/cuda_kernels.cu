// GPU side of SUITE=kernels (CUDA builds): SAXPY through for_each against cublasSaxpy, the
// particle update in Strided against Contiguous, and the FORCE flux difference with the state
// staged `in_shared` against reading it from global memory. Same interleaved rounds and checks
// as the CPU rows; skipped with a printed reason when there is no GPU. The flux difference in
// each layout is also timed against a hand-written CUDA kernel over separate arrays (the GPU
// counterpart of the OpenMP baseline), up to 16k^2.
#include "baselines.hpp"
#include "euler.hpp"
#include "kernels.hpp"
#include "particle.hpp"

#include <tessera/device/device_set.hpp>
#include <tessera/exec.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

namespace tessera::bench {

namespace {

// Kernels as function objects: nvcc's extended __host__ __device__ lambdas cannot be generic.
struct Saxpy {
  template <typename X, typename Y>
  TESSERA_HOST_DEVICE void operator()(X xi, Y yi, float k) const { *yi = k * *xi + *yi; }
};
struct UpdateParticle {
  template <typename P>
  TESSERA_HOST_DEVICE void operator()(P p, float dt) const { p->update(dt); }
};
struct FluxDifference {
  template <typename It>
  TESSERA_HOST_DEVICE static Conserved<float> load(const It& it) {
    const auto f = *it;
    return conserved(f.density(), f.energy(), f.u(), f.v());
  }
  template <typename C, typename D>
  TESSERA_HOST_DEVICE void operator()(C c, D d, float dtdx) const {
    const Conserved<float> r = flux_difference(load(c), load(c.offset(0, -1)), load(c.offset(0, 1)),
                                               load(c.offset(1, -1)), load(c.offset(1, 1)), dtdx);
    auto w = *d;
    w.density() = r.rho;
    w.energy() = r.e;
    w.u() = r.mx;
    w.v() = r.my;
  }
};

/// Times GPU work on the host clock: every variant returns only once its work is done.
void saxpy_vs_cublas(Report& report, const Settings& s, Executor& ex, MemoryManager& memory) {
  const std::size_t n = s.quick ? 20'000'000 : 100'000'000;
  const float a = 0.5f;
  std::vector<float> xs(n), ys(n);
  for (std::size_t i = 0; i < n; ++i) {
    xs[i] = static_cast<float>(i % 1024) * 0.25f;
    ys[i] = static_cast<float>(i % 7);
  }
  Tensor<float, 1> x(memory, Extent<1>{n}, TensorOptions<1>{}.named("x"));
  Tensor<float, 1> y(memory, Extent<1>{n}, TensorOptions<1>{}.named("y"));
  x.fill_from(xs.data());
  y.fill_from(ys.data());
  float *dx = nullptr, *dy = nullptr;
  cublasHandle_t handle = nullptr;
  if (cudaMalloc(&dx, n * sizeof(float)) != cudaSuccess || cudaMalloc(&dy, n * sizeof(float)) != cudaSuccess ||
      cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::printf("gpu saxpy skipped: cannot allocate the cuBLAS baseline's %zu floats\n", 2 * n);
    cudaFree(dx);
    cudaFree(dy);
    return;
  }
  cudaMemcpy(dx, xs.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, ys.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  const int count = static_cast<int>(n);

  const auto r = Interleaved::run(
      s.rounds,
      {{"tessera",
        [&] { for_each(ex, Saxpy{}, x, y, a); }},
       {"cublas", [&] {
          cublasSaxpy(handle, count, &a, dx, 1, dy, 1);
          cudaDeviceSynchronize();
        }}});
  const double bytes = 12.0 * static_cast<double>(n);
  const std::string name = "gpu-saxpy-" + std::to_string(n);
  report_pair(report, name, r, "tessera", "cublas", bytes);

  std::vector<float> got(n), want(n);
  y.gather_to(got.data());
  cudaMemcpy(want.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      mismatch(name + ": y[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", cuBLAS gave " +
               std::to_string(want[i]));
      break;
    }
  cublasDestroy(handle);
  cudaFree(dx);
  cudaFree(dy);
}

template <typename L>
Tensor<Particle<float>, 3, L> particles_on_gpu(MemoryManager& memory, const Extent<3>& size) {
  Tensor<Particle<float>, 3, L> t(memory, size, TensorOptions<3>{}.named("particles"));
  std::vector<Particle<float>> dense(size.volume());
  for (std::size_t k = 0; k < dense.size(); ++k) dense[k] = initial_particle<float>(k);
  t.fill_from(dense.data());
  return t;
}

void particles_strided_vs_contiguous(Report& report, const Settings& s, Executor& ex, MemoryManager& memory) {
  const Extent<3> size = s.quick ? Extent<3>{1000, 100, 20} : Extent<3>{1000, 100, 100};
  auto soa = particles_on_gpu<Strided>(memory, size);
  auto aos = particles_on_gpu<Contiguous>(memory, size);
  const UpdateParticle update;
  const auto r = Interleaved::run(s.rounds, {{"tessera-strided", [&] { for_each(ex, update, soa, 0.5f); }},
                                             {"tessera-contiguous", [&] { for_each(ex, update, aos, 0.5f); }}});
  const double bytes = 9.0 * sizeof(float) * static_cast<double>(size.volume());
  const std::string name = "gpu-particles-float-" + std::to_string(size.volume());
  report_pair(report, name, r, "tessera-strided", "tessera-contiguous", bytes);
  std::vector<Particle<float>> a(size.volume()), b(size.volume());
  soa.gather_to(a.data());
  aos.gather_to(b.data());
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(a[k].position() == b[k].position() && a[k].velocity() == b[k].velocity())) {
      mismatch(name + ": particle " + std::to_string(k) + " differs between Strided and Contiguous");
      break;
    }
}

/// An n x n fluid field with the one-cell padding the flux stencil reads.
template <typename L>
Tensor<Fluid<float>, 2, L> flux_field(MemoryManager& memory, std::size_t n, const char* name) {
  TensorOptions<2> o;
  o.with_padding(1);
  return Tensor<Fluid<float>, 2, L>(memory, Extent<2>{n, n}, o.named(name));
}

/// The initial state in such a field, its padding loaded as ZeroGradient.
template <typename L>
Tensor<Fluid<float>, 2, L> flux_state(MemoryManager& memory, const std::vector<Fluid<float>>& dense, std::size_t n) {
  auto u = flux_field<L>(memory, n, "state");
  u.fill_from(dense.data());
  u.load_boundary(ZeroGradient{});
  return u;
}

template <typename L>
void flux_in_shared(Report& report, const Settings& s, Executor& ex, MemoryManager& memory, const char* layout_name) {
  using T = float;
  const std::size_t n = s.quick ? 1024 : 4096;
  const std::vector<Fluid<T>> dense = initial_state<T>(n);
  auto u = flux_state<L>(memory, dense, n);
  auto shared_out = flux_field<L>(memory, n, "flux-shared");
  auto read_only_out = flux_field<L>(memory, n, "flux-shared-read-only");
  auto global_out = flux_field<L>(memory, n, "flux-global");
  const FluxDifference kernel;
  const T dtdx = T(0.1);
  // in_shared(read_only(u)) skips each thread block's copy of its tile back to global memory.
  const auto r = Interleaved::run(
      s.rounds, {{"in_shared", [&] { for_each(ex, kernel, in_shared(u), shared_out, dtdx); }},
                 {"in_shared-read-only",
                  [&] { for_each(ex, kernel, in_shared(read_only(u)), write_only(read_only_out), dtdx); }},
                 {"global", [&] { for_each(ex, kernel, u, global_out, dtdx); }}});
  const double bytes = 2.0 * 4 * sizeof(T) * static_cast<double>(n * n);
  const std::string name = "gpu-force-flux-" + std::to_string(n) + "^2-" + layout_name;
  report_pair(report, name, r, "in_shared", "global", bytes);
  report_pair(report, name, r, "in_shared-read-only", "global", bytes);
  report_pair(report, name, r, "in_shared-read-only", "in_shared", bytes);
  std::vector<Fluid<T>> a(n * n), b(n * n), c(n * n);
  shared_out.gather_to(a.data());
  global_out.gather_to(b.data());
  read_only_out.gather_to(c.data());
  for (std::size_t k = 0; k < a.size(); ++k) {
    const T x[4] = {a[k].density(), a[k].energy(), a[k].u(), a[k].v()};
    const T y[4] = {b[k].density(), b[k].energy(), b[k].u(), b[k].v()};
    const T z[4] = {c[k].density(), c[k].energy(), c[k].u(), c[k].v()};
    auto close = [](T p, T q) { return std::abs(p - q) <= T(1e-5) * std::max({std::abs(p), std::abs(q), T(1e-3)}); };
    for (int m = 0; m < 4; ++m)
      if (!close(x[m], y[m]) || !close(z[m], y[m])) {
        mismatch(name + ": cell " + std::to_string(k) + " component " + std::to_string(m) + ": in_shared " +
                 std::to_string(x[m]) + ", in_shared(read_only) " + std::to_string(z[m]) + ", global " +
                 std::to_string(y[m]));
        return;
      }
  }
}

/// The CUDA kernel an engineer would write for the flux difference: one (n+2)^2 array per
/// component with a one-cell halo, one thread per cell, in for_each's default 64 x 4 blocks, so
/// that only the addressing differs from tessera's.
__global__ void flux_soa_hand_written(baseline::FluidSoA<float> in, baseline::FluidSoA<float> out, unsigned n,
                                      float dtdx) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  const float* __restrict__ rho = in.rho;
  const float* __restrict__ e = in.e;
  const float* __restrict__ u = in.u;
  const float* __restrict__ v = in.v;
  const std::ptrdiff_t w = static_cast<std::ptrdiff_t>(n) + 2;
  const std::ptrdiff_t k = (static_cast<std::ptrdiff_t>(j) + 1) * w + i + 1;
  auto at = [&](std::ptrdiff_t m) { return conserved(rho[m], e[m], u[m], v[m]); };
  const Conserved<float> d = flux_difference(at(k), at(k - 1), at(k + 1), at(k - w), at(k + w), dtdx);
  const std::size_t o = static_cast<std::size_t>(j) * n + i;
  out.rho[o] = d.rho;
  out.e[o] = d.e;
  out.u[o] = d.mx;
  out.v[o] = d.my;
}

/// The hand-written version's device arrays: the padded state (halo as ZeroGradient) and the
/// n x n result, four components each.
class HandWrittenFlux {
 public:
  HandWrittenFlux(const std::vector<Fluid<float>>& dense, std::size_t n) : n_(n) {
    const std::size_t w = n + 2, cells = w * w;
    if (cudaMalloc(&in_, 4 * cells * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&out_, 4 * n * n * sizeof(float)) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    std::vector<float> host(4 * cells);
    for (std::size_t j = 0; j < w; ++j)
      for (std::size_t i = 0; i < w; ++i) {
        const Fluid<float>& f = dense[zero_gradient_source(n, j) * n + zero_gradient_source(n, i)];
        const std::size_t k = j * w + i;
        host[k] = f.density();
        host[cells + k] = f.energy();
        host[2 * cells + k] = f.u();
        host[3 * cells + k] = f.v();
      }
    ok_ = cudaMemcpy(in_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess;
    in_arrays_ = {in_, in_ + cells, in_ + 2 * cells, in_ + 3 * cells};
    out_arrays_ = {out_, out_ + n * n, out_ + 2 * n * n, out_ + 3 * n * n};
  }
  ~HandWrittenFlux() {
    cudaFree(in_);
    cudaFree(out_);
  }
  HandWrittenFlux(const HandWrittenFlux&) = delete;
  HandWrittenFlux& operator=(const HandWrittenFlux&) = delete;

  bool ok() const { return ok_; }
  void run(float dtdx) {
    const dim3 block(64, 4), grid(static_cast<unsigned>((n_ + 63) / 64), static_cast<unsigned>((n_ + 3) / 4));
    flux_soa_hand_written<<<grid, block>>>(in_arrays_, out_arrays_, static_cast<unsigned>(n_), dtdx);
    if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) ok_ = false;
  }
  /// Component m (density, energy, u, v) of cell k at [m * n * n + k] of the last result; empty
  /// when a launch or the copy failed, which the comparison reports as a mismatch.
  std::vector<float> result() const {
    std::vector<float> host(4 * n_ * n_);
    if (!ok_ || cudaMemcpy(host.data(), out_, host.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess)
      return {};
    return host;
  }

 private:
  std::size_t n_;
  float* in_ = nullptr;
  float* out_ = nullptr;
  bool ok_ = false;
  baseline::FluidSoA<float> in_arrays_{}, out_arrays_{};
};

template <typename L>
void flux_vs_hand_written(Report& report, const Settings& s, Executor& ex, MemoryManager& memory,
                          const std::vector<Fluid<float>>& dense, HandWrittenFlux& hand, std::size_t n,
                          const char* layout_name) {
  using T = float;
  auto u = flux_state<L>(memory, dense, n);
  auto out = flux_field<L>(memory, n, "flux-difference");
  const FluxDifference kernel;
  const T dtdx = T(0.1);
  const auto r = Interleaved::run(s.rounds, {{"tessera", [&] { for_each(ex, kernel, u, out, dtdx); }},
                                             {"cuda-hand-soa", [&] { hand.run(dtdx); }}});
  const double bytes = 2.0 * 4 * sizeof(T) * static_cast<double>(n * n);
  const std::string name = "gpu-force-flux-" + std::to_string(n) + "^2-" + layout_name;
  report_pair(report, name, r, "tessera", "cuda-hand-soa", bytes);
  std::vector<Fluid<T>> got(n * n);
  out.gather_to(got.data());
  const std::vector<T> want = hand.result();
  if (want.empty()) {
    mismatch(name + ": the hand-written CUDA kernel failed, so there is nothing to compare with");
    return;
  }
  // The results are differences of O(1) fluxes, so nvcc contracting a multiply-add differently
  // in the two kernels moves them by float rounding of O(1) terms (under 1e-6 seen): the
  // bound is relative plus 2e-6 absolute. Reading a wrong neighbour changes a result by about
  // its own size (differences across one cell of a state varying as 0.2 sin(2 pi x): up to
  // 8e-5 at 16k^2), far above the bound at most cells.
  for (std::size_t k = 0; k < got.size(); ++k) {
    const T x[4] = {got[k].density(), got[k].energy(), got[k].u(), got[k].v()};
    for (std::size_t m = 0; m < 4; ++m) {
      const T y = want[m * n * n + k];
      if (std::abs(x[m] - y) > T(1e-5) * std::max(std::abs(x[m]), std::abs(y)) + T(2e-6)) {
        char values[96];
        std::snprintf(values, sizeof values, ": tessera %.9g, hand-written CUDA %.9g", static_cast<double>(x[m]),
                      static_cast<double>(y));
        mismatch(name + ": cell " + std::to_string(k) + " component " + std::to_string(m) + values);
        return;
      }
    }
  }
}

/// The flux difference in each layout against the hand-written CUDA kernel, up to 16k^2
/// (about 4.3 GB per field), where the GPU has room: two fields in tessera's device pool, two
/// outside it for the hand-written arrays.
void flux_layouts_vs_hand_written(Report& report, const Settings& s, Executor& ex, MemoryManager& memory,
                                  const Device& gpu) {
  const std::vector<std::size_t> sizes = s.quick ? std::vector<std::size_t>{1024} : std::vector<std::size_t>{4096, 16384};
  for (std::size_t n : sizes) {
    std::size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    const double field = 16.0 * static_cast<double>((n + 2) * (n + 2));
    const double pool_left = static_cast<double>(gpu.memory_capacity() - gpu.bytes_in_use());
    if (2.2 * field > static_cast<double>(free) || 2.2 * field > pool_left) {
      std::printf("gpu flux %zu^2 skipped: needs about %.1f GB in tessera's pool (%.1f GB left) and as much "
                  "outside it (%.1f GB free)\n",
                  n, 2.2 * field / 1e9, pool_left / 1e9, static_cast<double>(free) / 1e9);
      continue;
    }
    const std::vector<Fluid<float>> dense = initial_state<float>(n);
    HandWrittenFlux hand(dense, n);
    if (!hand.ok()) {
      std::printf("gpu flux %zu^2 skipped: cannot set up the hand-written kernel's arrays\n", n);
      continue;
    }
    flux_vs_hand_written<Strided>(report, s, ex, memory, dense, hand, n, "strided");
    flux_vs_hand_written<Contiguous>(report, s, ex, memory, dense, hand, n, "contiguous");
  }
}

}  // namespace

void run_cuda_kernels(Report& report, const Settings& s) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("gpu kernel rows skipped: no CUDA device on this machine\n");
    return;
  }
  Executor ex;
  DeviceSet devices = DeviceSet::select("cuda:0");
  MemoryManager memory(devices);
  devices.accelerator(0).make_current();
  saxpy_vs_cublas(report, s, ex, memory);
  particles_strided_vs_contiguous(report, s, ex, memory);
  flux_in_shared<Strided>(report, s, ex, memory, "strided");
  flux_in_shared<Contiguous>(report, s, ex, memory, "contiguous");
  flux_layouts_vs_hand_written(report, s, ex, memory, devices.accelerator(0));
  memory.synchronize();
}

}  // namespace tessera::bench
