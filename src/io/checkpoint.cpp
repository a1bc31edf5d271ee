#include "tessera/io/checkpoint.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::io {

// Sets the file name that errors about missing scalars mention.
struct CheckpointAccess {
  static void set_source(CheckpointScalars& s, const std::string& path) { s.source_ = path; }
};

void CheckpointScalars::set_value(const std::string& name, Value value) {
  if (name.empty() || name.size() > 1024)
    throw Error("checkpoint scalars: a name must have 1 to 1024 characters, got " + std::to_string(name.size()));
  values_[name] = value;
}

std::vector<std::string> CheckpointScalars::names() const {
  std::vector<std::string> out;
  for (const auto& [name, value] : values_) out.push_back(name);
  return out;
}

const CheckpointScalars::Value& CheckpointScalars::find(const std::string& name) const {
  const auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  std::string have;
  for (const auto& [n, v] : values_) have += (have.empty() ? "" : ", ") + n;
  const std::string where = source_.empty() ? "checkpoint scalars" : "checkpoint '" + source_ + "'";
  throw Error(where + ": missing scalar '" + name + "' (it has: " + (have.empty() ? "none" : have) +
              "); save it with CheckpointScalars::set");
}

double CheckpointScalars::real(const std::string& name) const {
  const Value& v = find(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

std::int64_t CheckpointScalars::integer(const std::string& name) const {
  const Value& v = find(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  const std::string where = source_.empty() ? "checkpoint scalars" : "checkpoint '" + source_ + "'";
  throw Error(where + ": scalar '" + name + "' was saved as a real, not an integer; read it with real()");
}

namespace {

constexpr std::array<char, 8> kMagic{'T', 'E', 'S', 'S', 'C', 'K', 'P', 'T'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kByteOrder = 0x01020304;  // reads back as 0x04030201 on the other byte order
constexpr std::uint64_t kMaxMetadata = 1u << 26;  // sizes, a signature and scalars: far below this
constexpr std::uint32_t kMaxDims = 16;

// The fixed part of the file; the checksums cover everything else (metadata_checksum covers this
// header with both checksum fields zero, plus the metadata).
struct Header {
  std::array<char, 8> magic;
  std::uint32_t version;
  std::uint32_t byte_order;
  std::uint32_t element_size;
  std::uint32_t dims;
  std::uint32_t signature_length;
  std::uint32_t scalar_count;
  std::uint64_t metadata_bytes;
  std::uint64_t data_bytes;
  std::uint64_t metadata_checksum;
  std::uint64_t data_checksum;
};
static_assert(sizeof(Header) == 64 && std::is_trivially_copyable_v<Header>);

// FNV-1a over 64-bit words with a fold, so a multi-gigabyte array hashes at memory speed
// rather than a byte at a time. It detects corruption; it is not a cryptographic hash.
std::uint64_t checksum(std::span<const std::byte> bytes) {
  constexpr std::uint64_t prime = 0x100000001b3ull;
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::size_t k = 0;
  for (; k + 8 <= bytes.size(); k += 8) {
    std::uint64_t w;
    std::memcpy(&w, bytes.data() + k, 8);
    h = (h ^ w) * prime;
    h ^= h >> 29;
  }
  for (; k < bytes.size(); ++k) h = (h ^ static_cast<std::uint64_t>(bytes[k])) * prime;
  return (h ^ bytes.size()) * prime;
}

std::uint64_t metadata_checksum(Header h, std::span<const std::byte> metadata) {
  h.metadata_checksum = 0;
  h.data_checksum = 0;
  std::vector<std::byte> all(sizeof(Header) + metadata.size());
  std::memcpy(all.data(), &h, sizeof(Header));
  if (!metadata.empty()) std::memcpy(all.data() + sizeof(Header), metadata.data(), metadata.size());
  return checksum(all);
}

template <typename V>
void put(std::vector<std::byte>& out, const V& v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(V));
}
void put_text(std::vector<std::byte>& out, const std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  out.insert(out.end(), p, p + s.size());
}

std::string sizes_text(const std::vector<std::size_t>& sizes) {
  std::string s;
  for (std::size_t d = 0; d < sizes.size(); ++d) s += (d ? " x " : "") + std::to_string(sizes[d]);
  return s;
}

class BadFile {
 public:
  explicit BadFile(const std::string& path) : prefix_("checkpoint '" + path + "': ") {}
  [[noreturn]] void operator()(const std::string& what) const { throw Error(prefix_ + what); }

 private:
  std::string prefix_;
};

// Reads the metadata back, each read bounds-checked (the checksum passed, but a file written by
// a buggy or hostile writer could still lie about its lengths).
class MetadataReader {
 public:
  MetadataReader(std::span<const std::byte> bytes, const BadFile& bad) : bytes_(bytes), bad_(bad) {}
  template <typename V>
  V get() {
    V v;
    std::memcpy(&v, take(sizeof(V)), sizeof(V));
    return v;
  }
  std::string text(std::size_t n) {
    const std::byte* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::byte* take(std::size_t n) {
    if (n > bytes_.size() - at_) bad_("the metadata is malformed (it ends early); the file is corrupt");
    const std::byte* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  std::span<const std::byte> bytes_;
  const BadFile& bad_;
  std::size_t at_ = 0;
};

struct OpenedCheckpoint {
  std::ifstream in;  // positioned at the start of the data
  Header header{};
  CheckpointInfo info;
};

OpenedCheckpoint open_checkpoint(const std::string& path) {
  const BadFile bad(path);
  OpenedCheckpoint c;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) bad("file not found");
  if (std::filesystem::is_directory(path, ec)) bad("is a directory, not a checkpoint file");
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, ec);
  if (ec) bad("cannot read its size: " + ec.message());
  c.in.open(path, std::ios::binary);
  if (!c.in) bad("cannot be opened for reading (permissions?)");

  Header& h = c.header;
  c.in.read(reinterpret_cast<char*>(&h), sizeof(Header));
  const auto got = static_cast<std::size_t>(c.in.gcount());
  if (got < kMagic.size() || std::memcmp(h.magic.data(), kMagic.data(), kMagic.size()) != 0)
    bad("not a tessera checkpoint (wrong magic: the file does not start with \"TESSCKPT\")");
  if (got < sizeof(Header))
    bad("truncated: " + std::to_string(file_bytes) + " bytes, shorter than the " + std::to_string(sizeof(Header)) +
        "-byte header");
  if (h.byte_order != kByteOrder) bad("written on a machine of the other byte order; restore it on a like machine");
  if (h.version != kVersion)
    bad("format version " + std::to_string(h.version) + ", this tessera reads version " + std::to_string(kVersion));
  if (h.metadata_bytes > kMaxMetadata || h.dims == 0 || h.dims > kMaxDims)
    bad("the header is corrupt (metadata of " + std::to_string(h.metadata_bytes) + " bytes, " +
        std::to_string(h.dims) + " dimensions)");
  const std::uintmax_t expected = sizeof(Header) + h.metadata_bytes + h.data_bytes;
  if (h.data_bytes > file_bytes || file_bytes < expected)
    bad("truncated: " + std::to_string(file_bytes) + " bytes, but its header promises " + std::to_string(expected) +
        " (was the run killed while writing it?)");
  if (file_bytes > expected)
    bad("corrupt: " + std::to_string(file_bytes - expected) + " bytes follow the data the header describes");

  std::vector<std::byte> metadata(h.metadata_bytes);
  c.in.read(reinterpret_cast<char*>(metadata.data()), static_cast<std::streamsize>(metadata.size()));
  if (static_cast<std::uint64_t>(c.in.gcount()) != h.metadata_bytes) bad("could not read the metadata");
  if (metadata_checksum(h, metadata) != h.metadata_checksum)
    bad("the header is corrupt (checksum mismatch); restore from an older checkpoint");

  MetadataReader r(metadata, bad);
  CheckpointInfo& info = c.info;
  info.element_size = h.element_size;
  for (std::uint32_t d = 0; d < h.dims; ++d) info.sizes.push_back(static_cast<std::size_t>(r.get<std::uint64_t>()));
  info.element_type = r.text(h.signature_length);
  for (std::uint32_t k = 0; k < h.scalar_count; ++k) {
    const auto kind = r.get<std::uint8_t>();
    const auto length = r.get<std::uint32_t>();
    const std::string name = r.text(length);
    if (kind == 0) {
      info.scalars.set(name, r.get<double>());
    } else if (kind == 1) {
      info.scalars.set(name, r.get<std::int64_t>());
    } else {
      bad("scalar '" + name + "' has unknown kind " + std::to_string(kind) + "; the file is corrupt");
    }
  }
  if (!r.done()) bad("the metadata is malformed (bytes left over); the file is corrupt");
  CheckpointAccess::set_source(info.scalars, path);
  return c;
}

}  // namespace

namespace detail {

void write_checkpoint(const std::string& path, const CheckpointShape& shape, std::span<const std::byte> data,
                      const CheckpointScalars& scalars) {
  std::vector<std::byte> metadata;
  for (std::size_t n : shape.sizes) put(metadata, static_cast<std::uint64_t>(n));
  put_text(metadata, shape.element_type);
  for (const auto& [name, value] : scalars.values()) {
    put(metadata, static_cast<std::uint8_t>(value.index()));  // 0 real, 1 integer
    put(metadata, static_cast<std::uint32_t>(name.size()));
    put_text(metadata, name);
    std::visit([&](auto v) { put(metadata, v); }, value);
  }
  Header h{};
  h.magic = kMagic;
  h.version = kVersion;
  h.byte_order = kByteOrder;
  h.element_size = static_cast<std::uint32_t>(shape.element_size);
  h.dims = static_cast<std::uint32_t>(shape.sizes.size());
  h.signature_length = static_cast<std::uint32_t>(shape.element_type.size());
  h.scalar_count = static_cast<std::uint32_t>(scalars.values().size());
  h.metadata_bytes = metadata.size();
  h.data_bytes = data.size();
  h.metadata_checksum = metadata_checksum(h, metadata);
  h.data_checksum = checksum(data);

  // Written beside the target and renamed over it: a crash mid-write leaves the old checkpoint.
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("checkpoint '" + path + "': cannot open '" + partial + "' for writing; check that its directory exists and is writable");
    out.write(reinterpret_cast<const char*>(&h), sizeof(Header));
    out.write(reinterpret_cast<const char*>(metadata.data()), static_cast<std::streamsize>(metadata.size()));
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(partial, ignored);
      throw Error("checkpoint '" + path + "': writing failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) {
    std::filesystem::remove(partial, ec);
    throw Error("checkpoint '" + path + "': cannot replace it with the new checkpoint: " + ec.message());
  }
}

CheckpointScalars read_checkpoint(const std::string& path, const CheckpointShape& expected,
                                  std::span<std::byte> data) {
  const BadFile bad(path);
  OpenedCheckpoint c = open_checkpoint(path);
  const CheckpointInfo& info = c.info;
  if (info.element_size != expected.element_size)
    bad("holds " + std::to_string(info.element_size) + "-byte elements (" + info.element_type +
        ") but the tensor's elements are " + std::to_string(expected.element_size) + " bytes (" +
        expected.element_type + "); restore into the element type it was saved from");
  if (info.element_type != expected.element_type)
    bad("holds elements of type " + info.element_type + " but the tensor's are " + expected.element_type);
  if (info.sizes != expected.sizes)
    bad("holds sizes " + sizes_text(info.sizes) + " (" + std::to_string(info.sizes.size()) +
        "-D) but the tensor has " + sizes_text(expected.sizes) + " (" + std::to_string(expected.sizes.size()) +
        "-D); resize the tensor first (inspect_checkpoint gives the sizes)");
  if (c.header.data_bytes != data.size())
    bad("the header is corrupt (" + std::to_string(c.header.data_bytes) + " data bytes for " +
        std::to_string(data.size()) + " expected)");
  c.in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (static_cast<std::size_t>(c.in.gcount()) != data.size()) bad("could not read the data");
  if (checksum(data) != c.header.data_checksum)
    bad("the data is corrupt (checksum mismatch); restore from an older checkpoint");
  return info.scalars;
}

}  // namespace detail

CheckpointInfo inspect_checkpoint(const std::string& path) { return open_checkpoint(path).info; }

}  // namespace tessera::io
