// Parsers for the tenant tree and priority classes.
#include "config/parse.h"

namespace tessera::config_internal {

void ParseTenant(YamlMap& m, std::optional<TenantId> parent) {
  SpecBuilder& b = m.builder();
  const auto id = TenantId(static_cast<uint32_t>(b.spec.tenants.size()));
  b.spec.tenants.emplace_back();
  b.tenant_paths.push_back(m.path());
  {
    Tenant& t = b.spec.tenants[id.value()];
    t.parent = parent;
    t.name = m.Str("name", Need::kRequired).value_or("");
    if (t.name.find('/') != std::string::npos) {
      m.ErrorAt("name", "a tenant name must not contain \"/\"; nest tenants with \"children\"");
    }
    t.path = parent ? b.spec.tenants[parent->value()].path + "/" + t.name : t.name;
    if (parent) b.spec.tenants[parent->value()].children.push_back(id);
    t.labels = m.Labels("labels");
    if (auto budget = m.MilliValue("budgetPerDay")) t.budget_per_day = *budget;
  }
  b.spec.tenants[id.value()].run_as = ParseRunAs(m);
  // quotas: {MODEL: {guaranteed, limit, borrow, lend}}
  m.Entries("quotas", [&](const std::string& model, const YAML::Node& n, const FieldPath& p) {
    YamlMap qm(b, m.file(), n, p, "a quota");
    if (!qm.ok()) return;
    Quota q;
    q.guaranteed = qm.MilliValue("guaranteed").value_or(0);
    if (auto l = qm.MilliValue("limit")) q.limit = *l;
    q.borrow = qm.Bool("borrow").value_or(true);
    q.lend = qm.Bool("lend").value_or(true);
    size_t qi = b.spec.tenants[id.value()].quotas.size();
    b.spec.tenants[id.value()].quotas.push_back(q);
    b.AddRef(RefKind::kDeviceModel, model, p, qm.pos(), [id, qi](Spec& s, uint32_t mid) {
      s.tenants[id.value()].quotas[qi].model = DeviceModelId(mid);
    });
  });
  m.List("children", Need::kOptional, [&](const YAML::Node& n, const FieldPath& p, size_t) {
    YamlMap cm(b, m.file(), n, p, "a tenant");
    if (cm.ok()) ParseTenant(cm, id);
  });
}

void ParsePriorityClass(YamlMap& m, PriorityClass& out) {
  out.name = m.Str("name", Need::kRequired).value_or("");
  out.value = static_cast<int32_t>(m.Int("value", -1000000, 1000000, Need::kRequired).value_or(0));
  out.preemptible = m.Bool("preemptible").value_or(false);
  out.min_run = m.Duration("minRunTime");
}

std::optional<RunAs> ParseRunAs(YamlMap& m) {
  auto n = m.Node("runAs", Need::kOptional);
  if (!n) return std::nullopt;
  YamlMap rm(m.builder(), m.file(), *n, m.path().Field("runAs"), "a runAs {user, group}");
  if (!rm.ok()) return std::nullopt;
  RunAs r;
  r.user = rm.Str("user", Need::kRequired).value_or("");
  r.group = rm.Str("group").value_or("");
  const char* kName = "a host account name ([a-z_][a-z0-9_.-]*, at most 32 characters)";
  if (!r.user.empty() && !ValidHostAccountName(r.user)) {
    rm.ErrorAt("user", "\"" + r.user + "\" is not " + kName);
  }
  if (!r.group.empty() && !ValidHostAccountName(r.group)) {
    rm.ErrorAt("group", "\"" + r.group + "\" is not " + kName);
  }
  if (r.user.empty()) return std::nullopt;
  return r;
}

}  // namespace tessera::config_internal
