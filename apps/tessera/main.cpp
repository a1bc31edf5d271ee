// The `tessera` command. `tessera devices [--select SPEC]` prints the devices a program would
// get (TESSERA_DEVICES, or SPEC) and the host's hardware topology; `tessera --version` prints
// tessera's version. --help lists the subcommands, `tessera devices --help` their options.
#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/device/topology.hpp>
#include <tessera_app/cli.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) try {
  CLI::App app{"tessera: one source for many cores, GPUs and nodes", "tessera"};
  tessera_app::add_standard_options(app);
  // No --config: the one option, devices --select, is what TESSERA_DEVICES already keeps
  // across runs.
  app.set_config();
  app.require_subcommand(1);
  std::string select;
  auto* devices = app.add_subcommand("devices", "list the selected devices and the hardware topology");
  devices
      ->add_option("--select", select,
                   "a device selection such as host, sim:4 or sim:2:256MiB "
                   "(default: TESSERA_DEVICES, else every GPU found, else the host)")
      ->check(tessera_app::not_an_option);
  if (const auto exit = tessera_app::parse(app, argc, argv)) return *exit;
  if (devices->parsed()) {
    auto set = tessera::DeviceSet::select(select);
    std::fputs(set.describe().c_str(), stdout);
    std::fputs(tessera::describe_topology().c_str(), stdout);
  }
  return 0;
} catch (const tessera::Error& e) {
  std::fprintf(stderr, "tessera: %s\n", e.what());
  return 2;
}
