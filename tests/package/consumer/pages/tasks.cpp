// DOC tasks-page begin
#include <tessera/device/device_set.hpp>
#include <tessera/task/runtime.hpp>

#include <cstdio>
#include <vector>

int main() {
  tessera::DeviceSet devices = tessera::DeviceSet::select("");  // TESSERA_DEVICES, else the host
  tessera::TaskRuntime rt(devices);
  // GPU-kind tasks go to an accelerator; without one, CPU-kind tasks run on the executor's workers.
  const tessera::TaskKind kind = devices.num_accelerators() > 0 ? tessera::TaskKind::gpu : tessera::TaskKind::cpu;
  const std::size_t n = 10000;
  std::vector<double> in(n), out(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<double>(i);

  tessera::HeteroObject<double> x(rt, n, "x"), y(rt, n, "y");
  x.copy_from(in.data(), kind);  // a task too: those that use x after it wait for it
  // "add" reads y after "twice" writes it: the runtime infers the dependency from the access modes.
  rt.submit(tessera::native_task(
      "twice", kind,
      [n](const tessera::TaskContext&, const double* a, double* b) {
        for (std::size_t i = 0; i < n; ++i) b[i] = 2 * a[i];
      },
      tessera::read(x), tessera::write(y)));
  rt.submit(tessera::native_task(
      "add", kind,
      [n](const tessera::TaskContext&, const double* a, double* b) {
        for (std::size_t i = 0; i < n; ++i) b[i] += a[i];
      },
      tessera::read(x), tessera::read_write(y)));
  y.copy_to(out.data()).get();  // straight from the device that holds y, after both tasks

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += out[i] != 3.0 * static_cast<double>(i);
  std::printf("tasks: y = 3 x on %s, %zu wrong\n", kind == tessera::TaskKind::gpu ? "an accelerator" : "the host",
              wrong);
  return wrong == 0 ? 0 : 1;
}
// DOC tasks-page end
