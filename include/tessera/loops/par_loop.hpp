#pragma once
// par_loop: records one loop over a range of a block (OPS's ops_par_loop) into the block's
// Context. The kernel is called once per site with one parameter per argument:
//   read(u, s)        -> Acc<const T>: u(dx, dy, dz) reads the neighbour at that offset of `s`;
//                        with a StridedStencil, at that offset of the site's mapped index;
//   write / rw / inc / min / max -> Acc<T>: u(0, 0) is the site (written datasets use the zero stencil);
//   gbl(v)            -> const T&, the same for every site;
//   reduce(r)         -> T&, to combine into with the handle's op (+=, or min/max);
//   idx()             -> const int*: the site's global index {i, j, k}.
//
//   par_loop([](Acc<double> u2, Acc<const double> u, Acc<const double> f, const double& h) {
//              u2(0, 0) = 0.25 * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - h * h * f(0, 0));
//            },
//            "jacobi", block, Range::of(2, {0, nx, 0, ny}),
//            write(u2, zero), read(u, five), read(f, zero), gbl(h));
//
// With TESSERA_LOOPS_CHECKED (default: debug builds) an offset outside the argument's stencil is
// a tessera::Error naming the loop, the dataset and the offset; writing through a read argument
// does not compile. A range reaching past a dataset's halo is an Error in every build. Define
// TESSERA_LOOPS_CHECKED the same way in every file of a program that runs the same kernel.

#include <tessera/core/error.hpp>
#include <tessera/core/host_device.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/stream.hpp>
#include <tessera/exec/detail/kernel_launch.hpp>
#include <tessera/layout/layout.hpp>
#include <tessera/layout/layout_traits.hpp>
#include <tessera/layout/record.hpp>
#include <tessera/loops/block.hpp>
#include <tessera/loops/dataset.hpp>
#include <tessera/loops/detail/loop_record.hpp>
#include <tessera/loops/reduction.hpp>

#include <array>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#ifndef TESSERA_LOOPS_CHECKED
#ifdef NDEBUG
#define TESSERA_LOOPS_CHECKED 0
#else
#define TESSERA_LOOPS_CHECKED 1
#endif
#endif

namespace tessera::loops {

/// How a loop uses a dataset. inc, min and max say how the kernel combines into its site
/// (+=, std::min, std::max); a loop writes only its own site, which no other part of the loop
/// touches, so the chain orders and moves them as rw.
enum class Mode { read, write, rw, inc, min, max };

namespace detail {

struct AccessCheck {
  const std::string* loop;
  const std::string* dataset;
  const Stencil* stencil;
};
[[noreturn]] void throw_off_stencil(const AccessCheck& c, int dx, int dy, int dz);
/// Record-time checks (tessera::Error): same block, dims, stencil inside the allocation, zero
/// stencil for written datasets.
void check_dat_arg(const std::string& loop, const Block& block, const Range& range, const Block& dat_block,
                   const std::string& dataset, const Stencil& stencil, bool writes, const std::array<int, 3>& first,
                   const std::array<int, 3>& last);
Range checked_range(const std::string& loop, const Block& block, const Range& range);
void check_strided_arg(const std::string& loop, const Block& block, const Range& range, const Block& dat_block,
                       const std::string& dataset, const StridedStencil& stencil, const std::array<int, 3>& first,
                       const std::array<int, 3>& last);

}  // namespace detail

/// A dataset argument as the kernel sees it at one site. T is const for read arguments.
/// On a GPU the stencil is not checked (a kernel cannot throw there): run a checked build on
/// the host or a sim device to find an offset outside the stencil. L matters only for a Record T
/// (below): its layout.
template <typename T, Layout L = Contiguous>
class Acc {
 public:
  TESSERA_HOST_DEVICE Acc(T* site, std::ptrdiff_t stride_y, std::ptrdiff_t stride_z, const detail::AccessCheck* check)
      : p_(site), sy_(stride_y), sz_(stride_z), check_(check) {}
  TESSERA_HOST_DEVICE T& operator()(int dx, int dy = 0, int dz = 0) const {
#if TESSERA_LOOPS_CHECKED && !TESSERA_ON_DEVICE
    if (!check_->stencil->contains({dx, dy, dz})) detail::throw_off_stencil(*check_, dx, dy, dz);
#endif
    return p_[dx + dy * sy_ + dz * sz_];
  }

 private:
  T* p_;
  std::ptrdiff_t sy_, sz_;
  [[maybe_unused]] const detail::AccessCheck* check_;
};

/// A Record dataset's argument: u(dx, dy, dz) is a view of that site in the dataset's layout
/// (read-only views for read arguments), e.g. `u(1, 0).velocity().x`.
template <typename T, Layout L>
requires RecordType<std::remove_const_t<T>>
class Acc<T, L> {
  using Traits = LayoutTraits<std::remove_const_t<T>, L>;

 public:
  using reference =
      std::conditional_t<std::is_const_v<T>, typename Traits::const_view_type, typename Traits::view_type>;
  /// `line`: the site's line of x; `x`: the site's place in it.
  TESSERA_HOST_DEVICE Acc(std::byte* line, std::ptrdiff_t x, std::ptrdiff_t pitch, std::ptrdiff_t line_bytes,
                          std::ptrdiff_t plane_bytes, const detail::AccessCheck* check)
      : line_(line), x_(x), pitch_(pitch), line_bytes_(line_bytes), plane_bytes_(plane_bytes), check_(check) {}
  TESSERA_HOST_DEVICE reference operator()(int dx, int dy = 0, int dz = 0) const {
#if TESSERA_LOOPS_CHECKED && !TESSERA_ON_DEVICE
    if (!check_->stencil->contains({dx, dy, dz})) detail::throw_off_stencil(*check_, dx, dy, dz);
#endif
    std::byte* line = line_ + dy * line_bytes_ + dz * plane_bytes_;
    if constexpr (std::is_const_v<T>)
      return Traits::read_at(line, x_ + dx, pitch_);
    else
      return Traits::at(line, x_ + dx, pitch_);
  }

 private:
  std::byte* line_;
  std::ptrdiff_t x_, pitch_, line_bytes_, plane_bytes_;
  [[maybe_unused]] const detail::AccessCheck* check_;
};

template <typename T, Mode M, Layout L = Contiguous>
struct DatArg {
  Dataset<T, L>* dat;
  Stencil stencil;
};
template <typename T, Layout L>
DatArg<T, Mode::read, L> read(Dataset<T, L>& d, const Stencil& s) {
  return {&d, s};
}
template <typename T, Layout L>
DatArg<T, Mode::write, L> write(Dataset<T, L>& d, const Stencil& s) {
  return {&d, s};
}
template <typename T, Layout L>
DatArg<T, Mode::rw, L> rw(Dataset<T, L>& d, const Stencil& s) {
  return {&d, s};
}
template <typename T, Layout L>
DatArg<T, Mode::inc, L> inc(Dataset<T, L>& d, const Stencil& s) {
  return {&d, s};
}
template <typename T, Layout L>
DatArg<T, Mode::min, L> min(Dataset<T, L>& d, const Stencil& s) {
  return {&d, s};
}
template <typename T, Layout L>
DatArg<T, Mode::max, L> max(Dataset<T, L>& d, const Stencil& s) {
  return {&d, s};
}

/// A dataset read through a strided, restriction or prolongation stencil.
template <typename T>
struct StridedArg {
  Dataset<T>* dat;
  StridedStencil stencil;
};
template <typename T>
requires(!RecordType<T>) StridedArg<T> read(Dataset<T>& d, const StridedStencil& s) { return {&d, s}; }

template <typename T>
struct GblArg {
  T value;
};
template <typename T>
GblArg<T> gbl(const T& v) {
  return {v};
}

template <typename T>
struct ReduceArg {
  std::shared_ptr<detail::ReductionState<T>> state;
};
template <typename T>
ReduceArg<T> reduce(Reduction<T>& r) {
  return {r.state()};
}

struct IdxArg {};
inline IdxArg idx() { return {}; }

namespace detail {

/// A reduction's row partials of the slabs a loop ran on GPUs: device memory per slab, copied
/// back in stream order (through pinned memory where the device has some free, so the copy does
/// not block the launching thread) and into the host's partials by collect(), after the chain.
template <typename T>
class DevicePartials {
 public:
  DevicePartials() = default;
  DevicePartials(const DevicePartials&) = delete;
  DevicePartials& operator=(const DevicePartials&) = delete;
  ~DevicePartials() { release(); }

  /// Device memory for `n` partials of a slab launched on `stream`, later copied to `host`.
  T* add(Stream& stream, T* host, std::size_t n) {
    Device& device = stream.device();
    Slab slab{&device, &stream, host, n, static_cast<T*>(device.allocate(n * sizeof(T))), nullptr, false};
    slab.pinned = static_cast<T*>(device.try_allocate_pinned_host(n * sizeof(T)));
    std::lock_guard lock(mutex_);
    slabs_.push_back(slab);
    return slab.device_partials;
  }
  /// After the kernel: copies back the partials of `stream`'s slabs.
  void copy_back(Stream& stream) {
    std::lock_guard lock(mutex_);
    for (Slab& s : slabs_)
      if (s.stream == &stream && !s.copying) {
        s.copying = true;
        s.device->copy_async(s.pinned != nullptr ? s.pinned : s.host, s.device_partials, s.n * sizeof(T),
                             CopyDirection::device_to_host, stream);
      }
  }
  /// Once every stream has passed its copies: the partials into the host's rows.
  void collect() {
    std::lock_guard lock(mutex_);
    for (const Slab& s : slabs_)
      if (s.pinned != nullptr) std::memcpy(s.host, s.pinned, s.n * sizeof(T));
    release_locked();
  }

 private:
  struct Slab {
    Device* device;
    Stream* stream;
    T* host;
    std::size_t n;
    T* device_partials;
    T* pinned;
    bool copying;
  };
  void release() {
    std::lock_guard lock(mutex_);
    release_locked();
  }
  void release_locked() {
    for (const Slab& s : slabs_) {
      s.device->deallocate(s.device_partials, s.n * sizeof(T));
      if (s.pinned != nullptr) s.device->deallocate_pinned_host(s.pinned, s.n * sizeof(T));
    }
    slabs_.clear();
  }
  std::mutex mutex_;
  std::vector<Slab> slabs_;
};

// What each argument keeps in the record, and gives the kernel at a site.
template <typename A>
struct Stored;

template <typename T, Mode M, Layout L>
requires(!RecordType<T>) struct Stored<DatArg<T, M, L>> {
  using Elem = std::conditional_t<M == Mode::read, const T, T>;
  Stored(const DatArg<T, M, L>& a, std::size_t slot) : stencil(a.stencil), name(a.dat->name()), dat_index(slot) {
    const auto s = a.dat->strides();
    sy = s[1];
    sz = s[2];
    for (int d = 0; d < 3; ++d) first[d] = a.dat->first(d);
  }
  // Once the record holds this argument where it stays.
  void bind(const std::string& loop) { check = AccessCheck{&loop, &name, &stencil}; }
  struct Cursor {
    Elem* row;
    std::ptrdiff_t sy, sz;
    const AccessCheck* check;
    Acc<Elem> at(int di, const int*) const { return Acc<Elem>(row + di, sy, sz, check); }
  };
  /// The argument along the row of sites (i0.., j, k).
  Cursor cursor(void* const* bases, int i0, int j, int k, int) const {
    return {static_cast<Elem*>(bases[dat_index]) + (i0 - first[0]) + (j - first[1]) * sy + (k - first[2]) * sz, sy, sz,
            &check};
  }
  /// The argument as a GPU thread sees it: any site, unchecked.
  struct View {
    Elem* base;
    std::ptrdiff_t sy, sz;
    int f0, f1, f2;
    TESSERA_HOST_DEVICE void start(int) const {}
    TESSERA_HOST_DEVICE Acc<Elem> at(int i, int j, int k, int, const int*) const {
      return Acc<Elem>(base + (i - f0) + (j - f1) * sy + (k - f2) * sz, sy, sz, nullptr);
    }
  };
  View view(void* const* bases, Stream&, int, int) const {
    return {static_cast<Elem*>(bases[dat_index]), sy, sz, first[0], first[1], first[2]};
  }

  Stencil stencil;
  std::string name;
  std::size_t dat_index;
  std::ptrdiff_t sy = 0, sz = 0;
  std::array<int, 3> first{};
  AccessCheck check{};
};

template <typename T, Mode M, Layout L>
requires RecordType<T>
struct Stored<DatArg<T, M, L>> {
  using Elem = std::conditional_t<M == Mode::read, const T, T>;
  Stored(const DatArg<T, M, L>& a, std::size_t slot)
      : stencil(a.stencil),
        name(a.dat->name()),
        dat_index(slot),
        pitch(std::ptrdiff_t(a.dat->pitch())),
        line_bytes(std::ptrdiff_t(a.dat->line_bytes())),
        plane_bytes(line_bytes * a.dat->padded(1)) {
    for (int d = 0; d < 3; ++d) first[d] = a.dat->first(d);
  }
  void bind(const std::string& loop) { check = AccessCheck{&loop, &name, &stencil}; }
  struct Cursor {
    std::byte* line;
    std::ptrdiff_t x0, pitch, line_bytes, plane_bytes;
    const AccessCheck* check;
    Acc<Elem, L> at(int di, const int*) const {
      return Acc<Elem, L>(line, x0 + di, pitch, line_bytes, plane_bytes, check);
    }
  };
  Cursor cursor(void* const* bases, int i0, int j, int k, int) const {
    return {static_cast<std::byte*>(bases[dat_index]) + (j - first[1]) * line_bytes + (k - first[2]) * plane_bytes,
            i0 - first[0],
            pitch,
            line_bytes,
            plane_bytes,
            &check};
  }
  struct View {
    std::byte* base;
    std::ptrdiff_t pitch, line_bytes, plane_bytes;
    int f0, f1, f2;
    TESSERA_HOST_DEVICE void start(int) const {}
    TESSERA_HOST_DEVICE Acc<Elem, L> at(int i, int j, int k, int, const int*) const {
      return Acc<Elem, L>(base + (j - f1) * line_bytes + (k - f2) * plane_bytes, i - f0, pitch, line_bytes, plane_bytes,
                          nullptr);
    }
  };
  View view(void* const* bases, Stream&, int, int) const {
    return {static_cast<std::byte*>(bases[dat_index]), pitch, line_bytes, plane_bytes, first[0], first[1], first[2]};
  }

  Stencil stencil;
  std::string name;
  std::size_t dat_index;
  std::ptrdiff_t pitch, line_bytes, plane_bytes;
  std::array<int, 3> first{};
  AccessCheck check{};
};

template <typename T>
struct Stored<StridedArg<T>> {
  Stored(const StridedArg<T>& a, std::size_t slot) : stencil(a.stencil), name(a.dat->name()), dat_index(slot) {
    const auto s = a.dat->strides();
    sy = s[1];
    sz = s[2];
    for (int d = 0; d < 3; ++d) first[d] = a.dat->first(d);
  }
  void bind(const std::string& loop) { check = AccessCheck{&loop, &name, &stencil.points()}; }
  struct Cursor {
    const T* row;  // the dataset at x index 0 of the mapped row
    const StridedStencil* stencil;
    int i0, first_x;
    std::ptrdiff_t sy, sz;
    const AccessCheck* check;
    Acc<const T> at(int di, const int*) const {
      return Acc<const T>(row + (stencil->map(0, i0 + di) - first_x), sy, sz, check);
    }
  };
  Cursor cursor(void* const* bases, int i0, int j, int k, int) const {
    const T* row = static_cast<const T*>(bases[dat_index]) + (stencil.map(1, j) - first[1]) * sy +
                   (stencil.map(2, k) - first[2]) * sz;
    return {row, &stencil, i0, first[0], sy, sz, &check};
  }
  struct View {
    const T* base;
    std::ptrdiff_t sy, sz;
    int first[3], stride[3];
    bool divide;
    TESSERA_HOST_DEVICE int map(int d, int site) const {
      if (!divide) return site * stride[d];
      const int q = site / stride[d];
      return (site % stride[d] != 0 && site < 0) ? q - 1 : q;
    }
    TESSERA_HOST_DEVICE void start(int) const {}
    TESSERA_HOST_DEVICE Acc<const T> at(int i, int j, int k, int, const int*) const {
      return Acc<const T>(base + (map(0, i) - first[0]) + (map(1, j) - first[1]) * sy + (map(2, k) - first[2]) * sz, sy,
                          sz, nullptr);
    }
  };
  View view(void* const* bases, Stream&, int, int) const {
    View v{static_cast<const T*>(bases[dat_index]), sy, sz, {first[0], first[1], first[2]}, {}, stencil.divides()};
    for (int d = 0; d < 3; ++d) v.stride[d] = stencil.stride()[d];
    return v;
  }

  StridedStencil stencil;
  std::string name;
  std::size_t dat_index;
  std::ptrdiff_t sy = 0, sz = 0;
  std::array<int, 3> first{};
  AccessCheck check{};
};

template <typename T>
struct Stored<GblArg<T>> {
  Stored(const GblArg<T>& a, std::size_t) : value(a.value) {}
  void bind(const std::string&) {}
  struct Cursor {
    const T* value;
    const T& at(int, const int*) const { return *value; }
  };
  Cursor cursor(void* const*, int, int, int, int) const { return {&value}; }
  struct View {
    T value;
    TESSERA_HOST_DEVICE void start(int) const {}
    TESSERA_HOST_DEVICE const T& at(int, int, int, int, const int*) const { return value; }
  };
  View view(void* const*, Stream&, int, int) const { return {value}; }
  T value;
};

template <typename T>
struct Stored<ReduceArg<T>> {
  Stored(const ReduceArg<T>& a, std::size_t) : state(a.state) {}
  void bind(const std::string&) {}
  struct Cursor {
    T* partial;
    T& at(int, const int*) const { return *partial; }
  };
  /// Sites of outermost index `outer` reduce into that index's partial.
  Cursor cursor(void* const*, int, int, int, int outer) { return {&rows[std::size_t(outer - outer_begin)]}; }
  /// On a GPU one thread runs the sites of an outermost index in the host's order, into that
  /// index's partial in device memory; the partials come back to `rows` before finish().
  struct View {
    T* partials;  // of outermost indices [lo, ...)
    int lo;
    T identity;
    TESSERA_HOST_DEVICE void start(int outer) const { partials[outer - lo] = identity; }
    TESSERA_HOST_DEVICE T& at(int, int, int, int outer, const int*) const { return partials[outer - lo]; }
  };
  View view(void* const*, Stream& stream, int begin, int end) {
    return {device_partials->add(stream, rows.data() + (begin - outer_begin), std::size_t(end - begin)), begin,
            detail::identity<T>(state->op)};
  }
  void after_launch(Stream& stream) { device_partials->copy_back(stream); }
  std::shared_ptr<ReductionState<T>> state;
  std::vector<T> rows;  // one partial per outermost index of the range
  int outer_begin = 0;
  std::unique_ptr<DevicePartials<T>> device_partials = std::make_unique<DevicePartials<T>>();
};

template <>
struct Stored<IdxArg> {
  Stored(IdxArg, std::size_t) {}
  void bind(const std::string&) {}
  struct Cursor {
    const int* at(int, const int* site) const { return site; }
  };
  Cursor cursor(void* const*, int, int, int, int) const { return {}; }
  struct View {
    TESSERA_HOST_DEVICE void start(int) const {}
    TESSERA_HOST_DEVICE const int* at(int, int, int, int, const int* site) const { return site; }
  };
  View view(void* const*, Stream&, int, int) const { return {}; }
};

template <typename A>
inline constexpr bool is_dat_v = false;
template <typename T, Mode M, Layout L>
inline constexpr bool is_dat_v<DatArg<T, M, L>> = true;
template <typename A>
inline constexpr bool is_strided_v = false;
template <typename T>
inline constexpr bool is_strided_v<StridedArg<T>> = true;
template <typename A>
inline constexpr bool is_reduce_v = false;
template <typename T>
inline constexpr bool is_reduce_v<ReduceArg<T>> = true;

/// How many of the first N arguments are datasets: the slot of argument N among them.
template <std::size_t N, typename... A>
constexpr std::size_t dat_slot() {
  constexpr bool is_dat[] = {(is_dat_v<A> || is_strided_v<A>)..., false};
  std::size_t n = 0;
  for (std::size_t i = 0; i != N; ++i) n += is_dat[i] ? 1 : 0;
  return n;
}

/// The sites a GPU launch covers: [lo, hi) per dimension, and the outermost dimension.
struct LoopBounds {
  int lo[3], hi[3];
  int outer;
};
/// Launches `kernel` over `bounds` on the CUDA stream `native_stream`, each argument given by its
/// view: a thread per site, or (RowsPerThread: the loop reduces) a thread per outermost index
/// running its sites in the host's order. With `timer`, sets it to what gives the kernel's
/// device time once the stream has passed it. Returns nullptr, or CUDA's error. Defined where
/// nvcc compiles (loops/detail/cuda_loop.hpp); a host compiler never instantiates it.
template <bool RowsPerThread, typename K, typename... V>
const char* launch_loop_on_cuda(void* native_stream, const K& kernel, const LoopBounds& bounds,
                                std::function<double()>* timer, const V&... views);

template <typename K, typename Variant, typename... A>
class LoopOf final : public LoopRecord {
 public:
  LoopOf(std::string loop, const Block& block, Range r, K kernel, const A&... args)
      : LoopRecord(std::move(loop), block.dims(), r),
        kernel_(std::move(kernel)),
        stored_(make_stored(std::index_sequence_for<A...>{}, args...)) {
    (add_use(block, args), ...);
    reduces = (is_reduce_v<A> || ...);
    std::apply([&](auto&... s) { (s.bind(name), ...); }, stored_);
    std::apply([&](auto&... s) { (init_reduction(s), ...); }, stored_);
  }

  // Slabs run concurrently: per-call state lives in cursors, and each slab writes only the
  // reduction partials of its own outermost indices.
  void run(int begin, int end, void* const* bases) override {
    const int od = dims - 1;
    int lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
      lo[d] = range.begin[d];
      hi[d] = range.end[d];
    }
    lo[od] = begin;
    hi[od] = end;
    std::apply([&](auto&... s) { (reset_partials(s, begin, end), ...); }, stored_);
    if (od == 0) {
      for (int i = lo[0]; i < hi[0]; ++i) {
        int site[3] = {i, 0, 0};
        row(bases, i, i + 1, 0, 0, i, site, std::index_sequence_for<A...>{});
      }
      return;
    }
    for (int k = lo[2]; k < hi[2]; ++k)
      for (int j = lo[1]; j < hi[1]; ++j) {
        int site[3] = {lo[0], j, k};
        row(bases, lo[0], hi[0], j, k, od == 2 ? k : j, site, std::index_sequence_for<A...>{});
      }
  }

  void launch_cuda(Stream& stream, int begin, int end, void* const* bases, std::function<double()>* timer) override {
    auto work = [this] { return "tessera::loops::par_loop '" + name + "'"; };
    tessera::detail::cuda_body<Variant>(stream.native_handle(), stream.device(), work, [&](auto native) {
      LoopBounds bounds{};
      for (int d = 0; d < 3; ++d) {
        bounds.lo[d] = range.begin[d];
        bounds.hi[d] = range.end[d];
      }
      bounds.outer = dims - 1;
      bounds.lo[bounds.outer] = begin;
      bounds.hi[bounds.outer] = end;
      const auto views =
          std::apply([&](auto&... s) { return std::make_tuple(s.view(bases, stream, begin, end)...); }, stored_);
      const char* failed = std::apply(
          [&](const auto&... v) {
            return launch_loop_on_cuda<(is_reduce_v<A> || ...)>(native, kernel_, bounds, timer, v...);
          },
          views);
      if (failed != nullptr) tessera::detail::throw_cuda_launch_error(work(), stream.device(), failed);
      std::apply([&](auto&... s) { (copy_partials_back(s, stream), ...); }, stored_);
    });
  }

  void finish() override {
    std::apply([&](auto&... s) { (finish_reduction(s), ...); }, stored_);
  }

 private:
  template <std::size_t... I>
  static std::tuple<Stored<A>...> make_stored(std::index_sequence<I...>, const A&... args) {
    return std::tuple<Stored<A>...>(Stored<A>(args, dat_slot<I, A...>())...);
  }

  template <typename B>
  void add_use(const Block& block, const B& a) {
    if constexpr (is_dat_v<B>) {
      auto& d = *a.dat;
      const bool writes = !std::is_const_v<typename Stored<B>::Elem>;
      std::array<int, 3> first{}, last{};
      for (int k = 0; k < 3; ++k) {
        first[k] = d.first(k);
        last[k] = d.last(k);
      }
      check_dat_arg(name, block, range, d.block(), d.name(), a.stencil, writes, first, last);
      bytes_required += sites() * d.site_bytes() * (is_write_only(a) || !writes ? 1u : 2u);
      Access access = writes ? Access::read_write : Access::read;
      if (is_write_only(a)) {
        // Whole rows written: the old values need not reach the device that writes them.
        bool whole_rows = true;
        for (int k = 0; k + 1 < dims; ++k)
          whole_rows = whole_rows && range.begin[k] == first[k] && range.end[k] == last[k];
        if (whole_rows) access = Access::write;
      }
      const int od = dims - 1;
      dats.push_back(DatUse{d.buffer(), access, a.stencil.low(od), a.stencil.high(od), first[od]});
    } else if constexpr (is_strided_v<B>) {
      Dataset<typename std::remove_pointer_t<decltype(a.dat)>::value_type>& d = *a.dat;
      std::array<int, 3> first{}, last{};
      for (int k = 0; k < 3; ++k) {
        first[k] = d.first(k);
        last[k] = d.last(k);
      }
      check_strided_arg(name, block, range, d.block(), d.name(), a.stencil, first, last);
      bytes_required += sites() * sizeof(typename std::remove_pointer_t<decltype(a.dat)>::value_type);
      const int od = dims - 1;
      const Stencil& pts = a.stencil.points();
      dats.push_back(DatUse{d.buffer(), Access::read, pts.low(od), pts.high(od), first[od], a.stencil.stride()[od],
                            a.stencil.divides()});
    }
  }
  template <typename T, Mode M, Layout L>
  static constexpr bool is_write_only(const DatArg<T, M, L>&) {
    return M == Mode::write;
  }
  std::uint64_t sites() const noexcept {
    std::uint64_t n = 1;
    for (int d = 0; d < dims; ++d) n *= std::uint64_t(range.end[d] - range.begin[d]);
    return n;
  }

  template <typename S>
  void init_reduction(S& s) {
    if constexpr (requires { s.rows; }) {
      s.rows.assign(std::size_t(outer_end() - outer_begin()), s.state->value);
      s.outer_begin = outer_begin();
    }
  }
  template <typename S>
  static void copy_partials_back(S& s, Stream& stream) {
    if constexpr (requires { s.rows; }) s.after_launch(stream);
  }
  template <typename S>
  void finish_reduction(S& s) {
    if constexpr (requires { s.rows; }) {
      s.device_partials->collect();
      auto v = identity<decltype(s.state->value)>(s.state->op);
      for (const auto& r : s.rows) v = combine(s.state->op, v, r);
      s.state->value = v;
    }
  }
  template <typename S>
  void reset_partials(S& s, int begin, int end) {
    if constexpr (requires { s.rows; })
      for (int o = begin; o < end; ++o)
        s.rows[std::size_t(o - outer_begin())] = identity<decltype(s.state->value)>(s.state->op);
  }
  template <std::size_t... I>
  void row(void* const* bases, int i0, int i1, int j, int k, int outer, int* site, std::index_sequence<I...>) {
    const auto cursors = std::make_tuple(std::get<I>(stored_).cursor(bases, i0, j, k, outer)...);
    if constexpr (sites_independent) {
      // Sites of a row share nothing but what they read: let the compiler run them in lanes.
#pragma omp simd
      for (int i = i0; i < i1; ++i) kernel_(std::get<I>(cursors).at(i - i0, site)...);
    } else {
      for (int i = i0; i < i1; ++i) {
        site[0] = i;
        kernel_(std::get<I>(cursors).at(i - i0, site)...);
      }
    }
  }

  // A reduction accumulates across the sites of a row, the site index changes per site, and a
  // checked access may throw (which must not leave a simd loop).
  static constexpr bool sites_independent =
      !TESSERA_LOOPS_CHECKED && !(is_reduce_v<A> || ...) && !(std::is_same_v<A, IdxArg> || ...);

  K kernel_;
  std::tuple<Stored<A>...> stored_;
};

}  // namespace detail

/// Records `kernel` over `range` of `block` with `args`; it runs when the chain runs.
/// On a CUDA device the kernel runs as a GPU kernel: write it `[] TESSERA_HOST_DEVICE (...)` in a
/// file nvcc compiles (a loop recorded from a file g++ compiled says so when it reaches a GPU).
template <typename K, typename... A, typename Variant = tessera::detail::build_variant>
void par_loop(K kernel, std::string name, Block& block, const Range& range, A... args) {
  const Range r = detail::checked_range(name, block, range);
  for (int d = 0; d < block.dims(); ++d)
    if (r.begin[d] >= r.end[d]) return;  // nothing to do
  auto loop = std::make_unique<detail::LoopOf<K, Variant, A...>>(std::move(name), block, r, std::move(kernel), args...);
  block.context().record(std::move(loop));
}

}  // namespace tessera::loops

#include <tessera/loops/detail/cuda_loop.hpp>
