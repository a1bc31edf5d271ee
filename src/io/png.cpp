#include "tessera/io/png.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>

#include "tessera/core/error.hpp"
#include "../core/partial_file.hpp"

#if defined(TESSERA_HAVE_PNG)
#include <png.h>
#endif

namespace tessera::io {
namespace {

template <typename T>
ColorRange finite_range(std::span<const T> field) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (T v : field) {
    const double d = static_cast<double>(v);
    if (!std::isfinite(d)) continue;
    lo = d < lo ? d : lo;
    hi = d > hi ? d : hi;
  }
  if (lo > hi) return {0.0, 0.0};  // no finite value: every cell takes one colour
  return {lo, hi};
}

std::string where(const std::string& path) { return "write_png('" + path + "'): "; }

#if defined(TESSERA_HAVE_PNG)
struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

// libpng reports errors by longjmp to the setjmp below; nothing in this frame changes after the
// setjmp, so no local can be clobbered, and no C++ destructor is skipped by the jump.
bool encode(png_structp png, png_infop info, std::FILE* file, std::size_t width, std::size_t height,
            png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  return true;
}

void write_rows(const std::string& path, std::size_t width, std::size_t height,
                const std::vector<unsigned char>& rgb) {
  // Whole or absent: a failed write leaves no file (and no 0-byte one) under `path`.
  tessera::detail::PartialFile file(path, where(path));
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    throw Error(where(path) + "libpng could not allocate its state");
  }
  std::vector<png_bytep> rows(height);
  for (std::size_t y = 0; y < height; ++y) rows[y] = const_cast<png_bytep>(rgb.data() + y * width * 3);
  const bool ok = encode(png, info, file.get(), width, height, rows.data());
  png_destroy_write_struct(&png, &info);
  if (!ok) throw Error(where(path) + "libpng failed while writing (disk full?); nothing was left under that name");
  file.commit();
}
#endif

template <typename T>
ColorRange write_field(const std::string& path, std::span<const T> field, std::size_t nx, std::size_t ny,
                       const PngOptions& options) {
#if !defined(TESSERA_HAVE_PNG)
  (void)field, (void)nx, (void)ny, (void)options;
  throw Error(where(path) + "tessera was built without libpng (install libpng-dev, e.g. with scripts/install-deps, "
                            "and reconfigure)");
#else
  if (nx == 0 || ny == 0 || options.scale == 0) {
    std::ostringstream s;
    s << where(path) << "the image would be empty: nx = " << nx << ", ny = " << ny << ", scale = " << options.scale;
    throw Error(s.str());
  }
  if (field.size() != nx * ny) {
    std::ostringstream s;
    s << where(path) << "the field has " << field.size() << " values but nx * ny = " << nx << " * " << ny << " = "
      << nx * ny;
    throw Error(s.str());
  }
  const ColorRange range = options.range ? *options.range : finite_range(field);
  if (!std::isfinite(range.lo) || !std::isfinite(range.hi) || range.hi < range.lo) {
    std::ostringstream s;
    s << where(path) << "the colour range [" << range.lo << ", " << range.hi << "] must be finite with lo <= hi";
    throw Error(s.str());
  }
  constexpr std::size_t kMaxSide = 1u << 20;  // far past any screen; guards nx * scale overflowing
  if (nx > kMaxSide / options.scale || ny > kMaxSide / options.scale) {
    std::ostringstream s;
    s << where(path) << nx << " x " << ny << " cells at scale " << options.scale << " is too large an image";
    throw Error(s.str());
  }
  const std::size_t width = nx * options.scale, height = ny * options.scale;
  std::vector<unsigned char> rgb(width * height * 3);
  for (std::size_t row = 0; row < height; ++row) {
    const std::size_t y = ny - 1 - row / options.scale;  // y up: the top row is the largest y
    unsigned char* out = rgb.data() + row * width * 3;
    for (std::size_t x = 0; x < nx; ++x) {
      const Rgb c = colormap(normalise(static_cast<double>(field[x + nx * y]), range));
      for (std::size_t k = 0; k < options.scale; ++k, out += 3) {
        out[0] = c.r;
        out[1] = c.g;
        out[2] = c.b;
      }
    }
  }
  write_rows(path, width, height, rgb);
  return range;
#endif
}

}  // namespace

bool png_supported() noexcept {
#if defined(TESSERA_HAVE_PNG)
  return true;
#else
  return false;
#endif
}

ColorRange write_png(const std::string& path, std::span<const double> field, std::size_t nx, std::size_t ny,
                     const PngOptions& options) {
  return write_field(path, field, nx, ny, options);
}

ColorRange write_png(const std::string& path, std::span<const float> field, std::size_t nx, std::size_t ny,
                     const PngOptions& options) {
  return write_field(path, field, nx, ny, options);
}

}  // namespace tessera::io
