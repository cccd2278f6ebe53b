// The simulated backend (sim/sim_backend.h) on the base fleet: a run finishes when its work
// is done at its devices' pace, a resumed run first reloads its checkpoint
// (JobRecord::run_overhead), and a stop keeps the progress up to the last checkpoint counted
// from the end of that reload.
#include "sim/sim_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "testutil/base_cell.h"

namespace tessera {
namespace {

struct Posted final : EventSink {
  void Post(const Event& e) override { events.push_back(e); }
  std::vector<Event> events;
};

class SimBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::BaseCell base;
    ASSERT_TRUE(base.cell);
    spec_ = std::move(base.spec);
    cell_ = std::move(base.cell);
    backend_ = std::make_unique<SimBackend>(*spec_, *cell_, sink_);
    const ModelMask h800 = ModelMask{1} << spec_->FindModel("H800")->value();
    for (uint32_t n = 0; n < cell_->node_count() && job_.placements.empty(); ++n) {
      if ((cell_->node(n).models & h800) == 0) continue;
      Placement p;
      p.node = n;
      p.devices.push_back({0, 1000});
      job_.placements.push_back(p);
    }
    job_.id = JobId(0);
    job_.job.name = "j";
    TaskGroup g;
    g.name = "worker";
    g.count = 1;
    g.request.devices.count = 1;
    g.request.devices.models.push_back({*spec_->FindModel("H800"), 1000});
    job_.job.task_groups.push_back(g);
    job_.job.checkpoint_interval = 30'000;
    job_.task_count = 1;
    backend_->SetWork(job_.id, 100'000);
  }
  // When the run's finish is posted, in ms after its start.
  Millis FinishAfter() const {
    EXPECT_FALSE(sink_.events.empty());
    return sink_.events.back().time - job_.last_start;
  }

  std::unique_ptr<Spec> spec_;
  std::unique_ptr<CellState> cell_;
  Posted sink_;
  std::unique_ptr<SimBackend> backend_;
  JobRecord job_;
};

TEST_F(SimBackendTest, AResumedRunReloadsItsCheckpointBeforeItsWorkGoesOn) {
  const double rate = backend_->Rate(job_);
  ASSERT_GT(rate, 0);
  const auto work = static_cast<Millis>(std::ceil(100'000 * kMilliPerUnit / rate));
  job_.last_start = 10'000;
  backend_->Launch(job_, 10'000);
  EXPECT_EQ(FinishAfter(), work);  // a first run loads nothing

  // Stopped at 80 s (70 s in, last checkpoint at 60 s in): 60 s of work kept.
  backend_->Stop(job_, 80'000);
  EXPECT_NEAR(backend_->remaining(job_.id), 100'000 - 60'000 * rate / kMilliPerUnit, 1e-6);
  // Resumed at 100 s with a minute's reload: it finishes a minute later than its work says.
  const double left = backend_->remaining(job_.id);
  job_.last_start = 100'000;
  job_.run_overhead = 60'000;
  backend_->Launch(job_, 100'000);
  EXPECT_EQ(FinishAfter(), 60'000 + static_cast<Millis>(std::ceil(left * kMilliPerUnit / rate)));
  // Stopped 50 s in, still reloading: nothing done, nothing lost.
  backend_->Stop(job_, 150'000);
  EXPECT_DOUBLE_EQ(backend_->remaining(job_.id), left);
  // Resumed again and stopped 100 s in: 40 s past the reload, one checkpoint (30 s) kept.
  job_.last_start = 200'000;
  backend_->Launch(job_, 200'000);
  backend_->Stop(job_, 300'000);
  EXPECT_NEAR(backend_->remaining(job_.id), left - 30'000 * rate / kMilliPerUnit, 1e-6);
}

}  // namespace
}  // namespace tessera
