// The daemon's per-submission hot path without HTTP: parsing and checking a job body against
// the enterprise example (LoadJobText), as POST /v1/jobs does for every submission.
#include <benchmark/benchmark.h>

#include "config/loader.h"

namespace {

const tessera::Spec& Enterprise() {
  static const tessera::Spec spec = [] {
    tessera::LoadResult r = tessera::LoadSpecFiles({TESSERA_EXAMPLES "/enterprise"});
    if (!r.spec) std::abort();
    return *r.spec;
  }();
  return spec;
}

// Parses and checks `body` as POST /v1/jobs does, once per iteration.
void Parse(benchmark::State& state, const std::string& body) {
  const tessera::Spec& spec = Enterprise();
  for (auto _ : state) {
    tessera::JobLoad r = tessera::LoadJobText(spec, {"body", body});
    if (!r.job) state.SkipWithError("the body did not parse");
    benchmark::DoNotOptimize(r);
  }
}

const char* const kOneTask =
    R"({"name":"load-1-1","class":"batch","tenant":"consumer/ads/ctr","runtime":"1s",)"
    R"("taskGroups":[{"name":"w","count":1,"cpu":1,"memory":"1Gi"}]})";

void BM_ParseJobBody(benchmark::State& state) {
  Parse(state, kOneTask);
}
BENCHMARK(BM_ParseJobBody);

// The same body prefixed with a YAML comment, so that the YAML reader takes it (what a body
// that is not JSON costs; JSON bodies are read by nlohmann's parser).
void BM_ParseJobBodyAsYaml(benchmark::State& state) {
  Parse(state, std::string("# yaml\n") + kOneTask);
}
BENCHMARK(BM_ParseJobBodyAsYaml);

void BM_ParseGangBody(benchmark::State& state) {
  Parse(state,
        R"({"name":"train","class":"training","tenant":"ai-lab/applied/vision","runtime":"2h",)"
        R"("taskGroups":[{"count":4,"cpu":32,"memory":"256Gi","devices":{"count":8,)"
        R"("models":["H800","A800"]}}],"gang":{"require":"leaf"}})");
}
BENCHMARK(BM_ParseGangBody);

}  // namespace

BENCHMARK_MAIN();
