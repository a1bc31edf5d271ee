// DOC flow-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/flow.hpp>

#include <cstdio>
#include <vector>

namespace flow = tessera::flow;

int main() {
  auto devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  flow::Flow f(devices);
  auto& square = flow::map<double>(f, "square", [](double x) { return x * x; });
  auto& total = flow::reduce<double>(f, "sum", 0.0, [](double a, double b) { return a + b; });
  flow::connect(square.output, total.input);  // fused into one pass on the first send

  // Three input sets in flight at once: 1..n for n = 10, 100, 1000, each summed apart from the others.
  std::vector<double> sums;
  f.on_receive(total.output, [&](const flow::Scalar<double>& s) { sums.push_back(s.value()); });
  for (int n : {10, 100, 1000}) {
    std::vector<double> values(n);
    for (int i = 0; i < n; ++i) values[i] = i + 1;
    f.send(square.input, flow::Vector<double>(f, values));
  }
  f.wait();

  // Results leave an output in the order their input sets were sent: n (n + 1) (2 n + 1) / 6 each.
  const std::vector<double> expected{385, 338350, 333833500};
  std::printf("flow: sums of squares");
  for (double s : sums) std::printf(" %.0f", s);
  std::printf(" (expected 385 338350 333833500)\n");
  return sums == expected ? 0 : 1;
}
// DOC flow-page end
