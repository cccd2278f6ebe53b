// Strong typed ids: a NodeId cannot be passed where a ClusterId is expected. Ids are dense
// indices into the vectors of the structure that issued them (a Fleet, a CellState), so they
// are only meaningful together with that structure; there is no process-wide interning.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace tessera {

template <class Tag>
class Id {
 public:
  using Value = uint32_t;
  static constexpr Value kInvalid = std::numeric_limits<Value>::max();

  constexpr Id() = default;
  constexpr explicit Id(Value v) : v_(v) {}
  constexpr Value value() const { return v_; }
  constexpr bool valid() const { return v_ != kInvalid; }
  friend constexpr auto operator<=>(Id, Id) = default;

 private:
  Value v_ = kInvalid;
};

using RegionId = Id<struct RegionTag>;
using ClusterId = Id<struct ClusterTag>;
using NodeId = Id<struct NodeTag>;
using DeviceModelId = Id<struct DeviceModelTag>;
using DatasetId = Id<struct DatasetTag>;
using TenantId = Id<struct TenantTag>;
using JobId = Id<struct JobTag>;

}  // namespace tessera

template <class Tag>
struct std::hash<tessera::Id<Tag>> {
  size_t operator()(tessera::Id<Tag> id) const noexcept {
    return std::hash<uint32_t>()(id.value());
  }
};
