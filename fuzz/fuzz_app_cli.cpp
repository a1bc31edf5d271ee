// Any bytes as an app's command line, parsed by CLI11 with the apps' own options (euler2d's and
// poisson's, from their options.hpp, and the shared ones of apps/common): it parses, or throws
// CLI::ParseError; the app itself never runs.
//
// The input is one argument a line up to the first NUL byte, at most 32 of them; the first is
// argv[0] and picks the app (poisson if it names it, else euler2d). What follows the NUL is the
// text of the file that --config names: every --config value is replaced by /dev/null, which
// CLI11 opens and does not read, so the config parser sees only the input's text and no input
// makes the fuzzer read a file of its choosing (a FIFO or /dev/zero would never end).

#include "euler2d/options.hpp"
#include "poisson/options.hpp"

#include <tessera/core/error.hpp>
#include <tessera_app/cli.hpp>

#include <algorithm>
#include <cstdint>
#include <istream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::size_t max_args = 32;

class ConfigFromInput : public CLI::ConfigBase {
 public:
  explicit ConfigFromInput(std::string text) : text_(std::move(text)) {}
  std::vector<CLI::ConfigItem> from_config(std::istream&) const override {
    std::istringstream in(text_);
    return CLI::ConfigBase::from_config(in);
  }

 private:
  std::string text_;
};

// Every --config value, before CLI11 opens it.
const CLI::Validator to_dev_null(
    [](std::string& file) {
      file = "/dev/null";
      return std::string{};
    },
    "");

template <typename Settings>
void parse(const std::string& name, void (*add_options)(CLI::App&, Settings&), void (*check)(const Settings&),
           const std::vector<std::string>& args, const std::string& config) {
  Settings settings;
  CLI::App app{"fuzz", name};
  tessera_app::add_standard_options(app);
  add_options(app, settings);
  app.config_formatter(std::make_shared<ConfigFromInput>(config));
  app.get_config_ptr()->transform(to_dev_null);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    check(settings);
  } catch (const CLI::CallForHelp&) {
    (void)app.help();  // the help text shows every validator's description
  } catch (const CLI::ParseError&) {
  } catch (const tessera::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view line_text = input.substr(0, nul);
  const std::string config = nul == std::string_view::npos ? std::string{} : std::string(input.substr(nul + 1));

  std::vector<std::string> args;
  std::size_t start = 0;
  while (start <= line_text.size() && args.size() < max_args) {
    const std::size_t end = std::min(line_text.find('\n', start), line_text.size());
    args.emplace_back(line_text.substr(start, end - start));
    start = end + 1;
  }
  if (args.size() > 1 && args.back().empty()) args.pop_back();  // the file's last newline
  if (args.empty()) return 0;

  if (args[0].find("poisson") != std::string::npos)
    parse<poisson::Settings>(
        "tessera-poisson", poisson::add_options, [](const poisson::Settings&) {}, args, config);
  else
    parse<euler2d::Settings>("tessera-euler2d", euler2d::add_options, euler2d::check_settings, args, config);
  return 0;
}
