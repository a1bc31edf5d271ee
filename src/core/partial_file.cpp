#include "partial_file.hpp"

#include <tessera/core/error.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tessera::detail {

PartialFile::PartialFile(std::string path, std::string what)
    : path_(std::move(path)), partial_(path_ + ".partial"), what_(std::move(what)) {
  file_ = std::fopen(partial_.c_str(), "wb");
  if (!file_)
    throw Error(what_ + "cannot open '" + partial_ + "' for writing (" + std::strerror(errno) +
                "); check that its directory exists and is writable");
}

PartialFile::~PartialFile() {
  if (!file_) return;
  std::fclose(file_);
  std::error_code ignored;
  std::filesystem::remove(partial_, ignored);
}

void PartialFile::commit() {
  const bool flushed = std::fflush(file_) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  std::error_code ec;
  if (!flushed || !closed) {
    std::filesystem::remove(partial_, ec);
    throw Error(what_ + "writing '" + path_ + "' failed (" + std::strerror(flushed ? errno : flush_errno) +
                "; disk full?); nothing was left under that name");
  }
  std::filesystem::rename(partial_, path_, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(partial_, ignored);
    throw Error(what_ + "cannot rename '" + partial_ + "' to '" + path_ + "': " + ec.message());
  }
}

}  // namespace tessera::detail
