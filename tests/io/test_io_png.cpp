// PNG snapshots: read back with libpng, the image has the field's size, the exact end colours at
// lo and hi, monotone luminance, y up, clamping, auto range, and a tensor with a member selector.
#include "io_test_support.hpp"

#include <tessera/io/png.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#if defined(TESSERA_TEST_HAVE_PNG)
#include <png.h>
#endif

using namespace tessera;
using namespace io_test;
namespace io = tessera::io;

namespace {

struct Image {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
  io::Rgb at(std::size_t x, std::size_t row) const {
    const std::uint8_t* p = rgb.data() + 3 * (x + width * row);
    return {p[0], p[1], p[2]};
  }
};

Image read_png(const std::string& path) {
  Image out;
#if defined(TESSERA_TEST_HAVE_PNG)
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  EXPECT_NE(png_image_begin_read_from_file(&image, path.c_str()), 0) << image.message;
  image.format = PNG_FORMAT_RGB;
  out.width = image.width;
  out.height = image.height;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  EXPECT_NE(png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr), 0) << image.message;
  png_image_free(&image);
#else
  (void)path;
#endif
  return out;
}

double luminance(io::Rgb c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

class IoPng : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!io::png_supported()) GTEST_SKIP() << "tessera was built without libpng";
  }
  ScratchDir dir;
};

TEST(IoColormap, EndsAreExactAndLuminanceRises) {
  EXPECT_EQ(io::colormap(0.0), (io::Rgb{68, 2, 85}));
  EXPECT_EQ(io::colormap(1.0), (io::Rgb{250, 230, 40}));
  EXPECT_EQ(io::colormap(-3.0), io::colormap(0.0));
  EXPECT_EQ(io::colormap(7.0), io::colormap(1.0));
  EXPECT_EQ(io::colormap(std::numeric_limits<double>::quiet_NaN()), io::colormap(0.0));
  // 8-bit rounding can wobble luminance by under one unit between neighbouring levels; at 64
  // levels each step gains more than that.
  for (int k = 1; k <= 64; ++k)
    EXPECT_GT(luminance(io::colormap(k / 64.0)), luminance(io::colormap((k - 1) / 64.0))) << "level " << k;
  EXPECT_DOUBLE_EQ(io::normalise(5.0, {0.0, 10.0}), 0.5);
  EXPECT_DOUBLE_EQ(io::normalise(-1.0, {0.0, 10.0}), 0.0);
  EXPECT_DOUBLE_EQ(io::normalise(11.0, {0.0, 10.0}), 1.0);
  EXPECT_DOUBLE_EQ(io::normalise(3.0, {3.0, 3.0}), 0.5);
}

TEST_F(IoPng, SizeEndsAndOrientation) {
  // f(x, y) = y: large at high y, so the top row of the image is the bright end.
  const std::size_t nx = 5, ny = 4;
  std::vector<double> f(nx * ny);
  for (std::size_t y = 0; y < ny; ++y)
    for (std::size_t x = 0; x < nx; ++x) f[x + nx * y] = static_cast<double>(y);
  const std::string path = dir.file("ramp.png");
  const io::ColorRange used = io::write_png(path, f, nx, ny);
  EXPECT_EQ(used.lo, 0.0);
  EXPECT_EQ(used.hi, 3.0);
  const Image img = read_png(path);
  ASSERT_EQ(img.width, nx);
  ASSERT_EQ(img.height, ny);
  for (std::size_t x = 0; x < nx; ++x) {
    EXPECT_EQ(img.at(x, 0), io::colormap(1.0)) << "top row is y = ny - 1, the maximum";
    EXPECT_EQ(img.at(x, ny - 1), io::colormap(0.0)) << "bottom row is y = 0, the minimum";
  }
  for (std::size_t row = 1; row < ny; ++row) EXPECT_LT(luminance(img.at(0, row)), luminance(img.at(0, row - 1)));
}

TEST_F(IoPng, GivenRangeClampsAndFloatFieldsWork) {
  // One row: below lo, lo, mid, hi, above hi.
  std::vector<float> f{-5.0f, 0.0f, 0.5f, 1.0f, 9.0f};
  const std::string path = dir.file("clamp.png");
  io::write_png(path, f, 5, 1, {.range = io::ColorRange{0.0, 1.0}});
  const Image img = read_png(path);
  ASSERT_EQ(img.width, 5u);
  ASSERT_EQ(img.height, 1u);
  EXPECT_EQ(img.at(0, 0), io::colormap(0.0));
  EXPECT_EQ(img.at(1, 0), io::colormap(0.0));
  EXPECT_EQ(img.at(2, 0), io::colormap(0.5));
  EXPECT_EQ(img.at(3, 0), io::colormap(1.0));
  EXPECT_EQ(img.at(4, 0), io::colormap(1.0));
}

TEST_F(IoPng, ScaleRepeatsEachCell) {
  std::vector<double> f{0.0, 1.0, 2.0, 3.0};  // 2 x 2
  const std::string path = dir.file("scaled.png");
  io::write_png(path, f, 2, 2, {.scale = 3});
  const Image img = read_png(path);
  ASSERT_EQ(img.width, 6u);
  ASSERT_EQ(img.height, 6u);
  for (std::size_t row = 0; row < 6; ++row)
    for (std::size_t x = 0; x < 6; ++x) {
      const double v = f[x / 3 + 2 * (1 - row / 3)];
      EXPECT_EQ(img.at(x, row), io::colormap(v / 3.0)) << x << ", " << row;
    }
}

TEST_F(IoPng, AutoRangeSkipsNonFinite) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> f{nan, 2.0, std::numeric_limits<double>::infinity(), 4.0};
  const io::ColorRange used = io::write_png(dir.file("nan.png"), f, 4, 1);
  EXPECT_EQ(used.lo, 2.0);
  EXPECT_EQ(used.hi, 4.0);
}

TEST_F(IoPng, BadInputThrows) {
  std::vector<double> f(6, 1.0);
  EXPECT_THROW(io::write_png(dir.file("a.png"), f, 4, 2), Error);  // 6 values, 8 cells
  EXPECT_THROW(io::write_png(dir.file("a.png"), f, 0, 2), Error);
  EXPECT_THROW(io::write_png(dir.file("a.png"), f, 3, 2, {.range = io::ColorRange{1.0, 0.0}}), Error);
  EXPECT_THROW(io::write_png(dir.file("a.png"), f, 3, 2, {.scale = 0}), Error);
  try {
    io::write_png(dir.file("no/such/dir/a.png"), f, 3, 2);
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/a.png"), std::string::npos) << e.what();
  }
}

TEST(IoPngMissing, ThrowsWhenBuiltWithoutLibpng) {
  if (io::png_supported()) GTEST_SKIP() << "tessera was built with libpng";
  std::vector<double> f(4, 1.0);
  try {
    io::write_png("never.png", f, 2, 2);
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("without libpng"), std::string::npos) << e.what();
  }
}

class IoPngTensor : public OnDevices {
 protected:
  void SetUp() override {
    if (!io::png_supported()) GTEST_SKIP() << "tessera was built without libpng";
    OnDevices::SetUp();
  }
};

TEST_P(IoPngTensor, SelectsAMemberOfEachSite) {
  ScratchDir dir;
  TensorOptions<2> o;
  o.partitions = {2, 2};
  o.with_padding(1);
  const std::size_t nx = 6, ny = 4;
  Tensor<State<double, 2>, 2, Strided> state(memory(), {nx, ny}, o);
  std::vector<State<double, 2>> init(nx * ny);
  for (std::size_t y = 0; y < ny; ++y)
    for (std::size_t x = 0; x < nx; ++x) {
      init[x + nx * y].density() = static_cast<double>(x);  // density rises along x
      init[x + nx * y].energy() = -100.0;                  // would dominate the range if selected
    }
  state.fill_from(init.data());
  const std::string path = dir.file("density.png");
  const io::ColorRange used = io::write_png(path, state, [](const State<double, 2>& s) { return s.density(); });
  EXPECT_EQ(used.lo, 0.0);
  EXPECT_EQ(used.hi, 5.0);
  const Image img = read_png(path);
  ASSERT_EQ(img.width, nx);
  ASSERT_EQ(img.height, ny);
  for (std::size_t row = 0; row < ny; ++row)
    for (std::size_t x = 0; x < nx; ++x) EXPECT_EQ(img.at(x, row), io::colormap(static_cast<double>(x) / 5.0));

  Tensor<float, 2> u(memory(), {nx, ny}, o);
  std::vector<float> values(nx * ny, 2.0f);
  u.fill_from(values.data());
  const io::ColorRange flat = io::write_png(dir.file("u.png"), u);
  EXPECT_EQ(flat.lo, 2.0);
  EXPECT_EQ(read_png(dir.file("u.png")).at(0, 0), io::colormap(0.5));
}

IO_TEST_ON_DEVICES(IoPngTensor);

}  // namespace
