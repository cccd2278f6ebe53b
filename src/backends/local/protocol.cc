#include "backends/local/protocol.h"

#include <set>

namespace tessera {

using json = nlohmann::json;

namespace {

json GpusJson(const std::vector<GpuSample>& gpus) {
  json out = json::array();
  for (const GpuSample& g : gpus) {
    out.push_back({{"index", g.index},
                   {"uuid", g.uuid},
                   {"name", g.name},
                   {"memory_total", g.memory_total},
                   {"memory_used", g.memory_used},
                   {"utilization", g.utilization}});
  }
  return out;
}

// A malformed message: the field's path and what is wrong with it.
struct Malformed {
  std::string field;
  std::string message;
};

// One JSON object being read: each field once, unknown ones refused.
class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw Malformed{path_, "expected an object"};
  }
  ~Reader() noexcept(false) {
    if (std::uncaught_exceptions() > 0) return;
    for (const auto& [k, v] : j_.items()) {
      if (!seen_.count(k)) throw Malformed{Path(k), "unknown field"};
    }
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const json* Get(const std::string& key, bool required) {
    seen_.insert(key);
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) throw Malformed{Path(key), "missing"};
      return nullptr;
    }
    return &*it;
  }
  template <typename T>
  void Int(const std::string& key, T& out, bool required = false) {
    const json* v = Get(key, required);
    if (v == nullptr) return;
    if (!v->is_number_integer()) throw Malformed{Path(key), "expected an integer"};
    out = v->get<T>();
  }
  void Number(const std::string& key, double& out) {
    const json* v = Get(key, false);
    if (v == nullptr) return;
    if (!v->is_number()) throw Malformed{Path(key), "expected a number"};
    out = v->get<double>();
  }
  void Str(const std::string& key, std::string& out, bool required = false) {
    const json* v = Get(key, required);
    if (v == nullptr) return;
    if (!v->is_string()) throw Malformed{Path(key), "expected a string"};
    out = v->get<std::string>();
  }
  void Bool(const std::string& key, bool& out) {
    const json* v = Get(key, false);
    if (v == nullptr) return;
    if (!v->is_boolean()) throw Malformed{Path(key), "expected true or false"};
    out = v->get<bool>();
  }
  void Key(const std::string& key, TaskKey& out) {
    std::string s;
    Str(key, s, true);
    auto k = TaskKey::Parse(s);
    if (!k) throw Malformed{Path(key), "expected a task key JOB.RUN.TASK, got \"" + s + "\""};
    out = *k;
  }
  void Strings(const std::string& key, std::vector<std::string>& out) {
    const json* v = Get(key, false);
    if (v == nullptr) return;
    if (!v->is_array()) throw Malformed{Path(key), "expected a list of strings"};
    for (const json& s : *v) {
      if (!s.is_string()) throw Malformed{Path(key), "expected a list of strings"};
      out.push_back(s.get<std::string>());
    }
  }
  void StringMap(const std::string& key, std::map<std::string, std::string>& out) {
    const json* v = Get(key, false);
    if (v == nullptr) return;
    if (!v->is_object()) throw Malformed{Path(key), "expected a mapping of strings"};
    for (const auto& [k, s] : v->items()) {
      if (!s.is_string()) throw Malformed{Path(key) + "." + k, "expected a string"};
      out[k] = s.get<std::string>();
    }
  }
  // Each element of the list `key` read by `item(reader)`.
  template <typename F>
  void List(const std::string& key, F item) {
    const json* v = Get(key, false);
    if (v == nullptr) return;
    if (!v->is_array()) throw Malformed{Path(key), "expected a list"};
    for (size_t i = 0; i < v->size(); ++i) {
      Reader r((*v)[i], Path(key) + "[" + std::to_string(i) + "]");
      item(r);
    }
  }
  template <typename F>
  void Object(const std::string& key, F item) {
    const json* v = Get(key, false);
    if (v == nullptr) return;
    Reader r(*v, Path(key));
    item(r);
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> seen_;
};

void ReadGpus(Reader& r, const std::string& key, std::vector<GpuSample>& out) {
  r.List(key, [&](Reader& g) {
    GpuSample& s = out.emplace_back();
    g.Int("index", s.index, true);
    g.Str("uuid", s.uuid);
    g.Str("name", s.name);
    g.Int("memory_total", s.memory_total);
    g.Int("memory_used", s.memory_used);
    g.Number("utilization", s.utilization);
  });
}

template <typename T, typename F>
Result<T> ReadMessage(const std::string& body, F read) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("the body is not valid JSON");
  try {
    T out;
    {
      Reader r(j, "");
      read(r, out);
    }
    if (out.protocol != kAgentProtocol) {
      throw Malformed{"protocol", "this daemon speaks agent protocol " +
                                      std::to_string(kAgentProtocol) + ", got " +
                                      std::to_string(out.protocol)};
    }
    return out;
  } catch (const Malformed& m) {
    return InvalidArgument(m.field + ": " + m.message).WithField(m.field);
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("malformed message: ") + e.what());
  }
}

}  // namespace

json ToJson(const SyncRequest& r) {
  json tasks = json::array();
  for (const TaskReport& t : r.tasks) {
    json o = {{"key", t.key.ToString()},
              {"phase", t.phase == TaskPhase::kRunning ? "running" : "exited"},
              {"pid", t.pid}};
    if (t.phase == TaskPhase::kExited) {
      o["exit_code"] = t.exit_code;
      o["stopped"] = t.stopped;
      if (!t.error.empty()) o["error"] = t.error;
    }
    if (!t.log.empty()) o["log"] = t.log;
    tasks.push_back(std::move(o));
  }
  return {{"protocol", r.protocol},
          {"agent", r.agent},
          {"address", r.address},
          {"inventory",
           {{"cpu", r.inventory.cpu},
            {"memory", r.inventory.memory},
            {"gpus", GpusJson(r.inventory.gpus)}}},
          {"telemetry",
           {{"cpu_used", r.telemetry.cpu_used},
            {"memory_used", r.telemetry.memory_used},
            {"gpus", GpusJson(r.telemetry.gpus)}}},
          {"tasks", tasks},
          {"known_version", r.known_version},
          {"wait_ms", r.wait_ms}};
}

json ToJson(const SyncAnswer& a) {
  json run = json::array();
  for (const TaskAssignment& t : a.run) {
    json task = {{"key", t.key.ToString()},
                 {"job_name", t.job_name},
                 {"command", t.command},
                 {"env", t.env}};
    if (!t.run_as_user.empty()) task["run_as_user"] = t.run_as_user;
    if (!t.run_as_group.empty()) task["run_as_group"] = t.run_as_group;
    run.push_back(std::move(task));
  }
  json stop = json::array();
  for (const TaskStop& s : a.stop)
    stop.push_back({{"key", s.key.ToString()}, {"grace_ms", s.grace_ms}});
  json acked = json::array();
  for (const TaskKey& k : a.acked)
    acked.push_back(k.ToString());
  return {{"protocol", a.protocol},
          {"epoch", a.epoch},
          {"version", a.version},
          {"heartbeat_ms", a.heartbeat_ms},
          {"run", run},
          {"stop", stop},
          {"acked", acked}};
}

Result<SyncRequest> ReadSyncRequest(const std::string& body) {
  return ReadMessage<SyncRequest>(body, [](Reader& r, SyncRequest& out) {
    r.Int("protocol", out.protocol, true);
    r.Str("agent", out.agent, true);
    if (out.agent.empty() || out.agent.size() > 128) throw Malformed{"agent", "1-128 characters"};
    r.Str("address", out.address);
    if (out.address.size() > 255) throw Malformed{"address", "longer than 255 characters"};
    r.Object("inventory", [&](Reader& i) {
      i.Int("cpu", out.inventory.cpu);
      i.Int("memory", out.inventory.memory);
      ReadGpus(i, "gpus", out.inventory.gpus);
    });
    r.Object("telemetry", [&](Reader& t) {
      t.Int("cpu_used", out.telemetry.cpu_used);
      t.Int("memory_used", out.telemetry.memory_used);
      ReadGpus(t, "gpus", out.telemetry.gpus);
    });
    r.List("tasks", [&](Reader& t) {
      TaskReport& rep = out.tasks.emplace_back();
      t.Key("key", rep.key);
      std::string phase;
      t.Str("phase", phase, true);
      if (phase == "running") {
        rep.phase = TaskPhase::kRunning;
      } else if (phase == "exited") {
        rep.phase = TaskPhase::kExited;
      } else {
        throw Malformed{t.Path("phase"), "expected running or exited, got \"" + phase + "\""};
      }
      t.Int("pid", rep.pid);
      t.Int("exit_code", rep.exit_code);
      t.Bool("stopped", rep.stopped);
      t.Str("error", rep.error);
      t.Str("log", rep.log);
    });
    r.Int("known_version", out.known_version);
    r.Int("wait_ms", out.wait_ms);
    if (out.wait_ms < 0) throw Malformed{"wait_ms", "must not be negative"};
  });
}

Result<SyncAnswer> ReadSyncAnswer(const std::string& body) {
  return ReadMessage<SyncAnswer>(body, [](Reader& r, SyncAnswer& out) {
    r.Int("protocol", out.protocol, true);
    r.Str("epoch", out.epoch, true);
    r.Int("version", out.version, true);
    r.Int("heartbeat_ms", out.heartbeat_ms, true);
    if (out.heartbeat_ms <= 0) throw Malformed{"heartbeat_ms", "must be positive"};
    r.List("run", [&](Reader& t) {
      TaskAssignment& a = out.run.emplace_back();
      t.Key("key", a.key);
      t.Str("job_name", a.job_name);
      t.Strings("command", a.command);
      if (a.command.empty() || a.command[0].empty()) {
        throw Malformed{t.Path("command"), "expected a program and its arguments"};
      }
      t.StringMap("env", a.env);
      t.Str("run_as_user", a.run_as_user);
      t.Str("run_as_group", a.run_as_group);
    });
    r.List("stop", [&](Reader& t) {
      TaskStop& s = out.stop.emplace_back();
      t.Key("key", s.key);
      t.Int("grace_ms", s.grace_ms);
    });
    std::vector<std::string> acked;
    r.Strings("acked", acked);
    for (const std::string& a : acked) {
      auto k = TaskKey::Parse(a);
      if (!k) throw Malformed{"acked", "expected task keys JOB.RUN.TASK, got \"" + a + "\""};
      out.acked.push_back(*k);
    }
  });
}

}  // namespace tessera
