#pragma once
// A vector whose first N elements live inside it: a firing's inputs and results, which are
// almost always few, then cost no allocation even in a firing made fresh.

#include <cstddef>
#include <utility>
#include <vector>

namespace tessera::flow::detail {

template <typename T, std::size_t N>
class InlineVector {
 public:
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return i < N ? inline_[i] : more_[i - N]; }
  const T& operator[](std::size_t i) const noexcept { return i < N ? inline_[i] : more_[i - N]; }
  /// n default-valued elements.
  void assign_default(std::size_t n) {
    clear();
    size_ = n;
    if (n > N) more_.resize(n - N);
  }
  template <typename... Args>
  void emplace_back(Args&&... args) {
    if (size_ < N)
      inline_[size_] = T(std::forward<Args>(args)...);
    else
      more_.emplace_back(std::forward<Args>(args)...);
    ++size_;
  }
  /// Back to empty; the elements are reset to default values (releasing what they hold).
  void clear() {
    for (std::size_t i = 0; i < size_ && i < N; ++i) inline_[i] = T();
    more_.clear();
    size_ = 0;
  }

 private:
  T inline_[N]{};
  std::vector<T> more_;
  std::size_t size_ = 0;
};

}  // namespace tessera::flow::detail
