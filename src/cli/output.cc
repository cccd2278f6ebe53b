#include "cli/output.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>

namespace tessera::cli {

std::optional<OutputFormat> ParseOutputFormat(const std::string& s) {
  if (s == "table") return OutputFormat::kTable;
  if (s == "json") return OutputFormat::kJson;
  if (s == "yaml") return OutputFormat::kYaml;
  return std::nullopt;
}

namespace {

void Emit(YAML::Emitter& e, const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::object:
      e << YAML::BeginMap;
      for (const auto& [k, v] : j.items()) {
        e << YAML::Key << k << YAML::Value;
        Emit(e, v);
      }
      e << YAML::EndMap;
      break;
    case nlohmann::ordered_json::value_t::array:
      e << YAML::BeginSeq;
      for (const auto& v : j)
        Emit(e, v);
      e << YAML::EndSeq;
      break;
    case nlohmann::ordered_json::value_t::string:
      e << j.get<std::string>();
      break;
    case nlohmann::ordered_json::value_t::null:
      e << YAML::Null;
      break;
    default:
      e << j.dump();
      break;  // numbers and booleans as JSON writes them
  }
}

bool Numeric(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '%';
  });
}

}  // namespace

void WriteYaml(const nlohmann::ordered_json& doc, std::ostream& out) {
  YAML::Emitter e;
  Emit(e, doc);
  out << e.c_str() << "\n";
}

void Table::Write(std::ostream& out, const std::string& indent) const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(header_);
  for (const auto& r : rows_)
    measure(r);
  auto line = [&](const std::vector<std::string>& row, bool header) {
    std::string s = indent;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      std::string pad(width[i] - cell.size(), ' ');
      bool right = !header && Numeric(cell);
      s += right ? pad + cell : cell + pad;
      if (i + 1 < width.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ')
      s.pop_back();
    out << s << "\n";
  };
  line(header_, true);
  for (const auto& r : rows_)
    line(r, false);
}

std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace tessera::cli
