// Compiled by ctest, not linked: connect() of ports with one value type compiles; with
// TESSERA_CONNECT_MISMATCH (an int output into a double input) it must not.
#include <tessera/flow.hpp>

namespace flow = tessera::flow;

struct IntSource : flow::Operation {
  flow::InputPort<int> input{*this, "input"};
  flow::OutputPort<int> output{*this, "output"};
  IntSource() : Operation("ints") {}
  void fire(flow::Context&) override {}
};

struct DoubleSink : flow::Operation {
  flow::InputPort<double> input{*this, "input"};
  flow::InputPort<int> count{*this, "count"};
  DoubleSink() : Operation("doubles") {}
  void fire(flow::Context&) override {}
};

void wire(IntSource& a, DoubleSink& b) {
#if defined(TESSERA_CONNECT_MISMATCH)
  flow::connect(a.output, b.input);
#else
  flow::connect(a.output, b.count);
#endif
}
