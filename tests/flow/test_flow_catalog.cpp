// Every catalog operation against a plain loop, on host, sim:1 and sim:4; reductions bitwise
// equal across backends and worker counts.

#include "flow_test_support.hpp"

#include <tessera/sched/executor.hpp>

#include <cmath>
#include <numeric>

namespace flow = tessera::flow;
using flow_test::sample;

class Catalog : public ::testing::TestWithParam<std::string> {
 protected:
  tessera::DeviceSet devices = tessera::DeviceSet::select(GetParam());
  flow::Flow f{devices};

  template <typename T, typename Port>
  T run_one(Port& out, auto send_inputs) {
    std::vector<T> got;
    f.on_receive(out, [&](const T& v) { got.push_back(v); });
    send_inputs();
    f.wait();
    EXPECT_EQ(got.size(), 1u);
    return got.empty() ? T{} : got[0];
  }
};

TEST_P(Catalog, Map1Map2Map3MapIndexed) {
  const auto x = sample<double>(10007, 1), y = sample<double>(10007, 2), z = sample<double>(10007, 3);
  auto& m1 = flow::map<double>(f, "square", [](double v) { return v * v; });
  auto& m2 = flow::map2<double, double>(f, "axpy", [](double a, double b) { return 2 * a + b; });
  auto& m3 = flow::map3<double, double, double>(f, "fma", [](double a, double b, double c) { return a * b + c; });
  auto& mi = flow::map_indexed<double>(f, "index", [](std::size_t i, double v) { return v + static_cast<double>(i); });
  std::vector<double> r1, r2, r3, ri;
  f.on_receive(m1.output, [&](const flow::Vector<double>& v) { r1 = v.to_vector(); });
  f.on_receive(m2.output, [&](const flow::Vector<double>& v) { r2 = v.to_vector(); });
  f.on_receive(m3.output, [&](const flow::Vector<double>& v) { r3 = v.to_vector(); });
  f.on_receive(mi.output, [&](const flow::Vector<double>& v) { ri = v.to_vector(); });
  flow::Vector<double> ax(f, x), ay(f, y), az(f, z);
  f.send(m1.input, ax);
  auto set = f.new_input_set();
  f.send(m2.first, ax, set);
  f.send(m2.second, ay, set);
  set = f.new_input_set();
  f.send(m3.first, ax, set);
  f.send(m3.second, ay, set);
  f.send(m3.third, az, set);
  f.send(mi.input, ax);
  f.wait();
  ASSERT_EQ(r1.size(), x.size());
  ASSERT_EQ(r2.size(), x.size());
  ASSERT_EQ(r3.size(), x.size());
  ASSERT_EQ(ri.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(r1[i], x[i] * x[i]);
    EXPECT_EQ(r2[i], 2 * x[i] + y[i]);
    EXPECT_EQ(r3[i], x[i] * y[i] + z[i]);
    EXPECT_EQ(ri[i], x[i] + static_cast<double>(i));
  }
}

TEST_P(Catalog, ReductionsMatchReferenceAndAreBitwiseStable) {
  const auto x = sample<double>(50001, 4), y = sample<double>(50001, 5);
  auto& sum = flow::reduce<double>(f, "sum", 0.0, [](double a, double b) { return a + b; });
  auto& mx = flow::reduce<double>(f, "max", -1e300, [](double a, double b) { return a > b ? a : b; });
  auto& dot = f.add<flow::ScalarProduct<double>>();
  auto& avg = f.add<flow::Average<double>>();
  auto& var = f.add<flow::Variance<double>>();
  double s = 0, m = 0, d = 0, a = 0, v = 0;
  f.on_receive(sum.output, [&](const flow::Scalar<double>& r) { s = r.value(); });
  f.on_receive(mx.output, [&](const flow::Scalar<double>& r) { m = r.value(); });
  f.on_receive(dot.output, [&](const flow::Scalar<double>& r) { d = r.value(); });
  f.on_receive(avg.output, [&](const flow::Scalar<double>& r) { a = r.value(); });
  f.on_receive(var.output, [&](const flow::Scalar<double>& r) { v = r.value(); });
  flow::Vector<double> ax(f, x), ay(f, y);
  f.send(sum.input, ax);
  f.send(mx.input, ax);
  auto set = f.new_input_set();
  f.send(dot.first, ax, set);
  f.send(dot.second, ay, set);
  f.send(avg.input, ax);
  f.send(var.input, ax);
  f.wait();
  double rs = 0, rd = 0, rm = -1e300;
  for (std::size_t i = 0; i < x.size(); ++i) rs += x[i], rd += x[i] * y[i], rm = std::max(rm, x[i]);
  const double mean = rs / static_cast<double>(x.size());
  double ss = 0;
  for (double e : x) ss += (e - mean) * (e - mean);
  EXPECT_NEAR(s, rs, 1e-9 * std::abs(rs) + 1e-9);
  EXPECT_EQ(m, rm);
  EXPECT_NEAR(d, rd, 1e-9 * std::abs(rd) + 1e-9);
  EXPECT_NEAR(a, mean, 1e-12);
  EXPECT_NEAR(v, ss / static_cast<double>(x.size() - 1), 1e-9);

  // The same bits on the host with one worker: the cut depends on the length only.
  tessera::Executor one({.cpu_workers = 1});
  auto host = tessera::DeviceSet::select("host");
  flow::FlowOptions options;
  options.executor = &one;
  flow::Flow g(host, options);
  auto& sum1 = flow::reduce<double>(g, "sum", 0.0, [](double p, double q) { return p + q; });
  double s1 = 0;
  g.on_receive(sum1.output, [&](const flow::Scalar<double>& r) { s1 = r.value(); });
  g.send(sum1.input, flow::Vector<double>(g, x));
  g.wait();
  EXPECT_EQ(s, s1);
}

TEST_P(Catalog, ReduceByAndScan) {
  const std::size_t n = 20000, keys = 37;
  const auto v = sample<double>(n, 6);
  std::vector<std::int32_t> k(n);
  for (std::size_t i = 0; i < n; ++i)
    k[i] = static_cast<std::int32_t>((i * 7919) % (keys + 3)) - 1;  // some out of range
  auto& by = flow::reduce_by<double>(f, "by key", keys, 0.0, [](double a, double b) { return a + b; });
  auto& sc = flow::scan<double>(f, "prefix", 0.0, [](double a, double b) { return a + b; });
  std::vector<double> rb, rs;
  f.on_receive(by.output, [&](const flow::Vector<double>& r) { rb = r.to_vector(); });
  f.on_receive(sc.output, [&](const flow::Vector<double>& r) { rs = r.to_vector(); });
  flow::Vector<double> av(f, v);
  auto set = f.new_input_set();
  f.send(by.keys, flow::Vector<std::int32_t>(f, k), set);
  f.send(by.values, av, set);
  f.send(sc.input, av);
  f.wait();
  std::vector<double> eb(keys, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    if (k[i] >= 0 && static_cast<std::size_t>(k[i]) < keys) eb[static_cast<std::size_t>(k[i])] += v[i];
  ASSERT_EQ(rb.size(), keys);
  for (std::size_t j = 0; j < keys; ++j) EXPECT_NEAR(rb[j], eb[j], 1e-9);
  ASSERT_EQ(rs.size(), n);
  double acc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    acc += v[i];
    EXPECT_NEAR(rs[i], acc, 1e-8) << i;
  }
}

TEST_P(Catalog, TransposeGatherCartesianConvolution) {
  const std::size_t m = 37, n = 53;
  const auto a = sample<double>(m * n, 7);
  auto& tr = f.add<flow::Transpose<double>>();
  auto& ga = f.add<flow::Gather<double>>();
  auto& cp = flow::cartesian_product<double, double>(f, "outer", [](double p, double q) { return p * q - 1; });
  auto& cv = f.add<flow::Convolution<double>>();
  std::vector<double> rt, rg, rc, rv;
  std::array<std::size_t, 2> tshape{};
  f.on_receive(tr.output, [&](const flow::Matrix<double>& r) { rt = r.to_vector(), tshape = r.shape(); });
  f.on_receive(ga.output, [&](const flow::Vector<double>& r) { rg = r.to_vector(); });
  f.on_receive(cp.output, [&](const flow::Matrix<double>& r) { rc = r.to_vector(); });
  f.on_receive(cv.output, [&](const flow::Vector<double>& r) { rv = r.to_vector(); });
  f.send(tr.input, flow::Matrix<double>(f, {m, n}, a));
  const std::vector<std::int64_t> idx{5, 0, -1, 1000000, 17, 17, 1};
  const auto vals = sample<double>(100, 8);
  auto set = f.new_input_set();
  f.send(ga.values, flow::Vector<double>(f, vals), set);
  f.send(ga.indices, flow::Vector<std::int64_t>(f, idx), set);
  const auto p = sample<double>(m, 9), q = sample<double>(n, 10);
  set = f.new_input_set();
  f.send(cp.first, flow::Vector<double>(f, p), set);
  f.send(cp.second, flow::Vector<double>(f, q), set);
  const auto sig = sample<double>(1000, 11);
  const std::vector<double> ker{0.25, 0.5, 0.125, -1.0, 2.0};
  set = f.new_input_set();
  f.send(cv.signal, flow::Vector<double>(f, sig), set);
  f.send(cv.kernel, flow::Vector<double>(f, ker), set);
  f.wait();
  EXPECT_EQ(tshape, (std::array<std::size_t, 2>{n, m}));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(rt[j * m + i], a[i * n + j]);
  ASSERT_EQ(rg.size(), idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i)
    EXPECT_EQ(rg[i], idx[i] >= 0 && idx[i] < 100 ? vals[static_cast<std::size_t>(idx[i])] : 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(rc[i * n + j], p[i] * q[j] - 1);
  ASSERT_EQ(rv.size(), sig.size());
  for (std::size_t i = 0; i < sig.size(); ++i) {
    double e = 0;
    for (std::size_t j = 0; j < ker.size(); ++j) {
      const long s = static_cast<long>(i) + 2 - static_cast<long>(j);
      if (s >= 0 && s < static_cast<long>(sig.size())) e += ker[j] * sig[static_cast<std::size_t>(s)];
    }
    EXPECT_DOUBLE_EQ(rv[i], e);
  }
}

TEST_P(Catalog, MatrixProductsAgainstLoops) {
  const std::size_t m = 70, k = 45, n = 33;
  const auto a = sample<double>(m * k, 12), b = sample<double>(k * n, 13), x = sample<double>(k, 14);
  auto& mp = f.add<flow::MatrixProduct<double>>();
  auto& mv = f.add<flow::MatrixVectorProduct<double>>();
  std::vector<double> rp, rv;
  f.on_receive(mp.output, [&](const flow::Matrix<double>& r) { rp = r.to_vector(); });
  f.on_receive(mv.output, [&](const flow::Vector<double>& r) { rv = r.to_vector(); });
  flow::Matrix<double> am(f, {m, k}, a);
  auto set = f.new_input_set();
  f.send(mp.left, am, set);
  f.send(mp.right, flow::Matrix<double>(f, {k, n}, b), set);
  set = f.new_input_set();
  f.send(mv.left, am, set);
  f.send(mv.right, flow::Vector<double>(f, x), set);
  f.wait();
  flow_test::expect_product(a, b, m, k, n, rp);
  ASSERT_EQ(rv.size(), m);
  for (std::size_t i = 0; i < m; ++i) {
    double e = 0;
    for (std::size_t p = 0; p < k; ++p) e += a[i * k + p] * x[p];
    EXPECT_NEAR(rv[i], e, 1e-10);
  }
}

TEST_P(Catalog, RandomIsReproducibleAndDistributed) {
  auto& uni = f.add<flow::Random<double>>("uniform", 100000, 42, flow::Distribution::uniform);
  auto& nor = f.add<flow::Random<double>>("normal", 100000, 42, flow::Distribution::normal);
  std::vector<std::vector<double>> u, z;
  f.on_receive(uni.output, [&](const flow::Vector<double>& r) { u.push_back(r.to_vector()); });
  f.on_receive(nor.output, [&](const flow::Vector<double>& r) { z.push_back(r.to_vector()); });
  f.send(uni.request, std::uint64_t{7});
  f.send(uni.request, std::uint64_t{8});
  f.send(nor.request, std::uint64_t{7});
  f.wait();
  ASSERT_EQ(u.size(), 2u);
  ASSERT_EQ(z.size(), 1u);
  double mean = 0, zm = 0, zv = 0;
  for (double e : u[0]) {
    ASSERT_GE(e, 0.0);
    ASSERT_LT(e, 1.0);
    mean += e;
  }
  for (double e : z[0]) zm += e, zv += e * e;
  const double n = 100000;
  EXPECT_NEAR(mean / n, 0.5, 0.005);  // 5 sigma of 1/sqrt(12 n)
  EXPECT_NEAR(zm / n, 0.0, 0.016);
  EXPECT_NEAR(zv / n, 1.0, 0.03);
  EXPECT_NE(u[0], u[1]);
  // The values are a function of (seed, block, index) only.
  for (std::size_t i = 0; i < 1000; i += 37) {
    EXPECT_EQ(u[0][i], flow::philox_value<double>(42, 7, i, flow::Distribution::uniform));
    EXPECT_EQ(u[1][i], flow::philox_value<double>(42, 8, i, flow::Distribution::uniform));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Catalog, ::testing::ValuesIn(flow_test::backends()), flow_test::backend_name);

TEST(Philox, KnownAnswers) {
  // Random123's known-answer vectors for philox4x32-10 (kat_vectors).
  auto r = flow::Philox4x32::generate(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(r.x[0], 0x6627e8d5u);
  EXPECT_EQ(r.x[1], 0xe169c58du);
  EXPECT_EQ(r.x[2], 0xbc57ac4cu);
  EXPECT_EQ(r.x[3], 0x9b00dbd8u);
  r = flow::Philox4x32::generate(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
  EXPECT_EQ(r.x[0], 0xd16cfe09u);
  EXPECT_EQ(r.x[1], 0x94fdccebu);
  EXPECT_EQ(r.x[2], 0x5001e420u);
  EXPECT_EQ(r.x[3], 0x24126ea1u);
}
