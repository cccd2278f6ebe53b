#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"

namespace tessera::cli {

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"Tessera: one scheduler over all of an organisation's GPU, NPU and CPU clusters",
               "tessera"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera 0.1.0");
  int code = kExitOk;
  RegisterValidate(app, out, err, code);
  RegisterFleet(app, out, err, code);
  RegisterPlace(app, out, err, code);
  RegisterSim(app, out, err, code);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "tessera: " << e.what() << "\n";
    if (!e.get_name().empty() && e.get_name() != "RequiredError") {
      err << "Run 'tessera --help' for usage.\n";
    } else {
      err << "Run 'tessera --help' for usage.\n";
    }
    return kExitInvalidInput;
  }
  return code;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return Run(args, std::cout, std::cerr);
}

}  // namespace tessera::cli
