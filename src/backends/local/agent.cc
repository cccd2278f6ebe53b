#include "backends/local/agent.h"

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <ostream>
#include <random>
#include <thread>

#include "backends/local/device_map.h"
#include "backends/local/host.h"
#include "backends/local/supervisor.h"
#include "common/server_list.h"

namespace tessera {

namespace {

TimeMs WallNow() {
  return SystemClock().Now();
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

SupervisorOptions SupervisorOptionsOf(const AgentOptions& o) {
  SupervisorOptions s;
  s.work_dir = o.work_dir;
  s.checkpoint_root = o.checkpoint_root.empty() ? o.work_dir + "/checkpoints" : o.checkpoint_root;
  s.log_bytes = o.log_bytes;
  s.allow_root_tasks = o.allow_root_tasks;
  return s;
}

// The agent's state, shared by its two loops.
class AgentCore {
 public:
  AgentCore(const AgentOptions& o, std::ostream& log, std::unique_ptr<Containment> containment)
      : options_(o),
        log_(log),
        host_(o.device_tool),
        supervisor_(SupervisorOptionsOf(o), std::move(containment)) {
    std::random_device rd;
    char id[64];
    std::snprintf(id, sizeof id, "%s-%d-%08x", HostName().c_str(), static_cast<int>(getpid()),
                  rd());
    agent_id_ = id;
    address_ = o.address.empty() ? HostName() : o.address;
  }

  // One sync: reports, then waits up to `wait` for the answer; applies it. False when the
  // daemon could not be reached or refused.
  // `client` talks to `url`; a failure moves `servers` on (several daemons: to the leader).
  bool Sync(ServerList& servers, httplib::Client& client, const std::string& url, Millis wait) {
    SyncRequest req;
    {
      std::lock_guard<std::mutex> lock(mu_);
      req.agent = agent_id_;
      req.address = address_;
      req.inventory = host_.inventory();
      req.inventory.gpus = NodeGpus(options_.devices, req.inventory.gpus);
      req.tasks = supervisor_.Reports(resend_logs_);
      resend_logs_ = false;
      req.known_version = wait > 0 ? applied_version_ : 0;
    }
    req.telemetry = SampleTelemetry();
    req.telemetry.gpus = NodeGpus(options_.devices, req.telemetry.gpus);
    req.wait_ms = wait;
    client.set_read_timeout(std::chrono::milliseconds(wait + 10000));
    httplib::Headers h = {{"Authorization", "Bearer " + options_.token}};
    // Task output is any bytes: what is not UTF-8 is sent as U+FFFD.
    std::string body = ToJson(req).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    auto r = client.Post("/v1/agents/" + options_.node + "/sync", h, body, "application/json");
    if (!r) {
      servers.Failed(url);
      return Trouble("cannot reach " + url + ": " + httplib::to_string(r.error()));
    }
    if (r->status != 200) {
      if (r->status == 503) {
        // A standby, or a daemon that does not lead now: to the leader it names, or the next.
        auto answer = nlohmann::json::parse(r->body, nullptr, false);
        std::string leader;
        if (answer.is_object() && answer.contains("leader") && answer["leader"].is_string())
          leader = answer["leader"].get<std::string>();
        servers.Failed(url, leader);
      }
      return Trouble(url + " refused the sync (" + std::to_string(r->status) +
                     "): " + r->body.substr(0, 300));
    }
    auto answer = ReadSyncAnswer(r->body);
    if (!answer.ok()) return Trouble("unreadable answer: " + answer.status().message());
    Apply(*answer, url);
    return true;
  }

  // Reaps and kills on time; true when a task exited (a sync should report it now).
  bool Poll() {
    std::lock_guard<std::mutex> lock(mu_);
    bool exited = supervisor_.Poll(WallNow()) || started_failed_;
    started_failed_ = false;
    return exited;
  }

  Millis heartbeat() const { return heartbeat_.load(); }

  void StopAll() {
    std::lock_guard<std::mutex> lock(mu_);
    supervisor_.StopAll(options_.default_grace);
  }

 private:
  AgentTelemetry SampleTelemetry() {
    std::lock_guard<std::mutex> lock(sample_mu_);
    return host_.Sample();
  }

  bool Trouble(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (what != last_trouble_) log_ << "agent " << options_.node << ": " << what << std::endl;
    last_trouble_ = what;
    connected_ = false;
    return false;
  }

  void Apply(const SyncAnswer& a, const std::string& answered) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!connected_) {
      log_ << "agent " << options_.node << ": in touch with " << answered << " (epoch " << a.epoch
           << ")" << std::endl;
      connected_ = true;
      last_trouble_.clear();
    }
    heartbeat_ = a.heartbeat_ms;
    if (a.epoch != epoch_) {
      // A daemon that restarted has not seen the exits the previous one acknowledged.
      if (!epoch_.empty()) supervisor_.Unacknowledge();
      epoch_ = a.epoch;
      applied_version_ = 0;
      resend_logs_ = true;
    }
    supervisor_.Acknowledge(a.acked, WallNow());
    if (a.version < applied_version_) return;  // an older answer overtaken by a newer one
    applied_version_ = a.version;
    TimeMs now = WallNow();
    std::map<TaskKey, Millis> graces;
    for (const TaskStop& s : a.stop)
      graces[s.key] = s.grace_ms;
    std::map<TaskKey, bool> wanted;
    for (const TaskAssignment& t : a.run) {
      wanted[t.key] = true;
      if (supervisor_.Knows(t.key)) continue;
      TaskAssignment host = t;
      MapToHost(options_.devices, host.env);
      supervisor_.Start(host, now);
      auto running = supervisor_.Running();
      if (std::find(running.begin(), running.end(), t.key) == running.end()) {
        started_failed_ = true;  // could not start: report at once
      }
    }
    for (const TaskKey& k : supervisor_.Running()) {
      if (wanted.count(k)) continue;
      // A stop without a grace period of its own (a cancel, a preemption without a rule,
      // the rest of a failed gang: 0) gets the agent's: SIGKILL right behind SIGTERM left a
      // task no time to act on the signal.
      auto g = graces.find(k);
      supervisor_.Stop(k, g == graces.end() || g->second <= 0 ? options_.default_grace : g->second,
                       now);
    }
  }

  const AgentOptions& options_;
  std::ostream& log_;
  std::mutex mu_;
  std::mutex sample_mu_;
  HostSampler host_;
  Supervisor supervisor_;
  std::string agent_id_;
  std::string address_;
  std::string epoch_;
  uint64_t applied_version_ = 0;
  bool resend_logs_ = true;
  bool started_failed_ = false;
  bool connected_ = false;
  std::string last_trouble_;
  std::atomic<Millis> heartbeat_{2000};
};

std::unique_ptr<httplib::Client> MakeClient(const AgentOptions& o, const std::string& url) {
  auto c = std::make_unique<httplib::Client>(url);
  c->set_connection_timeout(std::chrono::seconds(3));
  c->set_tcp_nodelay(true);
  if (!o.ca_cert.empty()) c->set_ca_cert_path(o.ca_cert);
  return c;
}

}  // namespace

Status RunAgent(const AgentOptions& options, const std::atomic<bool>& stop, std::ostream& log) {
  if (options.node.empty()) return InvalidArgument("--node: the node's name is required");
  auto parsed = ServerList::Parse(options.server, "--server");
  if (!parsed.ok()) return parsed.status();
  ServerList servers = *parsed;
  std::error_code ec;
  std::filesystem::create_directories(options.work_dir, ec);
  if (ec) return InvalidArgument("--work-dir " + options.work_dir + ": " + ec.message());
  // Each task's processes held together; what an earlier run of this agent left is killed
  // before the daemon hears from it (those runs ended with that agent: the daemon requeues them).
  ContainmentOptions contain;
  contain.kind = options.containment;
  contain.identity = AgentIdentity(options.node, options.work_dir);
  contain.cgroup_root = options.cgroup_root;
  auto containment = Containment::Make(contain);
  if (!containment.ok()) return containment.status();
  log << "agent " << options.node << ": tasks are contained by " << (*containment)->description()
      << std::endl;
  if (geteuid() == 0) {
    log << "agent " << options.node << ": running as root: tasks run as their runAs user"
        << (options.allow_root_tasks ? ", as root when they name none (--allow-root-tasks)"
                                     : "; a task that names none is refused")
        << std::endl;
  }
  if (int left = (*containment)->KillLeftovers(); left > 0) {
    log << "agent " << options.node << ": killed " << left
        << " processes of tasks an earlier run of this agent left" << std::endl;
  }
  AgentCore core(options, log, std::move(*containment));
  // Each thread its own connection, to the daemon the list says now.
  std::unique_ptr<httplib::Client> poll_client;
  std::string poll_url;
  std::mutex poll_mu;  // poll_client: the poller's, stopped from here at the end
  std::thread poller([&] {
    while (!stop.load()) {
      std::unique_lock<std::mutex> lock(poll_mu);
      if (!poll_client || poll_url != servers.Current()) {
        poll_url = servers.Current();
        poll_client = MakeClient(options, poll_url);
      }
      lock.unlock();
      if (!core.Sync(servers, *poll_client, poll_url, core.heartbeat())) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
  });
  std::unique_ptr<httplib::Client> report_client;
  std::string report_url;
  auto report = [&] {
    if (!report_client || report_url != servers.Current()) {
      report_url = servers.Current();
      report_client = MakeClient(options, report_url);
    }
    core.Sync(servers, *report_client, report_url, 0);
  };
  while (!stop.load()) {
    if (core.Poll()) report();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  core.StopAll();
  report();  // the exits of the stopped tasks
  {
    std::lock_guard<std::mutex> lock(poll_mu);
    if (poll_client) poll_client->stop();
  }
  poller.join();
  return Status::Ok();
}

}  // namespace tessera
