// Internal to config: the parsers for each top-level section of a Tessera YAML file. Each
// appends to the builder's Spec, records source positions, reports errors and registers the
// references it cannot resolve yet.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "config/builder.h"
#include "config/yaml_map.h"

namespace tessera::config_internal {

// A whole file: its top-level mapping of sections.
void ParseDocument(SpecBuilder& b, const std::string& file, const YAML::Node& root);

void ParseDeviceModel(YamlMap& m, DeviceModel& out);
void ParseRegion(YamlMap& m, Region& out);
void ParseLink(YamlMap& m, size_t index);
void ParseCluster(YamlMap& m, size_t index);
void ParseDataset(YamlMap& m, size_t index);
// Appends the tenant and its subtree (pre-order) under `parent`.
void ParseTenant(YamlMap& m, std::optional<TenantId> parent);
// runAs: {user, group}, when the mapping has one.
std::optional<RunAs> ParseRunAs(YamlMap& m);
void ParsePriorityClass(YamlMap& m, PriorityClass& out);
void ParsePolicyRule(YamlMap& m, size_t index);
// The `scheduler` section: the queue's policy and the placement scorer (once in the files).
void ParseScheduler(YamlMap& m);
void ParseJob(YamlMap& m, size_t index);
void ParseService(YamlMap& m, size_t index);

// A task's resources: cpu, memory, devices. `assign_model` stores a resolved model id into
// the k-th ModelChoice of the request.
using RequestAccessor = std::function<TaskRequest&(Spec&)>;
void ParseTaskRequest(YamlMap& m, const RequestAccessor& request);

// A reference to a named entity, resolved after every file is read.
void ParseRef(YamlMap& m, std::string_view key, RefKind kind, Need need,
              std::function<void(Spec&, uint32_t)> assign);
// A list of references.
void ParseRefList(YamlMap& m, std::string_view key, RefKind kind,
                  std::function<void(Spec&, size_t, uint32_t)> assign, size_t* count);

// A YAML timestamp "2026-12-10T08:00:00Z" in ms since the Unix epoch.
std::optional<TimeMs> ParseTimestamp(std::string_view text);

}  // namespace tessera::config_internal
