#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <new>

#include "cli/commands.h"
#include "common/text.h"

namespace tessera::cli {
namespace {

// The deepest subcommand the parser entered ("tessera sim run"), for help and errors.
const CLI::App* Deepest(const CLI::App& app) {
  const CLI::App* at = &app;
  while (true) {
    std::vector<CLI::App*> chosen = at->get_subcommands();
    if (chosen.empty()) return at;
    at = chosen.front();
  }
}

std::string CommandPath(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* a = Deepest(app); a != nullptr; a = a->get_parent())
    names.insert(names.begin(), a->get_name());
  std::string path;
  for (const std::string& n : names)
    path += (path.empty() ? "" : " ") + n;
  return path;
}

std::string HelpOf(const CLI::App& app) {
  return Deepest(app)->help();
}

}  // namespace

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
  RegisterServe(app, out, err, code);
  RegisterAgent(app, out, err, code);
  RegisterClient(app, out, err, code);
  RegisterServiceClient(app, out, err, code);
  RegisterDecisionClient(app, out, err, code);
  RegisterCompletion(app, out, code);
  // `tessera help [COMMAND...]` is `tessera [COMMAND...] --help`.
  std::vector<std::string> argv = args;
  if (!argv.empty() && argv[0] == "help") {
    argv.erase(argv.begin());
    argv.push_back("--help");
  }
  // An unknown verb or flag is named, with the closest known one, before CLI11 would answer
  // with a generic "A subcommand is required".
  if (!argv.empty()) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      names.push_back(sub->get_name());
    const std::string& first = argv[0];
    bool flag = first.rfind("-", 0) == 0;
    bool known_flag = first == "--help" || first == "-h" || first == "--version";
    if ((flag && !known_flag) ||
        (!flag && std::find(names.begin(), names.end(), first) == names.end())) {
      std::vector<std::string_view> candidates;
      if (flag) {
        candidates = {"--help", "--version"};
      } else {
        candidates.assign(names.begin(), names.end());
        candidates.push_back("help");
      }
      std::string hint = ClosestMatch(first, candidates);
      err << "tessera: unknown " << (flag ? "flag" : "command") << " '" << first << "'"
          << (hint.empty() ? "" : " (did you mean '" + hint + "'?)") << "\n"
          << "Run 'tessera --help' for the commands.\n";
      return kExitInvalidInput;
    }
  }
  std::vector<std::string> reversed(argv.rbegin(), argv.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    out << HelpOf(app);
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    // CLI11 says "--threads: At Most 1 required but received 2" for a repeated option.
    if (size_t at = what.find("At Most 1 required but received"); at != std::string::npos)
      what = what.substr(0, at) + "given more than once; give it once";
    err << "tessera: " << what << "\n";
    err << "Run '" << CommandPath(app) << " --help' for usage.\n";
    return kExitInvalidInput;
  }
  return code;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return Run(args, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    // Inputs are size-limited (common/file.h); what still exhausts memory is a workload too
    // large for this machine. Say so instead of aborting.
    std::cerr << "tessera: out of memory; the input is too large for this machine's memory\n";
    return kExitFailure;
  }
}

}  // namespace tessera::cli
