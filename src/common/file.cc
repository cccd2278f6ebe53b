#include "common/file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tessera {

Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument(path + ": is a directory, expected a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  constexpr size_t kChunk = size_t{1} << 20;
  while (in) {
    size_t have = text.size();
    if (have > max_bytes) break;
    text.resize(have + kChunk);
    in.read(text.data() + have, static_cast<std::streamsize>(kChunk));
    text.resize(have + static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Unavailable(path + ": read error: " + std::strerror(errno));
  if (text.size() > max_bytes) {
    return InvalidArgument(path + ": larger than " + std::to_string(max_bytes >> 20) +
                           " MiB, the limit for this kind of input");
  }
  return text;
}

}  // namespace tessera
