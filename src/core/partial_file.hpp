#pragma once
// Output files that are whole or absent: written to `path.partial` and renamed over `path` only
// once every byte is out, so a failed write (a full disk) or a crash never leaves a file that
// looks complete, nor a truncated one under the real name.

#include <cstdio>
#include <string>

namespace tessera::detail {

class PartialFile {
 public:
  /// Opens `path.partial` for writing; throws tessera::Error prefixed with `what` when it cannot.
  PartialFile(std::string path, std::string what);
  ~PartialFile();
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  std::FILE* get() const noexcept { return file_; }
  const std::string& partial_path() const noexcept { return partial_; }
  /// Flushes, closes and renames the file to `path`; throws tessera::Error (and removes the
  /// partial file) when any of it fails.
  void commit();

 private:
  std::string path_, partial_, what_;
  std::FILE* file_ = nullptr;
};

}  // namespace tessera::detail
