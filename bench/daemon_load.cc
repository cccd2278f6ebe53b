// The daemon without its HTTP API: bench/serve's submissions (one-CPU batch jobs of 1 s on the
// enterprise example, paced at RATE a second for SECONDS) made by THREADS threads calling
// Daemon::Submit in-process — the body parsed and checked, the row durable in a SQLite store
// before the call returns, as an API worker does — with no sockets, HTTP or authentication.
// Prints the submissions' latency and the scheduling cycle's time per job, to compare with
// bench/serve's (1a): what the HTTP API adds to the cycle, apart from what the daemon's store
// and view add to the engine alone (bench/cycle_baseline). Linked with the daemon's allocator.
// With --pin, the engine's thread runs on core 0 and every other thread on the other cores, as
// bench/serve's (1c) pins the daemon and its load generator.
//
//   daemon_load [--pin] [RATE=2000] [SECONDS=10] [THREADS=32]
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "config/loader.h"
#include "server/daemon.h"
#include "store/sqlite_store.h"

namespace {

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// The cycle's counters from the daemon's exposition: name -> value.
std::map<std::string, double> CycleMetrics(tessera::Daemon& d) {
  std::map<std::string, double> out;
  std::istringstream in(d.metrics().Render({}));
  std::string name;
  double value = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("tessera_scheduling_cycle_", 0) != 0) continue;
    std::istringstream fields(line);
    if (fields >> name >> value) out[name] = value;
  }
  return out;
}

std::string ThreadName(const std::filesystem::path& task) {
  std::ifstream comm(task / "comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

// The engine's thread on core 0, this process's other threads (and those they start) on the
// others. False where the machine has one core or the kernel refuses.
bool PinEngine() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 2) return false;
  cpu_set_t engine, others;
  CPU_ZERO(&engine);
  CPU_ZERO(&others);
  CPU_SET(0, &engine);
  for (long c = 1; c < cores; ++c)
    CPU_SET(static_cast<int>(c), &others);
  bool found = false;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    const pid_t tid = static_cast<pid_t>(std::atol(task.path().filename().c_str()));
    const bool is_engine = ThreadName(task.path()) == "engine";
    found = found || is_engine;
    if (sched_setaffinity(tid, sizeof(cpu_set_t), is_engine ? &engine : &others) != 0) return false;
  }
  return found;
}

// The engine thread's minor page faults so far (/proc/self/task/TID/stat, field 10): memory it
// touched for the first time, which on a VM whose host reclaims idle memory costs far more than
// the work that touches it.
long EngineFaults() {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (ThreadName(task.path()) != "engine") continue;
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 10 && fields >> field; ++i) {
    }
    return std::atol(field.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera;
  const bool pin = argc > 1 && std::string(argv[1]) == "--pin";
  if (pin) {
    --argc;
    ++argv;
  }
  const double rate = argc > 1 ? std::atof(argv[1]) : 2000;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 10;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 32;
  if (rate <= 0 || seconds <= 0 || threads <= 0) {
    std::fprintf(stderr, "usage: daemon_load [--pin] [RATE>0] [SECONDS>0] [THREADS>0]\n");
    return 2;
  }
  LoadResult loaded = LoadSpecFiles({TESSERA_EXAMPLES "/enterprise"});
  if (!loaded.spec) {
    std::fprintf(stderr, "%s", loaded.diagnostics.ToString().c_str());
    return 1;
  }
  char dir_template[] = "/tmp/daemon_load.XXXXXX";
  if (!mkdtemp(dir_template)) return 1;
  const std::string dir = dir_template;
  int rc = 0;
  {
    auto store = SqliteStore::Open(dir + "/store.db");
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().message().c_str());
      return 1;
    }
    static SystemClock clock;
    DaemonOptions options;
    options.config_paths = {TESSERA_EXAMPLES "/enterprise"};
    options.admin_token = "bench";
    options.work_dir = dir;
    auto started = Daemon::Start(std::move(*loaded.spec), std::move(*store), clock, options);
    if (!started.ok()) {
      std::fprintf(stderr, "%s\n", started.status().message().c_str());
      return 1;
    }
    Daemon& d = *started->daemon;
    // The engine's thread names itself as it starts: give it a moment.
    bool pinned = !pin;
    for (int tries = 0; !pinned && tries < 100; ++tries) {
      pinned = PinEngine();
      if (!pinned) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!pinned) {
      std::fprintf(stderr, "daemon_load: could not pin the engine's thread to a core of its own\n");
      return 1;
    }
    const Caller admin{"admin", Role::kAdmin, "", ""};
    const auto before = CycleMetrics(d);
    const long faults_before = EngineFaults();

    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const auto deadline = t0 + std::chrono::duration<double>(seconds);
    std::atomic<int64_t> claimed{0}, errors{0};
    std::mutex mu;
    std::vector<double> latencies_ms;
    std::vector<std::thread> workers;
    for (int w = 0; w < threads; ++w) {
      workers.emplace_back([&, w] {
        std::vector<double> mine;
        for (int i = 0;; ++i) {
          // The k-th submission is due at k / RATE s; its latency counts from then.
          const int64_t k = claimed++;
          const auto due = t0 + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(static_cast<double>(k) / rate));
          if (due >= deadline) break;
          std::this_thread::sleep_until(due);
          const std::string name = "load-" + std::to_string(w) + "-" + std::to_string(i);
          const std::string body =
              R"({"name":")" + name +
              R"(","class":"batch","tenant":"consumer/ads/ctr","runtime":"1s",)"
              R"("taskGroups":[{"name":"w","count":1,"cpu":1,"memory":"1Gi"}]})";
          auto out = d.Submit(admin, body, name);
          if (!out.ok()) {
            if (errors++ < 5) std::fprintf(stderr, "%s\n", out.status().message().c_str());
            continue;
          }
          mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - due).count());
        }
        std::lock_guard<std::mutex> lock(mu);
        latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
      });
    }
    for (auto& t : workers)
      t.join();
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    auto after = CycleMetrics(d);
    const long faults = EngineFaults() - faults_before;
    const double sum = after["tessera_scheduling_cycle_seconds_sum"] -
                       before.at("tessera_scheduling_cycle_seconds_sum");
    const double count = after["tessera_scheduling_cycle_seconds_count"] -
                         before.at("tessera_scheduling_cycle_seconds_count");
    const double cpu = after["tessera_scheduling_cycle_cpu_seconds_total"] -
                       before.at("tessera_scheduling_cycle_cpu_seconds_total");
    const double n = static_cast<double>(std::max<size_t>(1, latencies_ms.size()));
    std::printf(
        "{\"rate\":%.0f,\"seconds\":%.2f,\"submitted\":%zu,\"errors\":%lld,\"per_second\":%.0f,"
        "\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"cycles_per_s\":%.0f,\"cycle_us_per_job\":%.1f,"
        "\"on_a_core_us_per_job\":%.1f,\"engine_page_faults_per_s\":%.0f}\n",
        rate, elapsed, latencies_ms.size(), static_cast<long long>(errors.load()),
        static_cast<double>(latencies_ms.size()) / elapsed, Percentile(latencies_ms, 0.5),
        Percentile(latencies_ms, 0.99), count / elapsed, 1e6 * sum / n, 1e6 * cpu / n,
        static_cast<double>(faults) / elapsed);
    rc = errors > 0 ? 1 : 0;
  }
  std::filesystem::remove_all(dir);
  return rc;
}
