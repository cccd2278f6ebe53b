// Output formats shared by the commands: -o table|json|yaml. Commands build a JSON document
// (the stable, documented shape) and a table renderer for people; YAML is the JSON document
// re-emitted.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tessera::cli {

enum class OutputFormat { kTable, kJson, kYaml };
std::optional<OutputFormat> ParseOutputFormat(const std::string& s);

// Writes `doc` as YAML (block style, keys in the document's order).
void WriteYaml(const nlohmann::ordered_json& doc, std::ostream& out);

// A count with thousands separators: 4125 -> "4,125".
std::string Thousands(int64_t n);

// A plain text table: columns padded to their widest cell, numbers right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Write(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tessera::cli
