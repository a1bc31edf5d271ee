// unrolled_for: visits 0..N-1 in order, and the index it passes is a compile-time constant.

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tessera/core/core.hpp"

namespace {

template <std::size_t I>
constexpr std::size_t square() {
  return I * I;
}

template <std::size_t I>
struct Tag {
  static constexpr std::size_t value = I;
};

template <std::size_t N>
constexpr std::size_t sum_of_squares() {
  std::size_t total = 0;
  tessera::unrolled_for<N>([&](auto i) { total += square<i>(); });
  return total;
}

}  // namespace

TEST(UnrolledFor, VisitsZeroToNMinusOneInOrder) {
  std::vector<std::size_t> seen;
  tessera::unrolled_for<6>([&](auto i) { seen.push_back(i); });
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
}

TEST(UnrolledFor, ZeroIterationsNeverCallsTheBody) {
  int calls = 0;
  tessera::unrolled_for<0>([&](auto) { ++calls; });
  EXPECT_EQ(calls, 0);
  static_assert(sum_of_squares<0>() == 0);
}

TEST(UnrolledFor, IndexIsUsableAsATemplateArgument) {
  std::vector<std::size_t> squares;
  std::vector<std::size_t> tags;
  tessera::unrolled_for<4>([&](auto i) {
    static_assert(decltype(i)::value < 4);
    squares.push_back(square<i>());                  // via the constexpr conversion
    tags.push_back(Tag<decltype(i)::value>::value);  // via the member constant
  });
  EXPECT_EQ(squares, (std::vector<std::size_t>{0, 1, 4, 9}));
  EXPECT_EQ(tags, (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(UnrolledFor, WalksATupleOfDifferentTypes) {
  const std::tuple<int, std::string, double> t{7, "eight", 9.5};
  std::string joined;
  tessera::unrolled_for<std::tuple_size_v<decltype(t)>>([&](auto i) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(std::get<i>(t))>, std::string>)
      joined += std::get<i>(t);
    else
      joined += std::to_string(std::get<i>(t));
    joined += ';';
  });
  EXPECT_EQ(joined, "7;eight;9.500000;");
}

TEST(UnrolledFor, UsableInConstantExpressions) {
  static_assert(sum_of_squares<4>() == 0 + 1 + 4 + 9);
  static_assert(sum_of_squares<10>() == 285);
  SUCCEED();
}

TEST(UnrolledFor, CounterIsAnIntegralConstant) {
  static_assert(std::is_base_of_v<std::integral_constant<std::size_t, 2>, tessera::Constant<2>>);
  static_assert(std::size_t{tessera::Constant<5>{}} == 5);
}

TEST(UnrolledFor, DrivesPerDimensionCode) {
  const tessera::Index a{1, 2, 3};
  const tessera::Index b{10, 20, 30};
  tessera::Index<3> sum;
  tessera::unrolled_for<3>([&](auto d) {
    // A dimension tag built from the counter is rank-checked at compile time.
    sum[tessera::dim<d>] = a[d] + b[d];
  });
  EXPECT_EQ(sum, a + b);
}
