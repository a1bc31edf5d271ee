// Values that stay on the device: reduce_into a tensor of one site, and tessera::uniform, which
// hands that site's value to every site of a later kernel. A step that reduces, computes the
// next step's coefficient from the total in a one-site kernel and applies it must give the
// same bits whether it runs eagerly (for_each), one step a graph pass, or many steps in one
// pass (where nothing goes through the host between steps on a single device), captured or
// not, on every device set. The values are small integers and powers of two, so every sum
// is exact and every result is compared for equality with a sequential host model.

#include <gtest/gtest.h>

#include <tessera/exec.hpp>
#include <tessera/graph.hpp>
#include <tessera/tensor/tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "../tensor/tensor_test_support.hpp"

using namespace tessera;

namespace {

using Grid = Tensor<double, 2>;
using Scalar = Tensor<double, 1>;

class DeviceValues : public tensor_test::OnDevices {
 protected:
  Executor ex{ExecutorOptions{}};
  Scalar scalar(const char* name, double v) {
    Scalar s(memory(), Extent<1>{1}, TensorOptions<1>{}.named(name));
    s.fill_from(&v);
    return s;
  }
  /// One partition per accelerator, each cut into `blocks` blocks.
  Grid grid(const char* name, std::size_t blocks = 2) {
    TensorOptions<2> o;
    o.partitions = Extent<2>{1, std::max<std::size_t>(1, accelerators())};
    o.sub_partitions = Extent<2>{1, blocks};
    return Grid(memory(), Extent<2>{40, 24}, o.named(name));
  }
  static double read(const Scalar& s) {
    double v = 0;
    s.gather_to(&v);
    return v;
  }
};

double initial(std::int64_t i, std::int64_t j) { return static_cast<double>((5 * i + 3 * j) % 17); }

/// u += step * (i mod 3), contributing the new value.
struct Advance {
  template <typename U, typename C>
  TESSERA_HOST_DEVICE void operator()(U u, double step, C largest) const {
    *u = *u + step * static_cast<double>(u.global_idx(0) % 3);
    *largest = *u;
  }
};
/// step = 2^-k for the k with largest * 2^-k in [1, 2), as a one-site kernel: the next step's
/// coefficient from this step's total, on the device. Counts the steps it sets.
struct NextStep {
  template <typename Largest, typename Step, typename Count>
  TESSERA_HOST_DEVICE void operator()(Largest largest, Step step, Count count) const {
    double s = 1.0, m = *largest;
    while (m >= 2.0) m *= 0.5, s *= 0.5;
    *step = s;
    *count = *count + 1.0;
  }
};

/// Each site contributes its value.
struct Share {
  template <typename U, typename C>
  TESSERA_HOST_DEVICE void operator()(U u, C c) const {
    *c = *u;
  }
};
/// Sets each site to a uniform value, or contributes it.
struct Use {
  template <typename U>
  TESSERA_HOST_DEVICE void operator()(U u, double s) const {
    *u = s;
  }
  template <typename U, typename C>
  TESSERA_HOST_DEVICE void operator()(U u, C c) const {
    *c = *u;
  }
};

/// The host model: `steps` steps from the initial field.
struct Model {
  std::vector<double> u;
  double largest = 0, step = 0, count = 0;
};
Model model(std::size_t nx, std::size_t ny, int steps) {
  Model m;
  m.u.resize(nx * ny);
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i)
      m.u[i + nx * j] = initial(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
  m.largest = 16;  // the initial field's largest value
  for (int k = 0; k < steps; ++k) {
    double s = 1.0, v = m.largest;
    while (v >= 2.0) v *= 0.5, s *= 0.5;
    m.step = s;
    m.count += 1;
    m.largest = -1e300;
    for (std::size_t j = 0; j < ny; ++j)
      for (std::size_t i = 0; i < nx; ++i) {
        double& x = m.u[i + nx * j];
        x = x + s * static_cast<double>(i % 3);
        m.largest = std::max(m.largest, x);
      }
  }
  return m;
}

void fill_initial(Grid& u) {
  const Extent<2> n = u.size();
  std::vector<double> v(n.volume());
  for (std::size_t j = 0; j < n.sizes[1]; ++j)
    for (std::size_t i = 0; i < n.sizes[0]; ++i)
      v[i + n.sizes[0] * j] = initial(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
  u.fill_from(v.data());
}

void expect_model(const Grid& u, double largest, double step, double count, const Model& m, const std::string& what) {
  std::vector<double> got(u.size().volume());
  u.gather_to(got.data());
  EXPECT_EQ(got, m.u) << what;
  EXPECT_EQ(largest, m.largest) << what;
  EXPECT_EQ(step, m.step) << what;
  EXPECT_EQ(count, m.count) << what;
}

TEST_P(DeviceValues, EagerStepsMatchTheModel) {
  for (const std::size_t blocks : {1, 2}) {
    Grid u = grid("u", blocks);
    fill_initial(u);
    Scalar largest = scalar("largest", 16), step = scalar("step", 0), count = scalar("count", 0);
    for (int k = 0; k < 5; ++k) {
      for_each(ex, NextStep{}, read_only(largest), write_only(step), count);
      for_each(ex, Advance{}, u, uniform(step), reduce_into(largest, Max{}));
    }
    expect_model(u, read(largest), read(step), read(count), model(40, 24, 5), GetParam());
  }
}

TEST_P(DeviceValues, ManyStepsInOnePassMatchOneStepAPass) {
  constexpr int per_pass = 4, passes = 3;
  for (const std::size_t blocks : {1, 2})
    for (const bool capture : {false, true}) {
      for (const int steps_in_graph : {1, per_pass}) {
        Grid u = grid("u", blocks);
        fill_initial(u);
        Scalar largest = scalar("largest", 16), step = scalar("step", 0), count = scalar("count", 0);
        Graph g("steps");
        for (int k = 0; k < steps_in_graph; ++k)
          g.then_split(NextStep{}, read_only(largest), write_only(step), count)
              .then_split(Advance{}, u, uniform(step), reduce_into(largest, Max{}));
        if (capture) g.capture();
        // A reduction of one block (one device, one process) folds into the tensor where the block
        // runs: no final node, nothing on the host between a step's kernels and the next step's.
        const bool one_block = u.num_blocks() == 1;
        EXPECT_EQ(g.to_dot().find("final") == std::string::npos, one_block) << g.to_dot();
        g.run_n(ex, static_cast<std::size_t>(passes * (per_pass / steps_in_graph))).get();
        expect_model(u, read(largest), read(step), read(count), model(40, 24, passes * per_pass),
                     GetParam() + ": " + std::to_string(u.num_blocks()) + " block(s), " +
                         std::to_string(steps_in_graph) + " step(s) a pass" + (capture ? ", captured" : ""));
      }
    }
}

TEST_P(DeviceValues, ASumIntoATensorEqualsTheReductionResult) {
  Grid u = grid("u");
  fill_initial(u);
  Scalar total = scalar("total", -1);
  ReductionResult<double> expected;
  reduce(ex, u, expected, Sum{});
  for_each(ex, Share{}, read_only(u), reduce_into(total, Sum{}));
  EXPECT_EQ(read(total), expected.value());
  Scalar again = scalar("again", -1);
  Graph g("sum");
  g.split(Share{}, read_only(u), reduce_into(again, Sum{}));
  g.run(ex).get();
  EXPECT_EQ(read(again), expected.value());
}

TEST_P(DeviceValues, ATensorOfMoreThanOneSiteIsRefused) {
  Grid u = grid("u");
  Tensor<double, 1> two(memory(), Extent<1>{2}, TensorOptions<1>{}.named("two"));
  auto names = [](const char* what, const char* tensor) {
    return [=](const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(what), std::string::npos) << m;
      EXPECT_NE(m.find(tensor), std::string::npos) << m;
      EXPECT_NE(m.find("one site"), std::string::npos) << m;
    };
  };
  try {
    for_each(ex, Use{}, u, uniform(two));
    ADD_FAILURE() << "uniform of two sites ran";
  } catch (const Error& e) {
    names("uniform", "'two'")(e);
  }
  try {
    for_each(ex, Use{}, read_only(u), reduce_into(two, Sum{}));
    ADD_FAILURE() << "reduce_into two sites ran";
  } catch (const Error& e) {
    names("reduce_into", "'two'")(e);
  }
  try {
    Graph g("refused");
    g.split(Use{}, read_only(u), reduce_into(two, Sum{}));
    ADD_FAILURE() << "Graph::split took reduce_into two sites";
  } catch (const Error& e) {
    names("Graph::split", "'two'")(e);
  }
  Scalar one = scalar("one", 1);
  try {
    for_each(ex, Use{}, one, uniform(one));
    ADD_FAILURE() << "a tensor passed as itself and as uniform ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("passed twice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read(one), 1.0);  // nothing ran
}

TENSOR_TEST_ON_DEVICES(DeviceValues);

}  // namespace
