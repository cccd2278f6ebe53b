// The Philly importer (sim/trace_philly.cc): arrivals counted from the earliest row, real
// durations as work and estimate, gangs cut into node-sized tasks, virtual clusters charged to
// the tenant of their name, one virtual cluster on request, and line-numbered errors.
#include <gtest/gtest.h>

#include "config/loader.h"
#include "sim/workload.h"

namespace tessera {
namespace {

const char* kFleet = R"(
deviceModels: [{name: P100, kind: gpu, memory: 16Gi}]
regions: [{name: r}]
clusters:
  - name: c
    region: r
    nodeGroups: [{name: g, count: 4, cpu: 48, memory: 256Gi, devices: {model: P100, count: 8}}]
tenants:
  - name: philly
    children: [{name: 6c71a0}, {name: 11cb48}]
  - name: default
)";

const char* kHeader = "timestamp,duration,num_gpus,gpu_time,cluster\n";

Spec PhillyFleet() {
  LoadResult r = LoadSpecTexts({{"fleet.yaml", kFleet}});
  EXPECT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  return r.spec ? *r.spec : Spec{};
}

Result<Workload> Parse(const std::string& rows, const std::string& cluster = "") {
  ImportOptions options;
  options.philly_cluster = cluster;
  return ParsePhillyJobs(PhillyFleet(), "philly.csv", kHeader + rows, options);
}

TEST(Philly, ArrivalsDurationsShapesAndTenants) {
  auto w = Parse(
      "2017-10-09 07:01:55,66.0,1,66.0,6c71a0\n"
      "2017-10-09 06:13:03,2951.0,8,23608.0,11cb48\n"
      "2017-10-10 06:13:03,100.5,32,3216.0,6c71a0\n"
      "2017-10-09 06:13:04,10.0,12,120.0,ffffff\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->jobs.size(), 4u);
  const Spec spec = PhillyFleet();
  // The importer leaves the order of the file; ImportWorkload sorts by arrival.
  const Job& one = w->jobs[0].job;
  EXPECT_EQ(one.submit_time, (7 * 3600 + 1 * 60 + 55 - (6 * 3600 + 13 * 60 + 3)) * 1000LL);
  EXPECT_EQ(w->jobs[0].work, 66000);
  EXPECT_EQ(one.runtime, 66000);
  EXPECT_EQ(spec.tenants[one.tenant.value()].path, "philly/6c71a0");
  ASSERT_EQ(one.task_groups.size(), 1u);
  EXPECT_EQ(one.task_groups[0].count, 1);
  EXPECT_EQ(one.task_groups[0].request.devices.count, 1);

  const Job& eight = w->jobs[1].job;
  EXPECT_EQ(eight.submit_time, 0);  // the earliest row
  EXPECT_EQ(spec.tenants[eight.tenant.value()].path, "philly/11cb48");
  EXPECT_EQ(eight.task_groups[0].count, 1);  // one server of 8
  EXPECT_EQ(eight.task_groups[0].request.devices.count, 8);
  EXPECT_EQ(eight.task_groups[0].request.cpu, 8 * kMilliPerUnit);

  const Job& big = w->jobs[2].job;
  EXPECT_EQ(big.submit_time, 24 * 3600 * 1000LL);  // a day after the earliest
  EXPECT_EQ(w->jobs[2].work, 100500);
  EXPECT_EQ(big.task_groups[0].count, 4);  // 32 GPUs: four servers of 8
  EXPECT_EQ(big.task_groups[0].request.devices.count, 8);
  EXPECT_EQ(big.gang.prefer, TopologyLevel::kLeaf);

  const Job& odd = w->jobs[3].job;  // 12 GPUs do not cut into servers of 8: one-GPU tasks
  EXPECT_EQ(odd.task_groups[0].count, 12);
  EXPECT_EQ(odd.task_groups[0].request.devices.count, 1);
  EXPECT_EQ(spec.tenants[odd.tenant.value()].path, "default");  // no tenant named ffffff
  bool noted = false;
  for (const std::string& n : w->notes)
    noted |= n.find("virtual cluster ffffff: 1 jobs, tenant default (no tenant named ffffff)") !=
             std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Philly, OneVirtualClusterStartsAtItsOwnFirstArrival) {
  auto w = Parse(
      "2017-10-09 06:00:00,5,1,5,11cb48\n"
      "2017-10-09 07:00:00,5,1,5,6c71a0\n"
      "2017-10-09 07:30:00,5,2,10,6c71a0\n",
      "6c71a0");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->jobs.size(), 2u);
  EXPECT_EQ(w->jobs[0].job.submit_time, 0);
  EXPECT_EQ(w->jobs[1].job.submit_time, 30 * 60 * 1000LL);
  EXPECT_EQ(w->jobs[1].job.labels.at("virtual_cluster"), "6c71a0");

  auto none = Parse("2017-10-09 06:00:00,5,1,5,11cb48\n", "abcdef");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no virtual cluster \"abcdef\" (the trace has 11cb48)"),
            std::string::npos)
      << none.status().message();
}

TEST(Philly, BadRowsAreErrorsWithTheirLineAndField) {
  auto w = Parse(
      "2017-10-09 06:00:00,5,1,5,11cb48\n"
      "2017-13-09 06:00:00,5,1,5,11cb48\n"
      "2017-10-09 06:00:00,0,1,0,11cb48\n"
      "2017-10-09 06:00:00,5,0,5,11cb48\n"
      "2017-10-09 06:00:00,-5,1,5,11cb48\n"
      "2017-10-09 06:00:00,5,1,5,\n");
  ASSERT_FALSE(w.ok());
  const std::string& m = w.status().message();
  EXPECT_NE(m.find("philly.csv:3: column timestamp: expected a time like 2017-10-09 07:01:55"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("philly.csv:4: column duration: expected a duration above 0 seconds"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("philly.csv:5: column num_gpus"), std::string::npos) << m;
  EXPECT_NE(m.find("philly.csv:6: column duration"), std::string::npos) << m;
  EXPECT_NE(m.find("philly.csv:7: column cluster"), std::string::npos) << m;

  auto columns = ParsePhillyJobs(PhillyFleet(), "philly.csv", "time,duration\n1,2\n", {});
  ASSERT_FALSE(columns.ok());
  EXPECT_NE(columns.status().message().find("timestamp"), std::string::npos)
      << columns.status().message();
  auto empty = Parse("");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("no jobs"), std::string::npos);
}

}  // namespace
}  // namespace tessera
