// `tessera agent` (docs/operations.md#agents): the node agent of a `local` cluster, and
// `tessera logs JOB`: the tail of a task's output as its agent reported it.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

#include "backends/local/agent.h"
#include "backends/local/device_map.h"
#include "cli/app.h"
#include "cli/client_common.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/quantity.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

struct AgentArgs {
  Common common;
  std::string token_file;
  std::string node, address, work_dir = "tessera-agent", checkpoint_root, grace = "10s";
  std::string devices, device_tool = "auto";
  std::string containment = "auto", cgroup_root;
  bool allow_root_tasks = false;
};

// The agent's token from --token-file: the file's first line, the file readable by its owner
// only (a task or another user must not read it).
Result<std::string> ReadTokenFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return InvalidArgument("--token-file " + path + ": " + std::strerror(errno));
  }
  if ((st.st_mode & 077) != 0) {
    std::ostringstream mode;
    mode << std::oct << (st.st_mode & 0777);
    return InvalidArgument("--token-file " + path + ": mode 0" + mode.str() +
                           " lets other users read the token; chmod 600 " + path);
  }
  std::ifstream in(path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t'))
    token.pop_back();
  if (token.empty()) return InvalidArgument("--token-file " + path + ": no token in it");
  return token;
}

// TESSERA_TOKEN leaves the process: its bytes in the environment block the process started with
// (what /proc/PID/environ shows) are overwritten, and the variable is removed, so that neither
// tasks nor their descendants inherit or read it.
void ForgetTokenVariable() {
  constexpr std::string_view kName = "TESSERA_TOKEN=";
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, kName.data(), kName.size()) == 0) {
      std::memset(*e + kName.size(), 0, std::strlen(*e + kName.size()));
    }
  }
  ::unsetenv("TESSERA_TOKEN");
}

int RunAgentCommand(const AgentArgs& a, std::ostream& err) {
  if (!a.common.token.empty()) {
    err << "error: --token: the agent's token on its command line is readable by every process "
           "on the host (/proc/PID/cmdline); give --token-file FILE (mode 0600) or "
           "TESSERA_TOKEN\n";
    return kExitInvalidInput;
  }
  std::string token;
  if (!a.token_file.empty()) {
    auto read = ReadTokenFile(a.token_file);
    if (!read.ok()) {
      err << "error: " << read.status().message() << "\n";
      return kExitInvalidInput;
    }
    token = *read;
  }
  auto cfg = ResolveClientConfig(a.common.server, token, a.common.ca_cert);
  if (!cfg.ok()) {
    err << "error: " << cfg.status().message() << "\n";
    return kExitInvalidInput;
  }
  ForgetTokenVariable();
  // Other processes of the agent's user (its tasks among them, when they run as it) cannot read
  // its memory or /proc/PID/environ.
  ::prctl(PR_SET_DUMPABLE, 0);
  if (cfg->token.empty()) {
    err << "error: --token-file (or TESSERA_TOKEN): the agent needs the token of an agent "
           "principal bound to its node\n";
    return kExitInvalidInput;
  }
  Result<Millis> grace = ParseDuration(a.grace);
  if (!grace.ok() || *grace < 0) {
    err << "error: --grace: expected a duration such as 10s, got \"" << a.grace << "\"\n";
    return kExitInvalidInput;
  }
  AgentOptions o;
  Result<DeviceTool> tool = ParseDeviceTool(a.device_tool);
  if (!tool.ok()) {
    err << "error: " << tool.status().message() << "\n";
    return kExitInvalidInput;
  }
  o.device_tool = *tool;
  Result<ContainmentKind> containment = ParseContainmentKind(a.containment);
  if (!containment.ok()) {
    err << "error: " << containment.status().message() << "\n";
    return kExitInvalidInput;
  }
  o.containment = *containment;
  o.cgroup_root = a.cgroup_root;
  o.allow_root_tasks = a.allow_root_tasks;
  if (!a.devices.empty()) {
    auto list = ParseDeviceList(a.devices);
    if (!list.ok()) {
      err << "error: " << list.status().message() << "\n";
      return kExitInvalidInput;
    }
    o.devices = *list;
  }
  o.server = cfg->server;
  o.token = cfg->token;
  o.ca_cert = cfg->ca_cert;
  o.node = a.node;
  o.address = a.address;
  o.work_dir = a.work_dir;
  o.checkpoint_root = a.checkpoint_root;
  o.default_grace = *grace;
  // SIGINT and SIGTERM stop the agent (and its tasks) cleanly: blocked in every thread and
  // awaited by one.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::atomic<bool> stop{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    stop = true;
  });
  Status s = RunAgent(o, stop, err);
  if (!stop.load()) {
    pthread_kill(waiter.native_handle(), SIGTERM);
  }
  waiter.join();
  if (!s.ok()) {
    err << "error: " << s.message() << "\n";
    return kExitInvalidInput;
  }
  return kExitOk;
}

void Logs(const Common& c, const std::string& job, const std::string& tenant, int task, int run,
          Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  std::string path = "/v1/jobs/" + Encode(job) + "/logs?task=" + std::to_string(task);
  if (run >= 0) path += "&run=" + std::to_string(run);
  if (!tenant.empty()) path += "&tenant=" + Encode(tenant);
  HttpReply r = Call(*cfg, "GET", path);
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] { x.out << Str(r.body, "log"); });
}

}  // namespace

void RegisterAgent(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto a = std::make_shared<AgentArgs>();
  auto* cmd = app.add_subcommand(
      "agent", "Run the node agent of a local cluster: registers, heartbeats, runs tasks");
  AddCommon(cmd, a->common, /*output=*/false);
  cmd->add_option("--token-file", a->token_file,
                  "A file (mode 0600) holding the agent's token (else TESSERA_TOKEN); never "
                  "--token, which every process on the host could read");
  cmd->add_option("--node", a->node, "The node's name in the fleet")->required();
  cmd->add_option("--address", a->address,
                  "Where the node's gang peers reach it (default: the host name)");
  cmd->add_option("--work-dir", a->work_dir, "Task logs and working directories")
      ->capture_default_str();
  cmd->add_option("--checkpoint-root", a->checkpoint_root,
                  "TESSERA_CHECKPOINT_DIR is ROOT/JOB_ID (shared storage, so that a restart "
                  "elsewhere finds it; default: WORK_DIR/checkpoints)");
  cmd->add_option("--devices", a->devices,
                  "The host GPUs that are the node's devices 0, 1, ... (e.g. 4,5,6,7; default: "
                  "the host's indices)");
  cmd->add_option("--device-tool", a->device_tool,
                  "Where the devices' inventory and telemetry come from: auto (nvidia-smi, else "
                  "npu-smi), nvidia-smi, npu-smi, or none (the fleet's devices, no telemetry)")
      ->capture_default_str();
  cmd->add_option("--containment", a->containment,
                  "How a task's processes are held together, to stop them all: auto (a cgroup "
                  "v2 of its own when the agent can make one, else process groups), cgroup (or "
                  "exit 2), process-group")
      ->capture_default_str();
  cmd->add_option("--cgroup-root", a->cgroup_root,
                  "The cgroup v2 directory the agent makes its tasks' cgroups in (default: its "
                  "own cgroup; with systemd, a unit with Delegate=yes)");
  cmd->add_flag("--allow-root-tasks", a->allow_root_tasks,
                "An agent running as root runs a task whose tenant and cluster name no runAs "
                "user as root (else such a task is refused)");
  cmd->add_option("--grace", a->grace,
                  "SIGTERM to SIGKILL for a task stopped without a grace period, and on exit")
      ->capture_default_str();
  cmd->callback([a, &err, &code] { code = RunAgentCommand(*a, err); });
  (void)out;

  auto ctx = std::make_shared<Ctx>(Ctx{out, err, code});
  auto c = std::make_shared<Common>();
  auto job = std::make_shared<std::string>();
  auto tenant = std::make_shared<std::string>();
  auto task = std::make_shared<int>(0);
  auto run = std::make_shared<int>(-1);
  auto* logs = app.add_subcommand("logs", "The tail of a job's task output, from its agent");
  AddCommon(logs, *c);
  logs->add_option("job", *job, "The job's name or id")->required();
  logs->add_option("--task", *task, "The task's index")->capture_default_str();
  logs->add_option("--run", *run, "The run (its restart count; default: the current one)");
  logs->add_option("--tenant", *tenant, "The job's tenant, when several use its name");
  logs->callback([=] { Logs(*c, *job, *tenant, *task, *run, *ctx); });
}

}  // namespace tessera::cli
