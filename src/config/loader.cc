#include "config/loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/file.h"
#include "config/builder.h"
#include "config/parse.h"
#include "config/resolve.h"
#include "config/yaml_map.h"

namespace tessera {
namespace {

using config_internal::SpecBuilder;

// yaml-cpp recurses once per nesting level and has no limit of its own; a hostile or broken
// file with thousands of open brackets would exhaust the stack. No Tessera config comes close
// to this depth.
constexpr int kMaxNesting = 64;

bool TooDeep(const std::string& text) {
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return true;
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
  }
  // Block nesting: deeply indented lines.
  size_t indent = 0;
  bool at_line_start = true;
  for (char c : text) {
    if (c == '\n') {
      indent = 0;
      at_line_start = true;
    } else if (at_line_start && (c == ' ' || c == '-')) {
      if (++indent > 4 * kMaxNesting) return true;
    } else {
      at_line_start = false;
    }
  }
  return false;
}

// The line (1-based) of a second YAML document ("---" after content), or 0. Files hold one
// document each: yaml-cpp 0.7's LoadAll can loop forever on some malformed input (fixed
// upstream in 2024), so Tessera parses one document with YAML::Load, and must not silently
// drop the documents after the first.
int SecondDocumentLine(const std::string& text) {
  bool content = false;
  int line = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + start, end - start);
    ++line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    bool separator = l == "---" || l.rfind("--- ", 0) == 0 || l == "...";
    if (separator && content) return line;
    size_t first = l.find_first_not_of(" \t");
    if (!separator && first != std::string_view::npos && l[first] != '#') content = true;
    start = end + 1;
  }
  return 0;
}

// The text's one YAML document, or nothing (with the error reported).
std::optional<YAML::Node> ReadDocument(SpecBuilder& b, const SourceText& src) {
  if (TooDeep(src.text)) {
    b.diags.Error({src.name, 1, 1}, "",
                  "the document nests deeper than " + std::to_string(kMaxNesting) + " levels");
    b.unreadable_file = true;
    return std::nullopt;
  }
  if (int line = SecondDocumentLine(src.text)) {
    b.diags.Error({src.name, line, 1}, "",
                  "a file holds one YAML document; put the document that starts here in a "
                  "file of its own");
    b.unreadable_file = true;
    return std::nullopt;
  }
  try {
    return YAML::Load(src.text);
  } catch (const YAML::Exception& e) {
    SourcePos pos{src.name, e.mark.is_null() ? 0 : e.mark.line + 1,
                  e.mark.is_null() ? 0 : e.mark.column + 1};
    b.diags.Error(pos, "", "YAML syntax error: " + e.msg);
    b.unreadable_file = true;
    return std::nullopt;
  }
}

// Runs `parse`, reporting what yaml-cpp throws on shapes we do not anticipate (e.g. aliases to
// odd nodes) as an error of the file.
template <typename Parse>
void Guarded(SpecBuilder& b, const SourceText& src, Parse&& parse) {
  try {
    parse();
  } catch (const YAML::Exception& e) {
    SourcePos pos{src.name, e.mark.is_null() ? 0 : e.mark.line + 1,
                  e.mark.is_null() ? 0 : e.mark.column + 1};
    b.diags.Error(pos, "", "unreadable YAML: " + e.msg);
  }
}

void ParseText(SpecBuilder& b, const SourceText& src) {
  std::optional<YAML::Node> doc = ReadDocument(b, src);
  if (!doc) return;
  Guarded(b, src, [&] { config_internal::ParseDocument(b, src.name, *doc); });
}

LoadResult Finish(SpecBuilder& b) {
  // Resolution and semantic checks run even after syntax errors, so one run reports every
  // error; they skip what failed to parse.
  if (!b.unreadable_file) config_internal::ResolveAndValidate(b);
  LoadResult r;
  if (b.diags.empty()) {
    r.spec = std::move(b.spec);
  }
  r.diagnostics = std::move(b.diags);
  return r;
}

}  // namespace

LoadResult LoadSpecTexts(const std::vector<SourceText>& sources) {
  SpecBuilder b;
  for (const SourceText& s : sources)
    ParseText(b, s);
  return Finish(b);
}

namespace {

// A JSON document as the yaml-cpp nodes the parsers read, built by nlohmann's SAX parser: the
// API's bodies are JSON, which yaml-cpp's scanner reads several times slower. Numbers keep
// their text; duplicate keys are kept (the parsers report them). A document that is not JSON,
// or nests too deep, is refused (the YAML reader then takes it and says why).
class JsonToYaml final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<YAML::Node> Take() {
    return done_ ? std::optional<YAML::Node>(root_) : std::nullopt;
  }

  bool null() override { return Add(YAML::Node(YAML::NodeType::Null)); }
  bool boolean(bool v) override { return Add(YAML::Node(v ? "true" : "false")); }
  bool number_integer(number_integer_t v) override { return Add(YAML::Node(std::to_string(v))); }
  bool number_unsigned(number_unsigned_t v) override { return Add(YAML::Node(std::to_string(v))); }
  bool number_float(number_float_t, const string_t& text) override { return Add(YAML::Node(text)); }
  bool string(string_t& v) override { return Add(YAML::Node(v)); }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return Open(YAML::NodeType::Map); }
  bool key(string_t& k) override {
    keys_.back() = k;
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(YAML::NodeType::Sequence); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool Open(YAML::NodeType::value type) {
    if (open_.size() >= static_cast<size_t>(kMaxNesting)) return false;
    open_.emplace_back(type);
    keys_.emplace_back();
    return true;
  }
  bool Close() {
    YAML::Node n = open_.back();
    open_.pop_back();
    keys_.pop_back();
    return Add(n);
  }
  bool Add(const YAML::Node& n) {
    if (open_.empty()) {
      root_ = n;
      done_ = true;
    } else if (open_.back().IsSequence()) {
      open_.back().push_back(n);
    } else {
      open_.back().force_insert(keys_.back(), n);
    }
    return true;
  }

  std::vector<YAML::Node> open_;   // the containers being filled, outermost first
  std::vector<std::string> keys_;  // by container: the key of the value to come
  YAML::Node root_;
  bool done_ = false;
};

// The body as nodes when it is JSON; nullopt otherwise.
std::optional<YAML::Node> JsonDocument(const std::string& text) {
  JsonToYaml handler;
  if (!nlohmann::json::sax_parse(text, &handler)) return std::nullopt;
  return handler.Take();
}

// One job or service of a submission, parsed and checked against `context`: the builder
// holds it (as jobs[0] or services[0]) and the diagnostics. `given`: the body's document,
// already read (else it is read as YAML here).
void LoadOne(SpecBuilder& b, const SourceText& body, bool service,
             std::optional<YAML::Node> given = std::nullopt) {
  const char* list = service ? "services" : "jobs";
  if (std::optional<YAML::Node> doc = given ? std::move(given) : ReadDocument(b, body)) {
    Guarded(b, body, [&] {
      if (service) {
        b.spec.services.emplace_back();
      } else {
        b.spec.jobs.emplace_back();
      }
      config_internal::YamlMap m(b, body.name, *doc, {"", std::string(list) + "[0]"},
                                 service ? "a service" : "a job");
      if (!m.ok()) return;
      if (service) {
        config_internal::ParseService(m, 0);
      } else {
        config_internal::ParseJob(m, 0);
      }
    });
  }
  const bool parsed = service ? !b.spec.services.empty() : !b.spec.jobs.empty();
  if (!b.unreadable_file && parsed) config_internal::ResolveRefs(b);
  if (b.diags.empty()) {
    const std::string& name = service ? b.spec.services.front().name : b.spec.jobs.front().name;
    if (!config_internal::IsValidName(name)) {
      b.ErrorAt(std::string(list) + "[0].name",
                "invalid name \"" + name +
                    "\"; expected letters, digits, '.', '_' or '-', starting with a letter or "
                    "digit, at most 63 characters");
    }
    config_internal::ValidateWorkloads(b);
  }
}

// One submitted job or service, read into a builder: a JSON body by the JSON reader; any other
// body, or a JSON body with an error, by the YAML reader, which knows the errors' lines and
// columns.
SpecBuilder ReadSubmission(const Spec& context, const SourceText& body, bool service) {
  if (std::optional<YAML::Node> doc = JsonDocument(body.text)) {
    SpecBuilder fast;
    fast.context = &context;
    LoadOne(fast, body, service, std::move(doc));
    if (fast.diags.empty()) return fast;
  }
  SpecBuilder b;
  b.context = &context;
  LoadOne(b, body, service);
  return b;
}

}  // namespace

JobLoad LoadJobText(const Spec& context, const SourceText& body) {
  SpecBuilder b = ReadSubmission(context, body, false);
  JobLoad out;
  if (b.diags.empty()) out.job = std::move(b.spec.jobs.front());
  out.diagnostics = std::move(b.diags);
  return out;
}

ServiceLoad LoadServiceText(const Spec& context, const SourceText& body) {
  SpecBuilder b = ReadSubmission(context, body, true);
  ServiceLoad out;
  if (b.diags.empty()) out.service = std::move(b.spec.services.front());
  out.diagnostics = std::move(b.diags);
  return out;
}

LoadResult LoadSpecFiles(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<SourceText> sources;
  Diagnostics io_errors;
  std::set<std::string> seen;  // a file named twice (directly or through a directory) loads once
  auto read = [&](const std::string& path) {
    std::error_code canon_error;
    std::string canonical = std::filesystem::weakly_canonical(path, canon_error).string();
    if (!seen.insert(canon_error ? path : canonical).second) return;
    Result<std::string> text = ReadFileBounded(path, kMaxConfigFileBytes);
    if (!text.ok()) {
      std::string message = text.status().message();
      if (message.rfind(path + ": ", 0) == 0) message = message.substr(path.size() + 2);
      io_errors.Error({path, 0, 0}, "", message);
      return;
    }
    sources.push_back({path, std::move(*text)});
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        auto ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
          files.push_back(e.path().string());
        }
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) io_errors.Error({p, 0, 0}, "", "directory holds no .yaml files");
      for (const auto& f : files)
        read(f);
    } else {
      read(p);
    }
  }
  if (!io_errors.empty()) return LoadResult{std::nullopt, std::move(io_errors)};
  return LoadSpecTexts(sources);
}

}  // namespace tessera
