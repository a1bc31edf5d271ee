// RowRanges: every operation against a std::vector<bool> model, plus the canonical form
// (sorted, disjoint, never touching) that makes equality structural.
#include <tessera/core/error.hpp>
#include <tessera/memory/row_ranges.hpp>

#include <gtest/gtest.h>

#include <random>
#include <vector>

using tessera::RowRange;
using tessera::RowRanges;

namespace {

using Model = std::vector<bool>;

Model to_model(const RowRanges& s, std::size_t n) {
  Model m(n, false);
  for (RowRange r : s)
    for (std::size_t i = r.begin; i < r.end; ++i) m.at(i) = true;
  return m;
}

// The rows of [r.begin, r.end) where the model says `present`, as maximal runs.
RowRanges runs_where(const Model& m, RowRange r, bool present) {
  RowRanges out;
  for (std::size_t i = r.begin; i < r.end; ++i)
    if (m[i] == present) out.add({i, i + 1});
  return out;
}

void expect_canonical(const RowRanges& s) {
  std::size_t last_end = 0;
  bool first = true;
  for (RowRange r : s) {
    EXPECT_LT(r.begin, r.end) << s.to_string() << ": no empty intervals";
    if (!first) {
      EXPECT_GT(r.begin, last_end) << s.to_string() << ": intervals neither overlap nor touch";
    }
    last_end = r.end;
    first = false;
  }
}

}  // namespace

TEST(RowRanges, BasicOperations) {
  RowRanges s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.to_string(), "{}");
  s.add({0, 10});
  s.subtract({4, 6});
  EXPECT_EQ(s.to_string(), "{[0,4), [6,10)}");
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.row_count(), 8u);
  EXPECT_EQ(s.missing({2, 8}), RowRanges(RowRange{4, 6}));
  EXPECT_EQ(s.intersection({2, 8}).to_string(), "{[2,4), [6,8)}");
  EXPECT_TRUE(s.contains({0, 4}));
  EXPECT_FALSE(s.contains({3, 7}));
  EXPECT_TRUE(s.contains({5, 5})) << "an empty range is always contained";
  EXPECT_TRUE(s.overlaps({3, 5}));
  EXPECT_FALSE(s.overlaps({4, 6}));
  s.add({4, 6});
  EXPECT_EQ(s, RowRanges(RowRange{0, 10})) << "touching intervals merge";
  s.add({12, 14});
  s.add({10, 12});
  EXPECT_EQ(s, RowRanges(RowRange{0, 14}));
  s.subtract({0, 14});
  EXPECT_TRUE(s.empty());
  s.add({3, 3});
  EXPECT_TRUE(s.empty()) << "adding an empty range changes nothing";
}

TEST(RowRanges, SetOperationsTakeWholeSets) {
  RowRanges a, b;
  a.add({0, 5});
  a.add({10, 15});
  b.add({3, 12});
  RowRanges u = a;
  u.add(b);
  EXPECT_EQ(u, RowRanges(RowRange{0, 15}));
  a.subtract(b);
  EXPECT_EQ(a.to_string(), "{[0,3), [12,15)}");
}

TEST(RowRanges, ARangeEndingBeforeItBeginsIsAnError) {
  RowRanges s;
  try {
    s.add({5, 3});
    FAIL();
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("[5,3)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(s.subtract({5, 3}), tessera::Error);
  EXPECT_THROW((void)s.contains({5, 3}), tessera::Error);
  EXPECT_THROW((void)s.overlaps({5, 3}), tessera::Error);
  EXPECT_THROW((void)s.missing({5, 3}), tessera::Error);
  EXPECT_THROW((void)s.intersection({5, 3}), tessera::Error);
  EXPECT_EQ(RowRange({5, 3}).size(), 0u);
}

// Random adds and subtracts over 64 rows, every query checked against the model after each.
TEST(RowRanges, RandomOperationsMatchABitModel) {
  constexpr std::size_t n = 64;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    RowRanges s;
    Model m(n, false);
    auto random_range = [&] {
      std::size_t a = rng() % (n + 1), b = rng() % (n + 1);
      if (a > b) std::swap(a, b);
      if (rng() % 4 == 0) b = std::min(n, a + rng() % 3);  // short and empty ranges too
      return RowRange{a, b};
    };
    for (int step = 0; step < 500; ++step) {
      const RowRange r = random_range();
      if (rng() % 2 == 0) {
        s.add(r);
        for (std::size_t i = r.begin; i < r.end; ++i) m[i] = true;
      } else {
        s.subtract(r);
        for (std::size_t i = r.begin; i < r.end; ++i) m[i] = false;
      }
      ASSERT_EQ(to_model(s, n), m) << "seed " << seed << " step " << step << ": " << s.to_string();
      expect_canonical(s);
      std::size_t count = 0;
      for (bool b : m) count += b;
      ASSERT_EQ(s.row_count(), count);

      const RowRange q = random_range();
      bool all = true, any = false;
      for (std::size_t i = q.begin; i < q.end; ++i) {
        all = all && m[i];
        any = any || m[i];
      }
      ASSERT_EQ(s.contains(q), all) << s.to_string() << " contains " << q.to_string();
      ASSERT_EQ(s.overlaps(q), any) << s.to_string() << " overlaps " << q.to_string();
      const RowRanges missing = s.missing(q), common = s.intersection(q);
      ASSERT_EQ(missing, runs_where(m, q, false)) << s.to_string() << " missing " << q.to_string();
      ASSERT_EQ(common, runs_where(m, q, true)) << s.to_string() << " intersection " << q.to_string();
      expect_canonical(missing);
      expect_canonical(common);
    }
  }
}
