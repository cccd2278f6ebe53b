#include "model/tenant.h"

namespace tessera {

const Quota* Tenant::QuotaFor(DeviceModelId model) const {
  for (const Quota& q : quotas) {
    if (q.model == model) return &q;
  }
  return nullptr;
}

}  // namespace tessera
