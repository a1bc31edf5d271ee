#include "flow-mlp/fashion_mnist.hpp"

#include <tessera/core/error.hpp>

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

namespace flow_mlp {
namespace {

constexpr std::uint32_t image_magic = 0x00000803;  // unsigned bytes, three dimensions
constexpr std::uint32_t label_magic = 0x00000801;  // unsigned bytes, one dimension

std::string hex(std::uint32_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xfu];
  return s;
}

// gzread also reads files that are not compressed, so both forms of the files work.
class GzFile {
 public:
  explicit GzFile(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    if (file_ == nullptr) throw tessera::Error("fashion-mnist: cannot open '" + path + "'");
  }
  ~GzFile() { gzclose(file_); }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  /// Reads up to `bytes` into `out`; returns how many there were. Throws when zlib fails (a
  /// corrupt stream), naming the file.
  std::size_t read(void* out, std::size_t bytes) {
    auto* at = static_cast<unsigned char*>(out);
    std::size_t done = 0;
    while (done < bytes) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(bytes - done, 1u << 30));
      const int got = gzread(file_, at + done, chunk);
      if (got < 0) {
        int code = 0;
        const char* why = gzerror(file_, &code);
        throw tessera::Error("fashion-mnist: cannot decompress '" + path_ +
                             "': " + (why != nullptr ? why : "zlib error"));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

  /// The next N big-endian 32-bit words of the header (of `header_bytes`); throws when the file
  /// ends inside the header.
  template <std::size_t N>
  std::array<std::uint32_t, N> header(const char* what, std::size_t header_bytes) {
    std::array<unsigned char, 4 * N> raw{};
    const std::size_t got = read(raw.data(), raw.size());
    header_read_ += got;
    if (got < raw.size())
      throw tessera::Error("fashion-mnist: '" + path_ + "' is truncated: " + std::to_string(header_read_) +
                           " bytes, fewer than the " + std::to_string(header_bytes) + "-byte header of an IDX " + what +
                           " file");
    std::array<std::uint32_t, N> words{};
    for (std::size_t i = 0; i < N; ++i)
      words[i] = std::uint32_t{raw[4 * i]} << 24 | std::uint32_t{raw[4 * i + 1]} << 16 |
                 std::uint32_t{raw[4 * i + 2]} << 8 | std::uint32_t{raw[4 * i + 3]};
    return words;
  }

  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  gzFile file_;
  std::size_t header_read_ = 0;
};

void check_magic(const GzFile& f, std::uint32_t magic, std::uint32_t expected, const char* what) {
  if (magic != expected)
    throw tessera::Error("fashion-mnist: '" + f.path() + "' has magic number " + hex(magic) + ", expected " +
                         hex(expected) + " (an IDX file of " + what + ")");
}

void read_body(GzFile& f, std::vector<std::uint8_t>& out, std::size_t count, std::size_t bytes_each,
               std::size_t in_header, const char* what) {
  const std::size_t bytes = count * bytes_each;
  out.resize(bytes);
  const std::size_t got = f.read(out.data(), bytes);
  if (got < bytes)
    throw tessera::Error("fashion-mnist: '" + f.path() + "' is truncated: its header announces " +
                         std::to_string(in_header) + " " + what + ", but the data ends after " + std::to_string(got) +
                         " of the " + std::to_string(bytes) + " bytes of the first " + std::to_string(count));
}

struct Images {
  Dataset data;
  std::size_t announced = 0;
};
struct Labels {
  std::vector<std::uint8_t> labels;
  std::size_t announced = 0;
};

Images read_images(const std::string& path, std::size_t limit) {
  GzFile f(path);
  // The magic number first: a label file given for images is named as such, not as short.
  check_magic(f, f.header<1>("image", 16)[0], image_magic, "unsigned-byte images");
  const auto [count, rows, cols] = f.header<3>("image", 16);
  if (count == 0 || rows == 0 || cols == 0)
    throw tessera::Error("fashion-mnist: '" + path + "' announces " + std::to_string(count) + " images of " +
                         std::to_string(rows) + " x " + std::to_string(cols) + " pixels; none may be 0");
  Images r;
  r.announced = count;
  Dataset& d = r.data;
  d.rows = rows;
  d.cols = cols;
  // rows * cols < 2^64 and count < 2^32 words: the byte count fits once the image does.
  const std::size_t per_image = d.pixels_per_image();
  if (per_image > (std::size_t{1} << 32))
    throw tessera::Error("fashion-mnist: '" + path + "' announces images of " + std::to_string(per_image) +
                         " pixels, too large for an image file");
  read_body(f, d.pixels, std::min<std::size_t>(count, limit), per_image, count, "images");
  return r;
}

Labels read_labels(const std::string& path, std::size_t limit, std::size_t classes) {
  GzFile f(path);
  check_magic(f, f.header<1>("label", 8)[0], label_magic, "unsigned-byte labels");
  const auto [count] = f.header<1>("label", 8);
  if (count == 0) throw tessera::Error("fashion-mnist: '" + path + "' announces 0 labels");
  Labels r;
  r.announced = count;
  std::vector<std::uint8_t>& labels = r.labels;
  read_body(f, labels, std::min<std::size_t>(count, limit), 1, count, "labels");
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] >= classes)
      throw tessera::Error("fashion-mnist: '" + path + "': label " + std::to_string(labels[i]) + " of example " +
                           std::to_string(i) + " is not a class (0.." + std::to_string(classes - 1) + ")");
  return r;
}

}  // namespace

Dataset read_idx_images(const std::string& path, std::size_t limit) { return read_images(path, limit).data; }

std::vector<std::uint8_t> read_idx_labels(const std::string& path, std::size_t limit, std::size_t classes) {
  return read_labels(path, limit, classes).labels;
}

Dataset read_labelled_images(const std::string& images_path, const std::string& labels_path, std::size_t limit) {
  Images images = read_images(images_path, limit);
  Labels labels = read_labels(labels_path, limit, fashion_classes);
  // The announced counts must agree, not only the slices read: a slice would hide a mismatch.
  if (images.announced != labels.announced)
    throw tessera::Error("fashion-mnist: '" + images_path + "' announces " + std::to_string(images.announced) +
                         " images but '" + labels_path + "' announces " + std::to_string(labels.announced) + " labels");
  images.data.labels = std::move(labels.labels);
  return std::move(images.data);
}

std::string fashion_mnist_directory() {
  if (const char* dir = std::getenv("FASHION_MNIST_DIR"); dir != nullptr && *dir != '\0') return dir;
  return "/usr/share/datasets/fashion-mnist";
}

Dataset read_fashion_mnist(const std::string& directory, bool training, std::size_t limit) {
  const std::string prefix = directory + (training ? "/train-" : "/t10k-");
  return read_labelled_images(prefix + "images-idx3-ubyte.gz", prefix + "labels-idx1-ubyte.gz", limit);
}

}  // namespace flow_mlp
