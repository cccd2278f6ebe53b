#include "backends/slurm/slurm_text.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

namespace tessera {

using json = nlohmann::json;

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return InvalidArgument("squeue: not a JSON object");
  // An unreachable controller: an answer with errors and no jobs (and exit status 0).
  if (auto errors = doc.find("errors");
      errors != doc.end() && errors->is_array() && !errors->empty()) {
    const json& e = (*errors)[0];
    auto field = [&](const char* key) {
      auto it = e.is_object() ? e.find(key) : e.end();
      return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    std::string what = field("description");
    std::string source = field("source");
    return Unavailable("squeue: " + (what.empty() ? std::string("an error") : what) +
                       (source.empty() ? "" : " (" + source + ")"));
  }
  auto jobs = doc.find("jobs");
  if (jobs == doc.end() || !jobs->is_array()) return InvalidArgument("squeue: no \"jobs\" list");
  std::vector<SlurmJob> out;
  for (size_t i = 0; i < jobs->size(); ++i) {
    const json& j = (*jobs)[i];
    auto where = "squeue: jobs[" + std::to_string(i) + "]";
    if (!j.is_object()) return InvalidArgument(where + ": not an object");
    auto id = j.find("job_id");
    auto name = j.find("name");
    auto state = j.find("job_state");
    if (id == j.end() || !id->is_number_integer()) return InvalidArgument(where + ".job_id");
    if (name == j.end() || !name->is_string()) return InvalidArgument(where + ".name");
    if (state == j.end() || !state->is_string()) return InvalidArgument(where + ".job_state");
    SlurmJob s;
    s.id = id->get<int64_t>();
    s.name = name->get<std::string>();
    s.state = state->get<std::string>();
    if (auto e = j.find("exit_code"); e != j.end() && e->is_number_integer()) {
      // A wait status: the exit code in the high byte, a signal in the low bits.
      int64_t status = e->get<int64_t>();
      s.exit_code = (status & 0x7f) != 0 ? 128 + static_cast<int>(status & 0x7f)
                                         : static_cast<int>((status >> 8) & 0xff);
    }
    if (auto n = j.find("nodes"); n != j.end() && n->is_string()) s.nodes = n->get<std::string>();
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// The GPUs of a GRES list: "gpu:2", "gpu:a100:4(S:0-1),shard:8"; -1 when none is a gpu entry.
int GpuCount(std::string_view gres) {
  int total = -1;
  while (!gres.empty()) {
    size_t comma = gres.find(',');
    std::string_view entry = gres.substr(0, comma);
    gres = comma == std::string_view::npos ? std::string_view() : gres.substr(comma + 1);
    if (entry.substr(0, 4) != "gpu:") continue;
    entry = entry.substr(0, entry.find('('));
    int n = 0;
    std::string_view count = entry.substr(entry.rfind(':') + 1);
    auto [p, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec == std::errc() && p == count.data() + count.size() && n >= 0) {
      total = std::max(total, 0) + n;
    }
  }
  return total;
}

template <typename T>
T Number(std::string_view s, T fallback) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && v >= 0 ? v : fallback;
}

}  // namespace

Result<std::map<std::string, SlurmNode>> ParseSinfoNodes(std::string_view text) {
  std::map<std::string, SlurmNode> out;
  size_t line = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view l = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.empty()) continue;
    size_t bar = l.find('|');
    if (bar == std::string_view::npos || bar == 0 || bar + 1 == l.size()) {
      return InvalidArgument("sinfo: line " + std::to_string(line) + ": expected NODE|STATE");
    }
    SlurmNode& n = out[std::string(l.substr(0, bar))];
    std::vector<std::string_view> fields;
    for (std::string_view rest = l.substr(bar + 1);;) {
      size_t next = rest.find('|');
      fields.push_back(rest.substr(0, next));
      if (next == std::string_view::npos) break;
      rest = rest.substr(next + 1);
    }
    if (fields[0].empty()) {
      return InvalidArgument("sinfo: line " + std::to_string(line) + ": no state");
    }
    n.state = std::string(fields[0]);
    if (fields.size() > 1) n.cpus = Number<int>(fields[1], -1);
    if (fields.size() > 2) n.memory_mb = Number<int64_t>(fields[2], -1);
    if (fields.size() > 3) n.gpus = GpuCount(fields[3]);
  }
  return out;
}

bool SlurmNodeUsable(std::string_view state) {
  if (state.empty() || state.find('*') != std::string_view::npos) return false;
  for (std::string_view bad : {"down", "drain", "fail", "maint", "power", "unknown", "inval",
                               "future", "reboot", "not_responding"}) {
    if (state.find(bad) != std::string_view::npos) return false;
  }
  return true;
}

std::string SlurmJobName(int64_t job, int32_t run, std::optional<int32_t> task) {
  return "tessera-" + std::to_string(job) + "-" + std::to_string(run) +
         (task ? "-t" + std::to_string(*task) : std::string());
}

std::optional<SlurmRunName> ParseSlurmJobName(std::string_view name) {
  constexpr std::string_view kPrefix = "tessera-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  size_t dash = name.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  SlurmRunName out;
  // An elastic run's task alone: "-tTASK" after the run.
  if (size_t t = name.find("-t", dash + 1); t != std::string_view::npos) {
    int32_t task = -1;
    auto c = std::from_chars(name.data() + t + 2, name.data() + name.size(), task);
    if (c.ec != std::errc() || c.ptr != name.data() + name.size() || task < 0 ||
        t + 2 == name.size())
      return std::nullopt;
    out.task = task;
    name = name.substr(0, t);
  }
  auto a = std::from_chars(name.data(), name.data() + dash, out.job);
  auto b = std::from_chars(name.data() + dash + 1, name.data() + name.size(), out.run);
  const bool whole = a.ec == std::errc() && a.ptr == name.data() + dash && b.ec == std::errc() &&
                     b.ptr == name.data() + name.size();
  if (!whole || out.job <= 0 || out.run < 0) return std::nullopt;
  return out;
}

std::optional<SlurmEnd> SlurmOutcome(const SlurmJob& job) {
  const std::string& s = job.state;
  if (s == "COMPLETED" && job.exit_code == 0) return SlurmEnd{true, ""};
  // A completed job with a non-zero exit failed, without a word from Slurm.
  if (s == "COMPLETED") return SlurmEnd{false, ""};
  if (s == "FAILED" || s == "TIMEOUT" || s == "OUT_OF_MEMORY" || s == "BOOT_FAIL" ||
      s == "DEADLINE") {
    return SlurmEnd{false, "Slurm job " + std::to_string(job.id) + " " + s + " (exit " +
                               std::to_string(job.exit_code) + ")"};
  }
  return std::nullopt;  // pending, running, cancelled (by Tessera), node failure, preempted
}

std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

SlurmSubmission BuildSubmission(const RunOrder& order, const std::vector<SlurmTaskShape>& shapes,
                                const std::string& partition, const std::string& output_dir,
                                const std::string& checkpoint_root,
                                std::optional<Millis> time_limit, bool alone) {
  // Nodes in the order of their first task; each node's tasks in task order (local ranks).
  std::vector<std::string> nodes;
  std::map<std::string, std::vector<int32_t>> tasks_on;
  std::map<std::string, MiB> memory_on;
  Milli cpu = 0;
  int gpus = 0;
  for (size_t i = 0; i < order.tasks.size(); ++i) {
    const RunOrder::Task& t = order.tasks[i];
    if (!tasks_on.count(t.node)) nodes.push_back(t.node);
    tasks_on[t.node].push_back(t.index);
    const SlurmTaskShape& shape = shapes[i];
    memory_on[t.node] += shape.memory;
    cpu = std::max(cpu, shape.cpu);
    gpus = std::max(gpus, shape.gpus);
  }
  size_t per_node = 0;
  MiB memory = 0;
  for (const auto& [node, list] : tasks_on)
    per_node = std::max(per_node, list.size());
  for (const auto& [node, mib] : memory_on)
    memory = std::max(memory, mib);
  std::string nodelist;
  for (const std::string& n : nodes)
    nodelist += (nodelist.empty() ? "" : ",") + n;
  const std::string key = std::to_string(order.job) + "." + std::to_string(order.run);
  const std::optional<int32_t> task =
      alone && !order.tasks.empty() ? std::optional<int32_t>(order.tasks[0].index) : std::nullopt;

  SlurmSubmission s;
  s.args = {"--parsable",
            "--job-name=" + SlurmJobName(order.job, order.run, task),
            "--nodes=" + std::to_string(nodes.size()),
            "--nodelist=" + nodelist,
            "--ntasks-per-node=" + std::to_string(per_node),
            "--cpus-per-task=" + std::to_string(std::max<Milli>(1, (cpu + 999) / 1000)),
            "--output=" + output_dir + "/" + key +
                (task ? ".t" + std::to_string(*task) : std::string()) + ".batch.log",
            "--chdir=" + output_dir,
            "--no-requeue"};
  if (memory > 0) s.args.push_back("--mem=" + std::to_string(memory) + "M");
  if (gpus > 0) s.args.push_back("--gpus-per-task=" + std::to_string(gpus));
  if (!partition.empty()) s.args.push_back("--partition=" + partition);
  if (time_limit) {
    s.args.push_back("--time=" +
                     std::to_string(std::max<Millis>(1, (*time_limit + 59999) / 60000)));
  }

  // The task's side: its Tessera index from its node and local rank, its output, its
  // checkpoint directory; then the program.
  std::string inner = "case \"$SLURMD_NODENAME:$SLURM_LOCALID\" in\n";
  std::string peers;
  for (const RunOrder::Task& t : order.tasks)
    peers += (peers.empty() ? "" : ",") + t.node;
  for (const std::string& n : nodes) {
    const std::vector<int32_t>& list = tasks_on[n];
    for (size_t local = 0; local < list.size(); ++local) {
      inner +=
          "  " + n + ":" + std::to_string(local) + ") i=" + std::to_string(list[local]) + ";;\n";
    }
  }
  inner += "  *) exit 0;;\nesac\n";
  inner += "export TESSERA_TASK_INDEX=$i TESSERA_TASK_KEY=" + key +
           ".$i TESSERA_NODE=$SLURMD_NODENAME\n";
  inner += "export TESSERA_VISIBLE_DEVICES=\"${CUDA_VISIBLE_DEVICES:-}\"\n";
  inner += "export TESSERA_CHECKPOINT_DIR=" +
           ShellQuote(checkpoint_root + "/" + std::to_string(order.job)) + "\n";
  inner += "mkdir -p \"$TESSERA_CHECKPOINT_DIR\"\n";
  inner += "exec >>" + ShellQuote(output_dir + "/" + key) + ".$i.log 2>&1\n";
  inner += "exec \"$@\"\n";

  std::string& sh = s.script;
  sh = "#!/bin/sh\n# Tessera: run " + std::to_string(order.run) + " of job " +
       std::to_string(order.job) + " (" + order.job_name + ")\n";
  std::map<std::string, std::string> env = order.env;
  env["TESSERA_JOB"] = order.job_name;
  env["TESSERA_JOB_ID"] = std::to_string(order.job);
  env["TESSERA_GANG_SIZE"] = std::to_string(order.tasks.size());
  env["TESSERA_RESTART_COUNT"] = std::to_string(order.run);
  env["TESSERA_PEERS"] = peers;
  env["TESSERA_MASTER_ADDR"] = order.tasks.empty() ? "" : order.tasks[0].node;
  for (const auto& [k, v] : env)
    sh += "export " + k + "=" + ShellQuote(v) + "\n";
  sh += "exec srun --kill-on-bad-exit=1 --ntasks-per-node=" + std::to_string(per_node);
  if (gpus > 0) sh += " --gpus-per-task=" + std::to_string(gpus);
  sh += " /bin/sh -c " + ShellQuote(inner) + " tessera-task";
  for (const std::string& a : order.command)
    sh += " " + ShellQuote(a);
  sh += "\n";
  return s;
}

}  // namespace tessera
