// Registration of each subcommand with CLI11. Each command writes its result to `out`,
// diagnostics to `err`, and its exit code to `code` when it runs.
#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace tessera::cli {

void RegisterValidate(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
void RegisterFleet(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
void RegisterPlace(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
void RegisterSim(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
void RegisterSimRun(CLI::App* sim, std::ostream& out, std::ostream& err, int& code);
void RegisterSimCompare(CLI::App* sim, std::ostream& out, std::ostream& err, int& code);
void RegisterServe(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
// `tessera agent` and `tessera logs`.
void RegisterAgent(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
// The daemon's client: submit, get, describe, explain, cancel, audit, principal, token.
void RegisterClient(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
// After RegisterClient: get services, describe service, delete service.
void RegisterServiceClient(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
// After RegisterClient: get decisions.
void RegisterDecisionClient(CLI::App& app, std::ostream& out, std::ostream& err, int& code);
// Register last: the script is generated from every command registered before it.
void RegisterCompletion(CLI::App& app, std::ostream& out, int& code);

// The registered placement policies, comma-separated, for --help texts.
std::string PlacementPolicyNames();

}  // namespace tessera::cli
