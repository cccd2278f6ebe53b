// What the store tests share: a small job row.
#pragma once

#include <cstdint>
#include <string>

#include "store/rows.h"

namespace tessera::testing {

// A job row with id `id` and name `name`, of tenant "t", submitted by "p" with an empty body.
inline StoredJob JobNamed(int64_t id, const std::string& name) {
  StoredJob j;
  j.id = id;
  j.name = name;
  j.tenant = "t";
  j.body = "{}";
  j.principal = "p";
  return j;
}

}  // namespace tessera::testing
