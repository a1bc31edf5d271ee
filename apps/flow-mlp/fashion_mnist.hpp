#pragma once
// Fashion-MNIST in the IDX format of LeCun's MNIST (gzip-compressed or not): images are
// unsigned bytes (magic 0x00000803: count, rows, columns, then the pixels row by row), labels
// are unsigned bytes (magic 0x00000801: count, then one byte each), big-endian 32-bit header
// words. Every header is checked; whatever is wrong is a tessera::Error naming the file.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace flow_mlp {

/// Labelled images, pixel bytes of image i at [i * pixels_per_image(), (i + 1) * pixels_per_image()).
struct Dataset {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;

  std::size_t size() const noexcept { return labels.size(); }
  std::size_t pixels_per_image() const noexcept { return rows * cols; }
};

inline constexpr std::size_t all_examples = std::numeric_limits<std::size_t>::max();
/// Fashion-MNIST's ten classes (T-shirt/top ... ankle boot).
inline constexpr std::size_t fashion_classes = 10;

/// The images of an IDX image file, only the first `limit` of them (fewer if the file holds
/// fewer). Throws tessera::Error naming `path` when it cannot be opened or decompressed, its magic
/// number is not 0x00000803, a dimension is 0, or the pixel data ends early.
Dataset read_idx_images(const std::string& path, std::size_t limit = all_examples);
/// The labels of an IDX label file, only the first `limit`; the same checks (magic 0x00000801),
/// and every label must be below `classes`.
std::vector<std::uint8_t> read_idx_labels(const std::string& path, std::size_t limit = all_examples,
                                          std::size_t classes = fashion_classes);
/// Images and their labels, the first `limit` of each; throws tessera::Error when the files hold
/// different numbers of examples.
Dataset read_labelled_images(const std::string& images_path, const std::string& labels_path,
                             std::size_t limit = all_examples);

/// The directory of the four files: FASHION_MNIST_DIR when set, else where Debian's
/// dataset-fashion-mnist package puts them.
std::string fashion_mnist_directory();
/// The training set (train-*) or the test set (t10k-*) in `directory`.
Dataset read_fashion_mnist(const std::string& directory, bool training, std::size_t limit = all_examples);

}  // namespace flow_mlp
