#include <ctime>

#include "config/parse.h"

namespace tessera::config_internal {

void ParseRef(YamlMap& m, std::string_view key, RefKind kind, Need need,
              std::function<void(Spec&, uint32_t)> assign) {
  auto name = m.Str(key, need);
  if (!name) return;
  FieldPath p = m.path().Field(key);
  m.builder().AddRef(kind, *name, p, m.builder().Locate(p.merged).pos, std::move(assign));
}

void ParseRefList(YamlMap& m, std::string_view key, RefKind kind,
                  std::function<void(Spec&, size_t, uint32_t)> assign, size_t* count) {
  std::vector<std::string> names = m.StrList(key);
  *count = names.size();
  FieldPath p = m.path().Field(key);
  for (size_t i = 0; i < names.size(); ++i) {
    FieldPath ip = p.Index(i);
    SourceEntry e = m.builder().Locate(ip.merged);
    m.builder().AddRef(kind, names[i], ip, e.pos,
                       [assign, i](Spec& s, uint32_t id) { assign(s, i, id); });
  }
}

std::optional<TimeMs> ParseTimestamp(std::string_view text) {
  // YYYY-MM-DD, optionally followed by THH:MM:SS and Z.
  std::tm tm{};
  int y, mo, d, h = 0, mi = 0, s = 0;
  char z = 0;
  std::string t(text);
  int n = std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z);
  bool date_only = n == 3 && t.size() == 10;
  bool full = n == 7 && z == 'Z' && t.size() == 20;
  if (!date_only && !full) return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970 || y > 9999) {
    return std::nullopt;
  }
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  std::time_t secs = timegm(&tm);
  // Reject dates that timegm silently normalises (2026-02-31 -> 2026-03-03).
  std::tm back{};
  gmtime_r(&secs, &back);
  if (back.tm_mday != d || back.tm_mon != mo - 1) return std::nullopt;
  return static_cast<TimeMs>(secs) * 1000;
}

void ParseDocument(SpecBuilder& b, const std::string& file, const YAML::Node& root) {
  if (root.IsNull()) return;  // an empty file declares nothing
  YamlMap doc(b, file, root, FieldPath{}, "a Tessera configuration file");
  if (!doc.ok()) return;
  Spec& s = b.spec;

  if (auto c = doc.Str("currency")) {
    if (b.currency_declared && *c != s.currency) {
      doc.ErrorAt("currency", "currency \"" + *c + "\" conflicts with \"" + s.currency +
                                  "\" declared in another file");
    }
    s.currency = *c;
    b.currency_declared = true;
  }
  doc.List("deviceModels", Need::kOptional, s.device_models.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t) {
             YamlMap m(b, file, n, p, "a device model");
             DeviceModel dm;
             if (m.ok()) ParseDeviceModel(m, dm);
             s.device_models.push_back(std::move(dm));
           });
  doc.List("regions", Need::kOptional, s.regions.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t) {
             YamlMap m(b, file, n, p, "a region");
             Region r;
             if (m.ok()) ParseRegion(m, r);
             s.regions.push_back(std::move(r));
           });
  doc.List("links", Need::kOptional, s.links.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t i) {
             s.links.emplace_back();
             YamlMap m(b, file, n, p, "a link");
             if (m.ok()) ParseLink(m, i);
           });
  doc.List("clusters", Need::kOptional, s.clusters.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t i) {
             s.clusters.emplace_back();
             b.single_nodes.emplace_back();
             YamlMap m(b, file, n, p, "a cluster");
             if (m.ok()) ParseCluster(m, i);
           });
  doc.List("datasets", Need::kOptional, s.datasets.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t i) {
             s.datasets.emplace_back();
             YamlMap m(b, file, n, p, "a dataset");
             if (m.ok()) ParseDataset(m, i);
           });
  // Tenants are a tree; the top-level list holds the roots. Their merged indices are those of
  // the flattened tree, so the path of a root uses its position among the roots.
  if (auto n = doc.Node("tenants", Need::kOptional)) {
    FieldPath p = doc.path().Field("tenants");
    if (!n->IsSequence()) {
      b.ErrorAt(p, PosOf(file, *n), "expected a list of tenants, got " + Describe(*n));
    } else {
      for (size_t i = 0; i < n->size(); ++i) {
        FieldPath ip{p.local + "[" + std::to_string(i) + "]",
                     "tenants@" + file + "[" + std::to_string(i) + "]"};
        YamlMap m(b, file, (*n)[i], ip, "a tenant");
        if (m.ok()) ParseTenant(m, std::nullopt);
      }
    }
  }
  doc.List("priorityClasses", Need::kOptional, s.priority_classes.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t) {
             b.priority_classes_declared = true;
             YamlMap m(b, file, n, p, "a priority class");
             PriorityClass pc;
             if (m.ok()) ParsePriorityClass(m, pc);
             s.priority_classes.push_back(std::move(pc));
           });
  doc.List("policies", Need::kOptional, s.policies.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t i) {
             s.policies.emplace_back();
             YamlMap m(b, file, n, p, "a policy rule");
             if (m.ok()) ParsePolicyRule(m, i);
           });
  if (auto n = doc.Node("scheduler", Need::kOptional)) {
    YamlMap m(b, file, *n, doc.path().Field("scheduler"), "the scheduler section");
    if (m.ok()) ParseScheduler(m);
  }
  doc.List("jobs", Need::kOptional, s.jobs.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t i) {
             s.jobs.emplace_back();
             YamlMap m(b, file, n, p, "a job");
             if (m.ok()) ParseJob(m, i);
           });
  doc.List("services", Need::kOptional, s.services.size(),
           [&](const YAML::Node& n, const FieldPath& p, size_t i) {
             s.services.emplace_back();
             YamlMap m(b, file, n, p, "a service");
             if (m.ok()) ParseService(m, i);
           });
}

}  // namespace tessera::config_internal
