// A load generator for `tessera serve` (docs/serve.md#performance): C connections submit small
// batch jobs over keep-alive HTTP for S seconds, each waiting for its answer (a submission is
// answered once durable); prints submissions per second and latency percentiles as JSON.
//
//   serve_load URL TOKEN [--connections 32] [--seconds 10] [--jobs N] [--rate R]
//              [--tenant consumer/ads/ctr] [--runtime 1s] [--prefix load]
// With --jobs, it stops after N submissions (or at the time limit, whichever comes first).
// With --rate, submissions are paced at R a second in all (the k-th is due at k/R s, taken by
// whichever connection is free); a submission's latency counts from when it was due, so that a
// server that falls behind shows it in the percentiles (no coordinated omission). "stalls"
// lists the seconds (from "started_ms", the Unix time of the start, to line them up with a
// server's or a database's log) whose slowest submission took over 100 ms.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Args {
  std::string url, token, tenant = "consumer/ads/ctr", runtime = "1s", prefix = "load";
  int connections = 32;
  double seconds = 10;
  int64_t jobs = 0;  // stop after this many submissions (0 = only the time limit)
  double rate = 0;   // submissions a second in all (0 = as fast as the server answers)
};

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: serve_load URL TOKEN [--connections N] [--seconds S] [--jobs N] "
                 "[--rate R] [--tenant T] [--runtime D] [--prefix P]\n");
    return 2;
  }
  a.url = argv[1];
  a.token = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--connections")
      a.connections = std::stoi(v);
    else if (k == "--seconds")
      a.seconds = std::stod(v);
    else if (k == "--jobs")
      a.jobs = std::stoll(v);
    else if (k == "--rate")
      a.rate = std::stod(v);
    else if (k == "--tenant")
      a.tenant = v;
    else if (k == "--runtime")
      a.runtime = v;
    else if (k == "--prefix")
      a.prefix = v;
    else {
      std::fprintf(stderr, "serve_load: unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration<double>(a.seconds);
  std::mutex mu;
  std::vector<double> latencies_ms;
  std::vector<double> slowest_ms;  // by second of the run (when each submission was due)
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> claimed{0};  // submissions begun, against --jobs and --rate
  std::vector<std::thread> threads;
  auto t0 = Clock::now();
  const auto started_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  // When the k-th submission is due (--rate), or now (unpaced).
  auto due = [&](int64_t k) {
    if (a.rate <= 0) return Clock::now();
    return t0 + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(static_cast<double>(k) / a.rate));
  };
  for (int c = 0; c < a.connections; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client(a.url);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(60);
      httplib::Headers headers = {{"Authorization", "Bearer " + a.token}};
      std::vector<double> mine;
      std::vector<std::pair<size_t, double>> when;  // second of the run, latency
      for (int i = 0; Clock::now() < deadline; ++i) {
        const int64_t k = claimed++;
        if (a.jobs != 0 && k >= a.jobs) break;
        const auto s = due(k);
        if (s >= deadline) break;
        std::this_thread::sleep_until(s);
        std::string name = a.prefix + "-" + std::to_string(c) + "-" + std::to_string(i);
        nlohmann::json job = {
            {"name", name},
            {"class", "batch"},
            {"tenant", a.tenant},
            {"runtime", a.runtime},
            {"taskGroups", {{{"name", "w"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}}};
        httplib::Headers h = headers;
        h.emplace("Idempotency-Key", name);
        auto r = client.Post("/v1/jobs", h, job.dump(), "application/json");
        // A connection the server closed between two requests: retry with the same key (the
        // Idempotency-Key makes a retry safe whether or not the first attempt arrived).
        if (!r) r = client.Post("/v1/jobs", h, job.dump(), "application/json");
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - s).count();
        if (!r || r->status != 201) {
          ++errors;
          if (r && errors < 5)
            std::fprintf(stderr, "serve_load: %d %s\n", r->status, r->body.c_str());
          continue;
        }
        mine.push_back(ms);
        when.emplace_back(static_cast<size_t>(std::chrono::duration<double>(s - t0).count()), ms);
      }
      std::lock_guard<std::mutex> lock(mu);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
      for (const auto& [second, ms] : when) {
        if (slowest_ms.size() <= second) slowest_ms.resize(second + 1, 0);
        slowest_ms[second] = std::max(slowest_ms[second], ms);
      }
    });
  }
  for (auto& t : threads)
    t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  size_t n = latencies_ms.size();
  nlohmann::ordered_json out = {{"connections", a.connections},
                                {"rate", a.rate},
                                {"seconds", std::round(elapsed * 100) / 100},
                                {"submitted", n},
                                {"errors", errors.load()},
                                {"per_second", std::round(static_cast<double>(n) / elapsed)},
                                {"p50_ms", std::round(Percentile(latencies_ms, 0.50) * 100) / 100},
                                {"p99_ms", std::round(Percentile(latencies_ms, 0.99) * 100) / 100},
                                {"max_ms", std::round(Percentile(latencies_ms, 1.0) * 100) / 100},
                                {"started_ms", started_ms}};
  nlohmann::json stalls = nlohmann::json::array();
  for (size_t second = 0; second < slowest_ms.size(); ++second) {
    if (slowest_ms[second] > 100) stalls.push_back({second, std::round(slowest_ms[second])});
  }
  out["stalls"] = stalls;
  std::printf("%s\n", out.dump().c_str());
  return errors > 0 ? 1 : 0;
}
