#include "tessera/io/hdf5.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

#if defined(TESSERA_HAVE_HDF5)
#include <hdf5.h>
#endif

namespace tessera::io {
namespace {

#if defined(TESSERA_HAVE_HDF5)
std::string step_group(std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step_%06lld", static_cast<long long>(step));
  return name;
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) return false;
  }
  return name != "." && name != "..";
}

// HDF5 prints a stack of its own errors to stderr; tessera reports them as one tessera::Error
// instead, so printing is off while tessera calls HDF5 and restored after.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// Closes an HDF5 handle with the matching H5*close.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};
#endif

}  // namespace

bool hdf5_supported() noexcept {
#if defined(TESSERA_HAVE_HDF5)
  return true;
#else
  return false;
#endif
}

struct Hdf5Series::Impl {
  UniformGrid grid;
  std::string h5_path, xmf_path, h5_name;
  std::vector<XdmfStep> steps;  // every step ended so far, plus the open one last
  std::set<std::int64_t> written;
  bool step_open = false;
  bool closed = false;
#if defined(TESSERA_HAVE_HDF5)
  hid_t file = -1;
  hid_t group = -1;
#endif

  std::string where() const { return "Hdf5Series('" + h5_path + "')"; }
  template <typename T>
  void write_field(const std::string& name, std::span<const T> cells);
  void check_open(const char* call) const {
    if (closed) throw Error(where() + "." + call + ": the series is closed");
  }
  void write_xmf() const {
    // Written beside the target and renamed, so a reader never sees half a document.
    const std::string partial = xmf_path + ".partial";
    {
      std::ofstream out(partial, std::ios::trunc);
      out << xdmf_document(grid, steps);
      out.close();
      if (!out) throw Error(where() + ": cannot write '" + partial + "' (disk full? directory removed?)");
    }
    std::error_code ec;
    std::filesystem::rename(partial, xmf_path, ec);
    if (ec) throw Error(where() + ": cannot rename '" + partial + "' to '" + xmf_path + "': " + ec.message());
  }
};

Hdf5Series::Hdf5Series(const std::string& base, UniformGrid grid) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.h5_path = base + ".h5";
  s.xmf_path = base + ".xmf";
  s.h5_name = std::filesystem::path(s.h5_path).filename().string();
  check_grid(grid, s.where());
  s.grid = std::move(grid);
#if !defined(TESSERA_HAVE_HDF5)
  throw Error(s.where() + ": tessera was built without HDF5 (install libhdf5-dev, e.g. with scripts/install-deps, "
                          "and reconfigure)");
#else
  // HDF5 closes the files still open at exit from an atexit handler; a file whose close failed
  // (a full disk) is still open, half torn down, and that handler then crashes inside HDF5
  // 1.10. Every series closes its file itself, so the handler has nothing to do: it is switched
  // off before HDF5's first use (afterwards the call is refused and changes nothing).
  static const bool no_atexit_close = (H5dont_atexit(), true);
  (void)no_atexit_close;
  QuietHdf5 quiet;
  s.file = H5Fcreate(s.h5_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (s.file < 0) throw Error(s.where() + ": cannot create the file; check that its directory exists and is writable");
  try {
    s.write_xmf();  // an empty series at once, so a run that dies before its first step still has one
  } catch (...) {
    H5Fclose(s.file);
    throw;
  }
#endif
}

Hdf5Series::~Hdf5Series() {
  if (!impl_) return;
  try {
    close();
  } catch (const std::exception& e) {
    log(LogLevel::error, std::string("Hdf5Series: closing failed: ") + e.what());
  }
}

Hdf5Series::Hdf5Series(Hdf5Series&&) noexcept = default;
Hdf5Series& Hdf5Series::operator=(Hdf5Series&& other) noexcept {
  if (this != &other) {
    Hdf5Series old(std::move(*this));  // closes what this held
    impl_ = std::move(other.impl_);
  }
  return *this;
}

const std::string& Hdf5Series::h5_path() const { return impl_->h5_path; }
const std::string& Hdf5Series::xmf_path() const { return impl_->xmf_path; }
const UniformGrid& Hdf5Series::grid() const { return impl_->grid; }

void Hdf5Series::check_sizes(const std::string& name, const std::vector<std::size_t>& sizes) const {
  if (sizes == impl_->grid.cells) return;
  auto text = [](const std::vector<std::size_t>& v) {
    std::string t;
    for (std::size_t d = 0; d < v.size(); ++d) t += (d ? " x " : "") + std::to_string(v[d]);
    return t;
  };
  throw Error(impl_->where() + ".write('" + name + "'): the tensor is " + text(sizes) + " but the grid has " +
              text(impl_->grid.cells) + " cells");
}

#if defined(TESSERA_HAVE_HDF5)

namespace {

void write_attribute(hid_t group, const char* name, hid_t file_type, hid_t memory_type, const void* value,
                     const std::string& where) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(group, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!space.ok() || !attr.ok() || H5Awrite(attr.get(), memory_type, value) < 0)
    throw Error(where + ": cannot write attribute '" + name + "'");
}

}  // namespace

template <typename T>
void Hdf5Series::Impl::write_field(const std::string& name, std::span<const T> cells) {
  Impl& s = *this;
  const std::string where = s.where() + ".write('" + name + "')";
  s.check_open("write");
  if (!s.step_open) throw Error(where + ": no step is open; call begin_step(step, time) first");
  if (!valid_name(name))
    throw Error(where + ": a field name has 1 to 255 letters, digits, '_', '-' or '.'");
  XdmfStep& step = s.steps.back();
  for (const XdmfField& f : step.fields)
    if (f.name == name) throw Error(where + ": step " + std::to_string(step.step) + " already has this field");
  std::size_t volume = 1;
  for (std::size_t n : s.grid.cells) volume *= n;
  if (cells.size() != volume)
    throw Error(where + ": " + std::to_string(cells.size()) + " values for a grid of " + std::to_string(volume) +
                " cells");
  // HDF5 shapes are slowest first: (nz,) ny, nx for an x-fastest array.
  std::vector<hsize_t> dims(s.grid.cells.rbegin(), s.grid.cells.rend());
  constexpr bool is_float = std::is_same_v<T, float>;
  QuietHdf5 quiet;
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle data(H5Dcreate2(s.group, name.c_str(), is_float ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, space.get(),
                         H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose);
  if (!space.ok() || !data.ok()) throw Error(where + ": cannot create the dataset");
  if (H5Dwrite(data.get(), is_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
               cells.data()) < 0)
    throw Error(where + ": writing the dataset failed (disk full?)");
  step.fields.push_back({name, s.h5_name + ":/" + step_group(step.step) + "/" + name, sizeof(T)});
}

void Hdf5Series::begin_step(std::int64_t step, double time) {
  Impl& s = *impl_;
  s.check_open("begin_step");
  const std::string where = s.where() + ".begin_step(" + std::to_string(step) + ")";
  if (step < 0) throw Error(where + ": step numbers are >= 0");
  if (s.written.count(step)) throw Error(where + ": step " + std::to_string(step) + " was already written");
  end_step();
  QuietHdf5 quiet;
  const std::string name = step_group(step);
  s.group = H5Gcreate2(s.file, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (s.group < 0) throw Error(where + ": cannot create group '" + name + "'");
  s.written.insert(step);
  s.steps.push_back({step, time, {}});
  s.step_open = true;
  write_attribute(s.group, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &time, where);
  write_attribute(s.group, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, &step, where);
}

void Hdf5Series::write(const std::string& name, std::span<const double> cells) { impl_->write_field(name, cells); }
void Hdf5Series::write(const std::string& name, std::span<const float> cells) { impl_->write_field(name, cells); }

void Hdf5Series::end_step() {
  Impl& s = *impl_;
  if (!s.step_open) return;
  QuietHdf5 quiet;
  s.step_open = false;
  H5Gclose(s.group);
  s.group = -1;
  if (H5Fflush(s.file, H5F_SCOPE_GLOBAL) < 0) throw Error(s.where() + ": flushing the file failed (disk full?)");
  s.write_xmf();
}

void Hdf5Series::close() {
  Impl& s = *impl_;
  if (s.closed) return;
  // Closed even when ending the step throws, so the destructor does not try again.
  struct CloseFile {
    Impl& s;
    ~CloseFile() {
      if (s.group >= 0) H5Gclose(s.group);
      H5Fclose(s.file);
      s.group = s.file = -1;
      s.closed = true;
    }
  } closer{s};
  end_step();
}

#else

void Hdf5Series::begin_step(std::int64_t, double) {}
void Hdf5Series::write(const std::string&, std::span<const double>) {}
void Hdf5Series::write(const std::string&, std::span<const float>) {}
void Hdf5Series::end_step() {}
void Hdf5Series::close() {}

#endif

}  // namespace tessera::io
