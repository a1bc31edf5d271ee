// HDF5 + XDMF output: two steps of 2-D fields (double, float, and from a tensor with a member
// selector) read back exactly through the HDF5 C API with their attributes, a 3-D step, the XDMF
// text (dimensions z y x, number types, HDF paths, times, balanced elements), and bad calls.
#include "io_test_support.hpp"

#include <tessera/io/hdf5.hpp>
#include <tessera/io/xdmf.hpp>

#include <cmath>
#include <vector>

#if defined(TESSERA_TEST_HAVE_HDF5)
#include <hdf5.h>
#endif

using namespace tessera;
using namespace io_test;
namespace io = tessera::io;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every element opened is closed (or self-closing), in a properly nested order. (A hand scan:
// GCC 12's <regex> trips -Wmaybe-uninitialized under the sanitizers.)
void expect_balanced(const std::string& xml) {
  std::vector<std::string> open;
  for (std::size_t at = xml.find('<'); at != std::string::npos; at = xml.find('<', at + 1)) {
    const std::size_t end = xml.find('>', at);
    ASSERT_NE(end, std::string::npos) << "unterminated tag at " << at;
    const std::string tag = xml.substr(at + 1, end - at - 1);
    if (tag.empty() || tag[0] == '?' || tag[0] == '!' || tag.back() == '/') continue;  // <Time .../>
    const bool closing = tag[0] == '/';
    const std::string name = tag.substr(closing ? 1 : 0, tag.find_first_of(" \n", 0) - (closing ? 1 : 0));
    if (closing) {
      ASSERT_FALSE(open.empty()) << "close of " << name << " with nothing open";
      ASSERT_EQ(open.back(), name);
      open.pop_back();
    } else {
      open.push_back(name);
    }
  }
  EXPECT_TRUE(open.empty());
}

// "step/name:precision" for each HDF DataItem of dimensions `dims`, in document order.
std::vector<std::string> hdf_items(const std::string& xml, const std::string& dims, const std::string& h5) {
  std::vector<std::string> out;
  const std::string head = "<DataItem Dimensions=\"" + dims + "\" NumberType=\"Float\" Precision=\"";
  for (std::size_t at = xml.find(head); at != std::string::npos; at = xml.find(head, at + 1)) {
    const std::size_t p = at + head.size();
    const std::string rest = "\" Format=\"HDF\">" + h5 + ":/step_";
    if (xml.compare(p + 1, rest.size(), rest) != 0) continue;
    const std::size_t path = p + 1 + rest.size();
    const std::size_t end = xml.find("</DataItem>", path);
    std::string item = xml.substr(path, end - path);  // 000010/density
    out.push_back(item + ":" + xml[p]);
  }
  return out;
}

TEST(IoXdmf, DocumentForA3DSeries) {
  io::UniformGrid grid{{2, 3, 4}, {0.5, -1.0, 2.0}, {0.25, 0.5, 1.0}};
  std::vector<io::XdmfStep> steps{{0, 0.0, {{"rho", "r.h5:/step_000000/rho", 8}}},
                                  {5, 0.125, {{"rho", "r.h5:/step_000005/rho", 8}, {"p", "r.h5:/step_000005/p", 4}}}};
  const std::string xml = io::xdmf_document(grid, steps);
  expect_balanced(xml);
  EXPECT_NE(xml.find("<Xdmf Version=\"3.0\""), std::string::npos);
  EXPECT_NE(xml.find("CollectionType=\"Temporal\""), std::string::npos);
  EXPECT_EQ(count(xml, "TopologyType=\"3DCoRectMesh\" Dimensions=\"5 4 3\""), 2u);  // points, z y x
  EXPECT_EQ(count(xml, "GeometryType=\"ORIGIN_DXDYDZ\""), 2u);
  EXPECT_EQ(count(xml, ">2 -1 0.5</DataItem>"), 2u);  // origin z y x
  EXPECT_EQ(count(xml, ">1 0.5 0.25</DataItem>"), 2u);  // spacing z y x
  EXPECT_NE(xml.find("<Time Value=\"0\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<Time Value=\"0.125\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<Grid Name=\"step_000005\""), std::string::npos);
  EXPECT_NE(xml.find("<DataItem Dimensions=\"4 3 2\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">"
                     "r.h5:/step_000005/p</DataItem>"),
            std::string::npos);
  EXPECT_EQ(count(xml, "Center=\"Cell\""), 3u);
}

TEST(IoXdmf, BadGridsThrow) {
  std::vector<io::XdmfStep> none;
  EXPECT_THROW(io::xdmf_document({{4}, {0.0}, {1.0}}, none), Error);
  EXPECT_THROW(io::xdmf_document({{4, 4}, {0.0}, {1.0, 1.0}}, none), Error);
  EXPECT_THROW(io::xdmf_document({{4, 0}, {0.0, 0.0}, {1.0, 1.0}}, none), Error);
  EXPECT_THROW(io::xdmf_document({{4, 4}, {0.0, 0.0}, {1.0, 0.0}}, none), Error);
}

class IoHdf5 : public OnDevices {
 protected:
  void SetUp() override {
    if (!io::hdf5_supported()) GTEST_SKIP() << "tessera was built without HDF5";
    OnDevices::SetUp();
  }
};

#if defined(TESSERA_TEST_HAVE_HDF5)
struct H5 {
  hid_t id;
  herr_t (*close)(hid_t);
  ~H5() {
    if (id >= 0) close(id);
  }
};

template <typename T>
std::vector<T> read_dataset(hid_t file, const std::string& path, std::vector<hsize_t> expected_dims) {
  H5 d{H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose};
  EXPECT_GE(d.id, 0) << path;
  if (d.id < 0) return {};
  H5 space{H5Dget_space(d.id), H5Sclose};
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.id)));
  H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  EXPECT_EQ(dims, expected_dims) << path;
  H5 type{H5Dget_type(d.id), H5Tclose};
  EXPECT_EQ(H5Tget_class(type.id), H5T_FLOAT) << path;
  EXPECT_EQ(H5Tget_size(type.id), sizeof(T)) << path;
  std::size_t n = 1;
  for (hsize_t v : dims) n *= static_cast<std::size_t>(v);
  std::vector<T> out(n);
  EXPECT_GE(H5Dread(d.id, std::is_same_v<T, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                    H5P_DEFAULT, out.data()),
            0);
  return out;
}

template <typename T>
T read_attribute(hid_t file, const std::string& group, const char* name, hid_t type) {
  H5 g{H5Gopen2(file, group.c_str(), H5P_DEFAULT), H5Gclose};
  H5 a{H5Aopen(g.id, name, H5P_DEFAULT), H5Aclose};
  T v{};
  EXPECT_GE(H5Aread(a.id, type, &v), 0) << group << " @" << name;
  return v;
}
#endif

TEST_P(IoHdf5, TwoStepsOf2DFieldsReadBackExactly) {
  ScratchDir dir;
  const std::size_t nx = 6, ny = 4;
  TensorOptions<2> o;
  o.partitions = {2, 2};
  Tensor<State<double, 2>, 2, Strided> state(memory(), {nx, ny}, o);

  std::vector<std::vector<double>> rho(2, std::vector<double>(nx * ny));
  std::vector<std::vector<float>> p(2, std::vector<float>(nx * ny));
  std::vector<std::vector<State<double, 2>>> init(2, std::vector<State<double, 2>>(nx * ny));
  for (std::size_t s = 0; s < 2; ++s)
    for (std::size_t k = 0; k < nx * ny; ++k) {
      rho[s][k] = std::sqrt(static_cast<double>(k + 1)) + static_cast<double>(s);
      p[s][k] = static_cast<float>(k) / 3.0f - static_cast<float>(s);
      init[s][k].energy() = std::exp(0.1 * static_cast<double>(k)) * (s ? -1.0 : 1.0);
    }
  {
    io::Hdf5Series out(dir.file("run"), {{nx, ny}, {0.0, 0.0}, {0.5, 0.25}});
    EXPECT_EQ(out.h5_path(), dir.file("run.h5"));
    for (std::size_t s = 0; s < 2; ++s) {
      state.fill_from(init[s].data());
      out.begin_step(static_cast<std::int64_t>(10 * s), 0.1 * static_cast<double>(s));
      out.write("density", rho[s]);
      out.write("pressure", p[s]);
      out.write("energy", state, [](const State<double, 2>& st) { return st.energy(); });
    }
  }  // the destructor ends the last step and closes

#if defined(TESSERA_TEST_HAVE_HDF5)
  H5 file{H5Fopen(dir.file("run.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  ASSERT_GE(file.id, 0);
  for (std::size_t s = 0; s < 2; ++s) {
    const std::string g = s ? "/step_000010" : "/step_000000";
    EXPECT_EQ(read_dataset<double>(file.id, g + "/density", {ny, nx}), rho[s]);
    EXPECT_EQ(read_dataset<float>(file.id, g + "/pressure", {ny, nx}), p[s]);
    const std::vector<double> energy = read_dataset<double>(file.id, g + "/energy", {ny, nx});
    ASSERT_EQ(energy.size(), nx * ny);
    for (std::size_t k = 0; k < nx * ny; ++k) EXPECT_EQ(energy[k], init[s][k].energy()) << k;
    EXPECT_EQ(read_attribute<double>(file.id, g, "time", H5T_NATIVE_DOUBLE), 0.1 * static_cast<double>(s));
    EXPECT_EQ(read_attribute<std::int64_t>(file.id, g, "step", H5T_NATIVE_INT64), static_cast<std::int64_t>(10 * s));
  }
#endif

  const std::string xml = read_text(dir.file("run.xmf"));
  expect_balanced(xml);
  EXPECT_EQ(count(xml, "TopologyType=\"2DCoRectMesh\" Dimensions=\"5 7\""), 2u);
  EXPECT_EQ(count(xml, "GeometryType=\"ORIGIN_DXDY\""), 2u);
  EXPECT_EQ(count(xml, ">0.25 0.5</DataItem>"), 2u);
  EXPECT_NE(xml.find("<Time Value=\"0\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<Time Value=\"0.10000000000000001\"/>"), std::string::npos);  // 0.1 to 17 digits
  const std::vector<std::string> found = hdf_items(xml, "4 6", "run.h5");
  EXPECT_EQ(found, (std::vector<std::string>{"000000/density:8", "000000/pressure:4", "000000/energy:8",
                                             "000010/density:8", "000010/pressure:4", "000010/energy:8"}));
}

TEST_P(IoHdf5, A3DStep) {
  ScratchDir dir;
  Tensor<float, 3> u(memory(), {3, 4, 5});
  std::vector<float> v(60);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(k) * 0.5f;
  u.fill_from(v.data());
  io::Hdf5Series out(dir.file("cube"), {{3, 4, 5}, {0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}});
  out.begin_step(1, 2.0);
  out.write("u", u);
  out.close();
#if defined(TESSERA_TEST_HAVE_HDF5)
  H5 file{H5Fopen(dir.file("cube.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  EXPECT_EQ(read_dataset<float>(file.id, "/step_000001/u", {5, 4, 3}), v);
#endif
  const std::string xml = read_text(dir.file("cube.xmf"));
  EXPECT_NE(xml.find("TopologyType=\"3DCoRectMesh\" Dimensions=\"6 5 4\""), std::string::npos);
  EXPECT_NE(xml.find("Dimensions=\"5 4 3\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">cube.h5:/step_000001/u<"),
            std::string::npos);
}

TEST_P(IoHdf5, BadCallsThrow) {
  ScratchDir dir;
  std::vector<double> f(12, 1.0);
  io::Hdf5Series out(dir.file("bad"), {{4, 3}, {0.0, 0.0}, {1.0, 1.0}});
  EXPECT_THROW(out.write("f", f), Error);  // no step open
  out.begin_step(3, 0.0);
  EXPECT_THROW(out.write("f", std::span<const double>(f).first(11)), Error);
  EXPECT_THROW(out.write("a/b", f), Error);
  EXPECT_THROW(out.write("", f), Error);
  out.write("f", f);
  EXPECT_THROW(out.write("f", f), Error);
  Tensor<double, 2> wrong(memory(), {3, 4});
  EXPECT_THROW(out.write("w", wrong), Error);
  EXPECT_THROW(out.begin_step(3, 1.0), Error);  // written already
  EXPECT_THROW(out.begin_step(-1, 1.0), Error);
  out.begin_step(4, 1.0);
  out.close();
  EXPECT_THROW(out.begin_step(5, 2.0), Error);
  try {
    io::Hdf5Series nowhere(dir.file("no/such/dir/x"), {{4, 3}, {0.0, 0.0}, {1.0, 1.0}});
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/x.h5"), std::string::npos) << e.what();
  }
}

IO_TEST_ON_DEVICES(IoHdf5);

TEST(IoHdf5Missing, ThrowsWhenBuiltWithoutHdf5) {
  if (io::hdf5_supported()) GTEST_SKIP() << "tessera was built with HDF5";
  try {
    io::Hdf5Series out("never", {{2, 2}, {0.0, 0.0}, {1.0, 1.0}});
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("without HDF5"), std::string::npos) << e.what();
  }
}

}  // namespace
