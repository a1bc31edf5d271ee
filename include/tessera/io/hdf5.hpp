#pragma once
// HDF5 + XDMF output of a simulation's cell fields, one group per time step, that ParaView and
// VisIt open as a time series (File > Open `run.xmf`).
//
//   tessera::io::Hdf5Series out("out/run", {{nx, ny}, {0.0, 0.0}, {dx, dy}});   // run.h5 + run.xmf
//   for (...) {
//     out.begin_step(step, time);                                      // group /step_000010
//     out.write("density", state, [](const State& s) { return s.density(); });
//     out.write("pressure", pressure_values);                          // a dense x-fastest array
//     out.end_step();                                                  // flushes, rewrites run.xmf
//   }
//
// In `run.h5` each step is a group `/step_NNNNNN` (attributes `time`, double, and `step`, int64)
// holding one dataset per field, of shape (nz,) ny, nx (x fastest, as the dense arrays are), 64-
// or 32-bit IEEE floats as written. `run.xmf` is rewritten at each end_step, so a crashed run
// still leaves a readable series of its completed steps. Needs HDF5 when tessera was built
// (TESSERA_HAVE_HDF5); without it the constructor throws tessera::Error and hdf5_supported() is
// false.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/io/xdmf.hpp"
#include "tessera/tensor/tensor.hpp"

namespace tessera::io {

/// Whether this tessera was built with HDF5.
bool hdf5_supported() noexcept;

class Hdf5Series {
 public:
  /// Creates (replacing) `base.h5` and `base.xmf` for fields on `grid`. Throws tessera::Error for
  /// a bad grid (see check_grid), a file that cannot be created, or a tessera without HDF5.
  Hdf5Series(const std::string& base, UniformGrid grid);
  /// Ends the open step (if any) and closes the file. Errors here are logged, not thrown; call
  /// close() first to see them.
  ~Hdf5Series();
  Hdf5Series(Hdf5Series&&) noexcept;
  Hdf5Series& operator=(Hdf5Series&&) noexcept;
  Hdf5Series(const Hdf5Series&) = delete;
  Hdf5Series& operator=(const Hdf5Series&) = delete;

  /// Opens step `step` (>= 0, not written before) at `time`; ends the previous step if open.
  ///
  ///   out.begin_step(10, 0.5);
  void begin_step(std::int64_t step, double time);
  /// Writes a cell field of the open step: grid-volume values, x fastest. Names are letters,
  /// digits, '_', '-' and '.', unique within the step.
  ///
  ///   out.write("density", rho);   // std::vector<double> of nx * ny values
  void write(const std::string& name, std::span<const double> cells);
  void write(const std::string& name, std::span<const float> cells);
  /// Writes select(site) for every site of a tensor with the grid's sizes (gathered with
  /// gather_to). A float result is stored as float, anything else as double.
  ///
  ///   out.write("density", state, [](const State& s) { return s.density(); });
  template <typename T, std::size_t D, Layout L, typename Select>
    requires std::is_invocable_v<Select&, const T&>
  void write(const std::string& name, const Tensor<T, D, L>& tensor, Select select) {
    if (tensor.ranks() != nullptr && tensor.ranks()->size() > 1)
      throw Error("Hdf5Series::write('" + name + "'): tensor '" + tensor.name() + "' is spread over " +
                  std::to_string(tensor.ranks()->size()) +
                  " ranks, and a series is one process's file; call gather_to on every rank and write the "
                  "gathered values (write(name, span)) from a series that rank 0 alone opened");
    std::vector<std::size_t> sizes(D);
    for (std::size_t d = 0; d < D; ++d) sizes[d] = tensor.size()[d];
    check_sizes(name, sizes);
    std::vector<T> dense(tensor.size().volume());
    tensor.gather_to(dense.data());
    using R = std::conditional_t<std::is_same_v<std::decay_t<std::invoke_result_t<Select&, const T&>>, float>, float,
                                 double>;
    std::vector<R> field(dense.size());
    for (std::size_t k = 0; k < dense.size(); ++k) field[k] = static_cast<R>(select(std::as_const(dense[k])));
    write(name, std::span<const R>(field));
  }
  /// Writes a tensor of numbers (float stays float, anything else becomes double).
  template <typename T, std::size_t D, Layout L>
    requires std::is_arithmetic_v<T>
  void write(const std::string& name, const Tensor<T, D, L>& tensor) {
    write(name, tensor, [](T v) { return v; });
  }
  /// Flushes the HDF5 file and rewrites the XDMF file to include the step. Does nothing when no
  /// step is open.
  void end_step();
  /// Ends the open step and closes the file; later calls other than close() throw.
  void close();

  const std::string& h5_path() const;
  const std::string& xmf_path() const;
  const UniformGrid& grid() const;

 private:
  void check_sizes(const std::string& name, const std::vector<std::size_t>& sizes) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::io
