// tessera sim ...: simulations. `sim fgd` is the FGD placement experiment; `sim run` replays
// a workload through the engine; `sim compare` sets two runs of one workload side by side.
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/sim_fgd_cmd.h"

namespace tessera::cli {

void RegisterSim(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto* sim = app.add_subcommand("sim", "Simulations that run the real scheduler");
  sim->require_subcommand(1);
  auto* fgd = sim->add_subcommand(
      "fgd", "The FGD placement experiment on the openb trace (docs/placement.md)");
  auto args = std::make_shared<SimFgdArgs>();
  fgd->add_option("--nodes", args->nodes, "Node list CSV (openb_node_list_gpu_node.csv)")
      ->required();
  fgd->add_option("--pods", args->pods, "Pod list CSV (openb_pod_list_*.csv)")->required();
  fgd->add_option("--policy", args->policy,
                  "Placement policy, comma-separated policies, or all: " + PlacementPolicyNames())
      ->capture_default_str();
  fgd->add_option("--seeds", args->seeds, "Seeds: 42-51 or 1,2,3")->capture_default_str();
  fgd->add_option("--tune", args->tune, "Arrived demand as a multiple of GPU capacity")
      ->capture_default_str();
  fgd->add_option("--out", args->out, "Output directory")->required();
  fgd->add_option("--threads", args->threads, "Worker threads (0: one per core)")
      ->capture_default_str();
  fgd->add_flag("!--no-placements", args->placements, "Do not write placements.jsonl");
  fgd->add_option("--mix", args->mix,
                  "Resample the pod list into another mix: gpushare=F, multigpu=F, gpuspec=F, "
                  "cpu=F, comma-separated (docs/placement.md)");
  fgd->add_option("--published", args->published,
                  "Published results to overlay on the chart (default: fgd-expected beside the "
                  "pod list's folder)");
  fgd->callback([args, &out, &err, &code] { code = RunSimFgd(*args, out, err); });
  RegisterSimRun(sim, out, err, code);
  RegisterSimCompare(sim, out, err, code);
}

}  // namespace tessera::cli
