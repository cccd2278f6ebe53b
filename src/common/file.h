// Reading whole input files with a size limit, so that a wrong path (a device such as
// /dev/zero, a multi-gigabyte dump) is an error naming the file and the limit, never an
// exhausted memory.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

// Limits per kind of input (docs/cli.md#input-limits).
inline constexpr size_t kMaxConfigFileBytes = size_t{64} << 20;  // one YAML file
inline constexpr size_t kMaxTraceFileBytes = size_t{256} << 20;  // a CSV, trace or schedule

// The file's bytes. NotFound when it cannot be opened, InvalidArgument when it is a directory
// or longer than `max_bytes` (read no further than that), Unavailable on a read error.
// Messages start with the path.
Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes);

}  // namespace tessera
