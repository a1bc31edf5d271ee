// apps/flow-mlp's IDX reader: the real Fashion-MNIST files (when installed), slices, and each
// kind of damaged file giving a tessera::Error that names the file and what is wrong.

#include "flow-mlp/fashion_mnist.hpp"

#include <tessera/core/error.hpp>

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

namespace fm = flow_mlp;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> big_endian(std::initializer_list<std::uint32_t> words) {
  std::vector<std::uint8_t> bytes;
  for (std::uint32_t w : words)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<std::uint8_t>(w >> shift));
  return bytes;
}

std::vector<std::uint8_t> image_file(std::uint32_t magic, std::uint32_t count, std::uint32_t rows, std::uint32_t cols,
                                     std::size_t pixel_bytes) {
  auto bytes = big_endian({magic, count, rows, cols});
  for (std::size_t i = 0; i < pixel_bytes; ++i) bytes.push_back(static_cast<std::uint8_t>(i * 7 + 3));
  return bytes;
}

std::vector<std::uint8_t> label_file(std::uint32_t magic, std::uint32_t count, std::vector<std::uint8_t> labels) {
  auto bytes = big_endian({magic, count});
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

class IdxFiles : public ::testing::Test {
 protected:
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("flow_mlp_reader_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }

  std::string write_plain(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    const std::string path = (dir / name).string();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  std::string write_gz(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    const std::string path = (dir / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(f);
    return path;
  }
};

/// The message of the tessera::Error `f` throws; a failure if it throws none.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no tessera::Error";
  return {};
}

}  // namespace

TEST_F(IdxFiles, ReadsCompressedAndPlainFilesAndSlices) {
  const auto images = image_file(0x803, 5, 3, 2, 30);
  const auto labels = label_file(0x801, 5, {4, 0, 9, 1, 2});
  const std::string gz_images = write_gz("images.gz", images), gz_labels = write_gz("labels.gz", labels);
  const std::string plain_images = write_plain("images", images), plain_labels = write_plain("labels", labels);
  for (const auto& [ip, lp] : {std::pair{gz_images, gz_labels}, std::pair{plain_images, plain_labels}}) {
    const fm::Dataset all = fm::read_labelled_images(ip, lp);
    EXPECT_EQ(all.rows, 3u);
    EXPECT_EQ(all.cols, 2u);
    ASSERT_EQ(all.size(), 5u);
    EXPECT_EQ(all.labels, (std::vector<std::uint8_t>{4, 0, 9, 1, 2}));
    EXPECT_EQ(all.pixels, std::vector<std::uint8_t>(images.begin() + 16, images.end()));
    const fm::Dataset two = fm::read_labelled_images(ip, lp, 2);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two.pixels, std::vector<std::uint8_t>(images.begin() + 16, images.begin() + 16 + 12));
    EXPECT_EQ(two.labels, (std::vector<std::uint8_t>{4, 0}));
  }
}

TEST_F(IdxFiles, BadMagicNumbersNameTheFile) {
  const std::string images = write_gz("swapped-images.gz", label_file(0x801, 5, {1, 2, 3, 4, 5}));
  std::string what = error_of([&] { fm::read_idx_images(images); });
  EXPECT_NE(what.find(images), std::string::npos) << what;
  EXPECT_NE(what.find("magic number 0x00000801, expected 0x00000803"), std::string::npos) << what;
  const std::string labels = write_plain("swapped-labels", image_file(0x803, 2, 1, 1, 2));
  what = error_of([&] { fm::read_idx_labels(labels); });
  EXPECT_NE(what.find(labels), std::string::npos) << what;
  EXPECT_NE(what.find("magic number 0x00000803, expected 0x00000801"), std::string::npos) << what;
}

TEST_F(IdxFiles, TruncatedFilesSayWhereTheyEnd) {
  // The header announces 4 images of 3 x 3, the data stops inside the third.
  const std::string images = write_gz("short-images.gz", image_file(0x803, 4, 3, 3, 22));
  std::string what = error_of([&] { fm::read_idx_images(images); });
  EXPECT_NE(what.find(images + "' is truncated"), std::string::npos) << what;
  EXPECT_NE(what.find("announces 4 images"), std::string::npos) << what;
  EXPECT_NE(what.find("after 22 of the 36 bytes"), std::string::npos) << what;
  // A slice that ends before the damage reads fine.
  EXPECT_EQ(fm::read_idx_images(images, 2).pixels.size(), 18u);

  const std::string header = write_plain("header-only", big_endian({0x803, 4}));
  what = error_of([&] { fm::read_idx_images(header); });
  EXPECT_NE(what.find("8 bytes, fewer than the 16-byte header"), std::string::npos) << what;

  const std::string labels = write_gz("short-labels.gz", label_file(0x801, 10, {1, 2, 3}));
  what = error_of([&] { fm::read_idx_labels(labels); });
  EXPECT_NE(what.find(labels + "' is truncated"), std::string::npos) << what;
}

TEST_F(IdxFiles, InconsistentContentsAreErrors) {
  const std::string zero = write_plain("zero-rows", image_file(0x803, 3, 0, 28, 0));
  EXPECT_NE(error_of([&] { fm::read_idx_images(zero); }).find("3 images of 0 x 28 pixels"), std::string::npos);

  const std::string bad_label = write_plain("bad-label", label_file(0x801, 3, {1, 10, 2}));
  EXPECT_NE(error_of([&] { fm::read_idx_labels(bad_label); }).find("label 10 of example 1 is not a class (0..9)"),
            std::string::npos);

  // Counts must agree even when both slices would be complete.
  const std::string images = write_plain("images", image_file(0x803, 6, 2, 2, 24));
  const std::string labels = write_plain("labels", label_file(0x801, 5, {0, 1, 2, 3, 4}));
  const std::string what = error_of([&] { fm::read_labelled_images(images, labels, 3); });
  EXPECT_NE(what.find("announces 6 images but '" + labels + "' announces 5 labels"), std::string::npos) << what;
}

TEST_F(IdxFiles, MissingAndCorruptFiles) {
  const std::string missing = (dir / "no-such-file.gz").string();
  EXPECT_NE(error_of([&] { fm::read_idx_images(missing); }).find("cannot open '" + missing + "'"), std::string::npos);
  // A gzip header followed by bytes that are no deflate stream.
  std::vector<std::uint8_t> corrupt{0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03};
  for (int i = 0; i < 64; ++i) corrupt.push_back(static_cast<std::uint8_t>(0xff - i));
  const std::string path = write_plain("corrupt.gz", corrupt);
  const std::string what = error_of([&] { fm::read_idx_images(path); });
  EXPECT_NE(what.find(path), std::string::npos) << what;
}

TEST(FashionMnistFiles, FirstExamplesOfTheInstalledDataSet) {
  const std::string dir = fm::fashion_mnist_directory();
  if (!fs::exists(dir + "/t10k-labels-idx1-ubyte.gz")) GTEST_SKIP() << "Fashion-MNIST is not installed in " << dir;
  const fm::Dataset train = fm::read_fashion_mnist(dir, true, 10);
  ASSERT_EQ(train.size(), 10u);
  EXPECT_EQ(train.rows, 28u);
  EXPECT_EQ(train.cols, 28u);
  EXPECT_EQ(train.labels, (std::vector<std::uint8_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5}));
  EXPECT_EQ(std::accumulate(train.pixels.begin(), train.pixels.begin() + 784, 0u), 76247u);
  const fm::Dataset test = fm::read_fashion_mnist(dir, false);
  ASSERT_EQ(test.size(), 10000u);
  EXPECT_EQ(test.labels[0], 9);
  EXPECT_EQ(std::accumulate(test.pixels.begin(), test.pixels.begin() + 784, 0u), 33456u);
}
