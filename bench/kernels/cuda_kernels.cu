// GPU side of SUITE=kernels (CUDA builds): SAXPY through for_each against cublasSaxpy, the
// particle update in Strided against Contiguous, and the FORCE flux difference with the state
// staged `in_shared` against reading it from global memory. Same interleaved rounds and checks
// as the CPU rows; skipped with a printed reason when there is no GPU.
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

template <typename L>
void flux_in_shared(Report& report, const Settings& s, Executor& ex, MemoryManager& memory, const char* layout_name) {
  using T = float;
  const std::size_t n = s.quick ? 1024 : 4096;
  std::vector<Fluid<T>> dense(n * n);
  std::vector<double> sn(n), cs(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double a = 2.0 * std::numbers::pi * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    sn[i] = std::sin(a);
    cs[i] = std::cos(a);
  }
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) {
      T rho, e, u, v;
      initial_fluid(sn[i], cs[i], sn[j], cs[j], rho, e, u, v);
      dense[j * n + i] = Fluid<T>(rho, e, {u, v});
    }
  TensorOptions<2> o;
  o.with_padding(1);
  Tensor<Fluid<T>, 2, L> u(memory, Extent<2>{n, n}, TensorOptions<2>(o).named("state"));
  Tensor<Fluid<T>, 2, L> shared_out(memory, Extent<2>{n, n}, TensorOptions<2>(o).named("flux-shared"));
  Tensor<Fluid<T>, 2, L> global_out(memory, Extent<2>{n, n}, TensorOptions<2>(o).named("flux-global"));
  u.fill_from(dense.data());
  u.load_boundary(ZeroGradient{});
  const FluxDifference kernel;
  const T dtdx = T(0.1);
  const auto r = Interleaved::run(s.rounds, {{"in_shared", [&] { for_each(ex, kernel, in_shared(u), shared_out, dtdx); }},
                                             {"global", [&] { for_each(ex, kernel, u, global_out, dtdx); }}});
  const double bytes = 2.0 * 4 * sizeof(T) * static_cast<double>(n * n);
  const std::string name = "gpu-force-flux-" + std::to_string(n) + "^2-" + layout_name;
  report_pair(report, name, r, "in_shared", "global", bytes);
  std::vector<Fluid<T>> a(n * n), b(n * n);
  shared_out.gather_to(a.data());
  global_out.gather_to(b.data());
  for (std::size_t k = 0; k < a.size(); ++k) {
    const T x[4] = {a[k].density(), a[k].energy(), a[k].u(), a[k].v()};
    const T y[4] = {b[k].density(), b[k].energy(), b[k].u(), b[k].v()};
    for (int m = 0; m < 4; ++m)
      if (std::abs(x[m] - y[m]) > T(1e-5) * std::max({std::abs(x[m]), std::abs(y[m]), T(1e-3)})) {
        mismatch(name + ": cell " + std::to_string(k) + " component " + std::to_string(m) + ": in_shared " +
                 std::to_string(x[m]) + ", global " + std::to_string(y[m]));
        return;
      }
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
  memory.synchronize();
}

}  // namespace tessera::bench
