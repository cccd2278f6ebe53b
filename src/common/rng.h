// The Rng port: every random choice in Tessera draws from an injected generator, so the same
// seed gives the same decisions byte for byte on every platform. The standard library's
// distributions are implementation-defined, so the helpers here are written out.
//
// Thread-safety: none; each owner (one scheduler worker, one simulation) has its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera {

class Rng {
 public:
  virtual ~Rng() = default;
  // 64 uniformly random bits.
  virtual uint64_t Next() = 0;

  // Uniform in [0, n), n > 0, without modulo bias (Lemire's method).
  uint64_t Uniform(uint64_t n);
  // Uniform in [0, 1) with 53 bits of precision.
  double UniformDouble();
  // Fisher-Yates shuffle of indices.
  template <class T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      size_t j = static_cast<size_t>(Uniform(i));
      std::swap(v[i - 1], v[j]);
    }
  }
};

// xoshiro256** seeded through splitmix64: fast, well tested, and fully specified.
class SeededRng final : public Rng {
 public:
  explicit SeededRng(uint64_t seed);
  uint64_t Next() override;

 private:
  uint64_t s_[4];
};

}  // namespace tessera
