// Checkpoints: bit-identical round trips of a Record tensor from 4 partitions into 1 and across
// layouts (on host, sim:1, sim:4), numbers and scalars exactly, and a tessera::Error naming the
// file for each bad file: not found, wrong magic, truncated, corrupt header or data, another
// element size or type, other sizes, a missing scalar.
#include "io_test_support.hpp"

#include <tessera/io/checkpoint.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <vector>

using namespace tessera;
using namespace io_test;
namespace io = tessera::io;

namespace {

using State2 = State<double, 2>;

// Awkward bit patterns too: -0, a denormal, NaN with a payload, infinities.
double value_of(std::size_t k, std::size_t j) {
  switch ((k + j) % 11) {
    case 0: return -0.0;
    case 1: return std::numeric_limits<double>::denorm_min() * static_cast<double>(k + 1);
    case 2: {
      std::uint64_t bits = 0x7ff8000000000000ull | (k * 131 + j);
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case 3: return -std::numeric_limits<double>::infinity();
    default: return std::sin(static_cast<double>(k) + 0.1 * static_cast<double>(j)) * 1e3;
  }
}

std::vector<State2> states(std::size_t n) {
  std::vector<State2> v(n);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j = 0; j < 4; ++j) v[k].template get<0>()[j] = value_of(k, j);
  return v;
}

template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Expects `f` to throw a tessera::Error whose message names `path` and contains `what`.
template <typename F>
void expect_error(F&& f, const std::string& path, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "expected a tessera::Error containing '" << what << "'";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'" + path + "'"), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

class IoCheckpoint : public OnDevices {};

TEST_P(IoCheckpoint, RecordRoundTripFourPartitionsIntoOneAcrossLayouts) {
  ScratchDir dir;
  const Extent<2> n{13, 7};
  TensorOptions<2> four;
  four.partitions = {2, 2};
  four.sub_partitions = {1, 2};
  four.with_padding(1);
  Tensor<State2, 2, Strided> saved(memory(), n, four);
  const std::vector<State2> in = states(n.volume());
  saved.fill_from(in.data());

  io::CheckpointScalars s;
  s.set("time", 0.1 + 0.2);  // not a short decimal: must come back bit for bit
  s.set("step", std::int64_t{1} << 40);
  s.set("dt", 1.0 / 3.0);
  s.set("cfl", 0.45);
  const std::string path = dir.file("state.ckpt");
  io::save_checkpoint(path, saved, s);
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));

  Tensor<State2, 2, Contiguous> one(memory(), n);
  const io::CheckpointScalars r = io::load_checkpoint(path, one);
  std::vector<State2> out(n.volume());
  one.gather_to(out.data());
  EXPECT_TRUE(same_bytes(in, out));
  EXPECT_EQ(r.real("time"), 0.1 + 0.2);
  EXPECT_EQ(r.integer("step"), std::int64_t{1} << 40);
  EXPECT_EQ(r.real("dt"), 1.0 / 3.0);
  EXPECT_EQ(r.real("cfl"), 0.45);
  EXPECT_EQ(r.names(), (std::vector<std::string>{"cfl", "dt", "step", "time"}));
  EXPECT_EQ(r.source(), path);

  TensorOptions<2> other;
  other.partitions = {1, 3};
  Tensor<State2, 2, Tiled<4>> tiled(memory(), n, other);
  io::load_checkpoint(path, tiled);
  std::vector<State2> out_tiled(n.volume());
  tiled.gather_to(out_tiled.data());
  EXPECT_TRUE(same_bytes(in, out_tiled));

  // Saving the restored state gives the same file, byte for byte.
  const std::string again = dir.file("again.ckpt");
  io::save_checkpoint(again, tiled, s);
  EXPECT_EQ(read_text(path), read_text(again));
}

TEST_P(IoCheckpoint, NumbersIn3D) {
  ScratchDir dir;
  TensorOptions<3> o;
  o.partitions = {1, 2, 2};
  Tensor<float, 3> t(memory(), {5, 4, 6}, o);
  std::vector<float> in(t.size().volume());
  for (std::size_t k = 0; k < in.size(); ++k) in[k] = std::ldexp(static_cast<float>(k) + 0.3f, -static_cast<int>(k % 9));
  t.fill_from(in.data());
  const std::string path = dir.file("f.ckpt");
  io::save_checkpoint(path, t);

  const io::CheckpointInfo info = io::inspect_checkpoint(path);
  EXPECT_EQ(info.sizes, (std::vector<std::size_t>{5, 4, 6}));
  EXPECT_EQ(info.element_size, sizeof(float));
  EXPECT_EQ(info.element_type, "f32");
  EXPECT_TRUE(info.scalars.names().empty());

  Tensor<float, 3, Strided> u(memory(), {5, 4, 6});
  io::load_checkpoint(path, u);
  std::vector<float> out(in.size());
  u.gather_to(out.data());
  EXPECT_TRUE(same_bytes(in, out));
}

IO_TEST_ON_DEVICES(IoCheckpoint);

class IoCheckpointErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_ = std::make_unique<DeviceSet>(DeviceSet::select("host"));
    memory_ = std::make_unique<MemoryManager>(*devices_);
    t_ = std::make_unique<Tensor<double, 2>>(*memory_, Extent<2>{8, 6});
    std::vector<double> v(48);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = 0.5 * static_cast<double>(k);
    t_->fill_from(v.data());
    io::CheckpointScalars s;
    s.set("time", 2.5);
    s.set("step", 7);
    path_ = dir_.file("good.ckpt");
    io::save_checkpoint(path_, *t_, s);
  }
  void TearDown() override {
    t_.reset();
    memory_.reset();
    devices_.reset();
  }
  // A copy of the good file with `edit` applied to its bytes.
  std::string edited(const std::string& name, const std::function<void(std::string&)>& edit) {
    std::string bytes = read_text(path_);
    edit(bytes);
    const std::string p = dir_.file(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  ScratchDir dir_;
  std::unique_ptr<DeviceSet> devices_;
  std::unique_ptr<MemoryManager> memory_;
  std::unique_ptr<Tensor<double, 2>> t_;
  std::string path_;
};

TEST_F(IoCheckpointErrors, FileNotFound) {
  const std::string p = dir_.file("missing.ckpt");
  expect_error([&] { io::load_checkpoint(p, *t_); }, p, "file not found");
  expect_error([&] { io::inspect_checkpoint(p); }, p, "file not found");
}

TEST_F(IoCheckpointErrors, WrongMagic) {
  const std::string p = edited("magic.ckpt", [](std::string& b) { b[0] = 'X'; });
  expect_error([&] { io::load_checkpoint(p, *t_); }, p, "wrong magic");
  const std::string text = dir_.file("text.ckpt");
  std::ofstream(text) << "hi";
  expect_error([&] { io::load_checkpoint(text, *t_); }, text, "wrong magic");
}

TEST_F(IoCheckpointErrors, WrongVersion) {
  const std::string p = edited("version.ckpt", [](std::string& b) { b[8] = 9; });
  expect_error([&] { io::load_checkpoint(p, *t_); }, p, "format version 9");
}

TEST_F(IoCheckpointErrors, Truncated) {
  const std::string cut = edited("cut.ckpt", [](std::string& b) { b.resize(b.size() - 5); });
  expect_error([&] { io::load_checkpoint(cut, *t_); }, cut, "truncated");
  const std::string header_only = edited("header.ckpt", [](std::string& b) { b.resize(20); });
  expect_error([&] { io::load_checkpoint(header_only, *t_); }, header_only, "truncated");
  const std::string longer = edited("longer.ckpt", [](std::string& b) { b += "xyz"; });
  expect_error([&] { io::load_checkpoint(longer, *t_); }, longer, "3 bytes follow the data");
}

TEST_F(IoCheckpointErrors, CorruptHeaderOrData) {
  // Byte 70 lies in the metadata (the sizes), the last byte in the data.
  const std::string meta = edited("meta.ckpt", [](std::string& b) { b[70] = static_cast<char>(b[70] ^ 1); });
  expect_error([&] { io::load_checkpoint(meta, *t_); }, meta, "header is corrupt");
  const std::string data = edited("data.ckpt", [](std::string& b) { b.back() = static_cast<char>(b.back() ^ 0x10); });
  expect_error([&] { io::load_checkpoint(data, *t_); }, data, "data is corrupt");
}

TEST_F(IoCheckpointErrors, WrongElementSizeOrType) {
  Tensor<float, 2> f(*memory_, {8, 6});
  expect_error([&] { io::load_checkpoint(path_, f); }, path_, "holds 8-byte elements (f64) but the tensor's elements are 4 bytes (f32)");
  Tensor<std::int64_t, 2> i(*memory_, {8, 6});
  expect_error([&] { io::load_checkpoint(path_, i); }, path_, "holds elements of type f64 but the tensor's are i64");
  Tensor<State2, 2> s(*memory_, {8, 6});
  expect_error([&] { io::load_checkpoint(path_, s); }, path_, "(record{f64x4})");
}

TEST_F(IoCheckpointErrors, WrongSizes) {
  Tensor<double, 2> other(*memory_, {6, 8});
  expect_error([&] { io::load_checkpoint(path_, other); }, path_, "holds sizes 8 x 6 (2-D) but the tensor has 6 x 8 (2-D)");
  Tensor<double, 3> deeper(*memory_, {8, 6, 1});
  expect_error([&] { io::load_checkpoint(path_, deeper); }, path_, "but the tensor has 8 x 6 x 1 (3-D)");
}

TEST_F(IoCheckpointErrors, MissingOrMistypedScalar) {
  const io::CheckpointScalars s = io::load_checkpoint(path_, *t_);
  EXPECT_EQ(s.integer("step"), 7);
  EXPECT_EQ(s.real("step"), 7.0);
  expect_error([&] { (void)s.real("dt"); }, path_, "missing scalar 'dt' (it has: step, time)");
  expect_error([&] { (void)s.integer("time"); }, path_, "saved as a real");
}

TEST_F(IoCheckpointErrors, UnwritableDirectory) {
  const std::string p = dir_.file("no/such/dir/x.ckpt");
  expect_error([&] { io::save_checkpoint(p, *t_); }, p, "cannot open");
}

}  // namespace
