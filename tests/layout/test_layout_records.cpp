// Records as owned values: construction, named accessors, vector arithmetic, and the compile-time
// offsets of their storage descriptors.

#include <gtest/gtest.h>

#include <type_traits>

#include "layout_test_types.hpp"

using namespace tessera;
using layout_test::Cell;
using layout_test::Particle;
using layout_test::State;

TEST(LayoutRecords, StorageDescriptorOffsetsMatchAStructAndPackedArrays) {
  using D = StorageDescriptor<bool, double, Vector<float, 2>, int>;
  static_assert(D::members == 4 && D::components == 5);
  // AoS as the compiler would lay out struct { bool; double; float[2]; int; }.
  static_assert(D::aos_offset<0> == 0 && D::aos_offset<1> == 8 && D::aos_offset<2> == 16 && D::aos_offset<3> == 24);
  static_assert(D::aos_bytes == 32);
  // SoA packs each site's scalars without padding.
  static_assert(D::site_bytes == 1 + 8 + 8 + 4);
  static_assert(D::soa_prefix<0> == 0 && D::soa_prefix<1> == 1 && D::soa_prefix<2> == 9 && D::soa_prefix<3> == 17);
  struct Same {
    bool a;
    double b;
    float c[2];
    int d;
  };
  EXPECT_EQ(sizeof(Same), D::aos_bytes);
  EXPECT_EQ(offsetof(Same, c), D::aos_offset<2>);
}

TEST(LayoutRecords, OwnedValuesStartAtZeroAndTakeTheirMembers) {
  Particle<float> zero;
  EXPECT_EQ(zero.position(), (Vec<float, 3>{0, 0, 0}));
  Particle<float> p({1, 2, 3}, {4, 5, 6});
  EXPECT_EQ(p.position().x, 1);
  EXPECT_EQ(p.position().z, 3);
  EXPECT_EQ(p.velocity().y, 5);
  EXPECT_EQ((p.get<1, 2>()), 6);
  p.update(0.5f);
  EXPECT_EQ(p.position(), (Vec<float, 3>{3, 4.5f, 6}));
  static_assert(std::is_trivially_copyable_v<Particle<float>>, "owned records copy as bytes (to GPUs, too)");
  static_assert(sizeof(Particle<double>) == 6 * sizeof(double));
}

TEST(LayoutRecords, NamedComponentsAreReferencesIntoTheRecord) {
  Particle<double> p;
  auto v = p.velocity();
  v.y = 7;
  v[2] = 8;
  EXPECT_EQ(p.velocity().y, 7);
  EXPECT_EQ(p.get<1>()[2], 8);
  const Particle<double>& c = p;
  static_assert(std::is_same_v<decltype(c.velocity()), VecRef<const double, 3>>, "const records read only");
  EXPECT_EQ(c.velocity().z, 8);
}

TEST(LayoutRecords, MixedMembersAndNonTypeParameters) {
  Cell<> cell(true, 2.5, {1.5f, -1.5f}, 42);
  EXPECT_TRUE(cell.active());
  EXPECT_EQ(cell.pressure(), 2.5);
  EXPECT_EQ(cell.flow().y, -1.5f);
  EXPECT_EQ(cell.id(), 42);

  State<float, 2> s({1, 2, 3, 4});
  EXPECT_EQ(s.density(), 1);
  EXPECT_EQ(s.energy(), 2);
  EXPECT_EQ(s.velocity(1), 4);
  static_assert(std::is_same_v<with_storage_t<State<float, 2>, View<Strided>>, State<float, 2, View<Strided>>>);
  static_assert(std::is_same_v<with_storage_t<Particle<float>, View<Tiled<8>>>, Particle<float, View<Tiled<8>>>>);
}

TEST(LayoutRecords, VectorArithmeticMixesValuesAndReferences) {
  Vec<float, 3> a{1, 2, 3};
  Particle<float> p({0, 0, 0}, {1, 1, 1});
  p.position() = a * 2.0f;
  EXPECT_EQ(p.position(), (Vec<float, 3>{2, 4, 6}));
  p.position() -= p.velocity();
  EXPECT_EQ(p.position(), (Vec<float, 3>{1, 3, 5}));
  EXPECT_EQ(dot(p.position(), a), 1 + 6 + 15);
  Vec<float, 3> sum = p.position() + p.velocity();
  EXPECT_EQ(sum, (Vec<float, 3>{2, 4, 6}));
  Vec<float, 6> wide = Vec<float, 6>::filled(2);
  wide /= 4.0f;
  EXPECT_EQ(wide[5], 0.5f);
}
