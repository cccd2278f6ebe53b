// Writing a Spec's resource sections back as Tessera YAML: currency, deviceModels, regions,
// links, clusters (with nodeGroups and single nodes) and datasets. Tenants, policies and
// workloads are not written.
//
// The contract is a round trip: LoadSpecTexts of the output gives the same fleet: the same
// catalog, regions, links, clusters, nodes (names, resources, labels, devices and islands,
// and which nodes share a leaf or spine switch) and datasets. Nodes expanded from a node group
// are written as the group, not one by one. Quantities use the loader's notation (FormatMilli,
// FormatMemory, ...); quoting is yaml-cpp's emitter's.
//
// Single nodes are written as flow mappings, one line per node, so a fleet of thousands of
// imported nodes stays readable and diffable.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "model/spec.h"

namespace tessera {

struct YamlWriteOptions {
  // Lines written as `# ...` comments before the document (provenance, assumptions).
  std::vector<std::string> header_comment;
};

// InvalidArgument for what the YAML schema cannot express: a single node whose devices are of
// several models or whose islands are not equal runs of devices.
Result<std::string> WriteFleetYaml(const Spec& spec, const YamlWriteOptions& options = {});

}  // namespace tessera
