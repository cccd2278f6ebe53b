#include "sim/failures.h"

#include <cmath>

#include "config/csv.h"

namespace tessera {

Result<std::vector<NodeOutage>> ParseOutageSchedule(const std::string& name, std::string_view text,
                                                    const CellState& cell) {
  auto table = CsvTable::Parse(name, text);
  if (!table.ok()) return table.status();
  TESSERA_RETURN_IF_ERROR(table->RequireColumns({"time_s", "node", "down_s"}));
  std::map<std::string, uint32_t, std::less<>> by_name;
  for (uint32_t i = 0; i < cell.node_count(); ++i)
    by_name[cell.node_name(i)] = i;
  std::vector<NodeOutage> out;
  CsvErrors errors;
  for (size_t i = 0; i < table->size(); ++i) {
    CsvRow row = table->row(i);
    auto t = row.Int("time_s", 0);
    auto node = row.NonEmpty("node");
    auto down = row.Int("down_s", 1);
    if (!t.ok() || !node.ok() || !down.ok()) {
      errors.Add(!t.ok() ? t.status() : !node.ok() ? node.status() : down.status());
      continue;
    }
    auto it = by_name.find(*node);
    if (it == by_name.end()) {
      errors.Add(row.ErrorAt(*table->Column("node"),
                             "no node \"" + std::string(*node) + "\" in the fleet"));
      continue;
    }
    out.push_back({*t * 1000, it->second, *down * 1000});
  }
  TESSERA_RETURN_IF_ERROR(errors.ToStatus(name));
  return out;
}

Result<std::map<DeviceModelId, Millis>> ParseMtbf(const Spec& spec, std::string_view text) {
  std::map<DeviceModelId, Millis> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
    pos = comma == std::string_view::npos ? text.size() : comma + 1;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return InvalidArgument("--mtbf: expected MODEL=DURATION, got \"" + std::string(item) + "\"");
    auto model = spec.FindModel(item.substr(0, eq));
    if (!model)
      return InvalidArgument("--mtbf: no device model \"" + std::string(item.substr(0, eq)) +
                             "\" in the fleet");
    auto d = ParseDuration(item.substr(eq + 1));
    if (!d.ok() || *d <= 0)
      return InvalidArgument("--mtbf: " + std::string(item.substr(0, eq)) +
                             ": expected a duration > 0 such as 30d");
    out[*model] = *d;
  }
  return out;
}

FailureInjector::FailureInjector(const FailureModel& model, const CellState& cell, uint64_t seed)
    : model_(model), rng_(seed) {
  for (const NodeOutage& o : model.schedule)
    heap_.push(o);
  rate_.assign(cell.node_count(), 0);
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    for (const DeviceSlot& d : cell.devices(n)) {
      auto it = model.mtbf.find(DeviceModelId(d.model));
      if (it != model.mtbf.end()) rate_[n] += 1.0 / static_cast<double>(it->second);
    }
    if (rate_[n] > 0) Draw(n, 0);
  }
}

void FailureInjector::Draw(uint32_t node, TimeMs after) {
  double gap = -std::log(1.0 - rng_.UniformDouble()) / rate_[node];
  double down = -std::log(1.0 - rng_.UniformDouble()) * static_cast<double>(model_.mttr);
  NodeOutage o;
  o.at = after + std::max<Millis>(1, std::llround(std::min(gap, 1e15)));
  o.node = node;
  o.down = std::max<Millis>(1000, std::llround(std::min(down, 1e15)));
  o.down = -o.down;  // negative: drawn (the next one follows its recovery)
  heap_.push(o);
}

NodeOutage FailureInjector::Pop() {
  NodeOutage o = heap_.top();
  heap_.pop();
  if (o.down < 0) {
    o.down = -o.down;
    Draw(o.node, o.at + o.down);
  }
  return o;
}

}  // namespace tessera
