#include "sched/model_order.h"

#include <bit>

namespace tessera {

ModelOrder SpeedOrder(const std::vector<uint16_t>& preferred, ModelMask mine, bool contended) {
  ModelOrder order;
  for (uint16_t m : preferred) {
    if ((mine >> m) & 1) {
      order.masks.push_back(ModelMask{1} << m);
      order.whys.push_back(contended ? "each model is tried apart, where the job gains most first"
                                     : "each model is tried apart, the job's fastest first");
    }
  }
  if (std::popcount(mine) > 1) {
    order.masks.push_back(mine);
    order.mixed_last = true;
  }
  return order;
}

ModelOrder AgnosticOrder(ModelMask mine, ModelMask whole, ModelMask own, bool single_task) {
  ModelOrder order;
  if (own != 0 && own != whole) {
    order.masks.push_back(own);
    order.whys.push_back("the models within the tenant's guarantee are tried first");
  }
  if (whole != 0) {
    order.masks.push_back(whole);
    order.whys.push_back("the models the quota admits the whole job on are tried first");
  }
  if (whole == mine) return order;
  order.masks.push_back(mine);
  order.whys.push_back(nullptr);
  order.mixed_last = order.masks.size() > 1 && single_task;
  return order;
}

}  // namespace tessera
