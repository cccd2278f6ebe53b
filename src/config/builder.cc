#include "config/builder.h"

namespace tessera::config_internal {

FieldPath FieldPath::Field(std::string_view key) const {
  auto join = [&](const std::string& base) {
    return base.empty() ? std::string(key) : base + "." + std::string(key);
  };
  return {join(local), join(merged)};
}

FieldPath FieldPath::Index(size_t local_index, size_t merged_index) const {
  return {local + "[" + std::to_string(local_index) + "]",
          merged + "[" + std::to_string(merged_index) + "]"};
}

void SpecBuilder::Record(const FieldPath& path, const SourcePos& pos) {
  sources_.emplace(path.merged, SourceEntry{pos, path.local});
}

SourceEntry SpecBuilder::Locate(const std::string& merged_path) const {
  std::string p = merged_path;
  while (true) {
    auto it = sources_.find(p);
    if (it != sources_.end()) {
      SourceEntry e = it->second;
      // Show the requested path, translated into the file's own numbering where it extends
      // a recorded ancestor.
      if (p != merged_path) e.local_path += merged_path.substr(p.size());
      return e;
    }
    size_t cut = p.find_last_of(".[");
    if (cut == std::string::npos || cut == 0) break;
    p.resize(cut);
  }
  return {SourcePos{"<config>", 0, 0}, merged_path};
}

void SpecBuilder::ErrorAt(const std::string& merged_path, std::string message) {
  SourceEntry e = Locate(merged_path);
  diags.Error(e.pos, e.local_path, std::move(message));
}

void SpecBuilder::ErrorAt(const FieldPath& path, const SourcePos& pos, std::string message) {
  diags.Error(pos, path.local, std::move(message));
}

void SpecBuilder::AddRef(RefKind kind, std::string name, FieldPath path, SourcePos pos,
                         std::function<void(Spec&, uint32_t)> assign) {
  refs.push_back({kind, std::move(name), std::move(path), std::move(pos), std::move(assign)});
}

}  // namespace tessera::config_internal
