#include "clock/global_clock.h"

#include <cstring>

namespace htrace::clock {
namespace {
constexpr std::uint32_t kMagic = 0x48434c4b; // "HCLK"
constexpr std::size_t kModelBytes = 8 + 8 + 8;

template <typename T> void put(std::vector<std::uint8_t>& out, T v) {
  std::uint8_t raw[sizeof v];
  std::memcpy(raw, &v, sizeof v);
  out.insert(out.end(), raw, raw + sizeof v);
}
template <typename T> T get(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
} // namespace

std::int64_t GlobalClock::to_global(std::int64_t local) const {
  std::int64_t t = local;
  for (const auto& m : models_)
    t = m.to_reference(t);
  return t;
}

GlobalClock GlobalClock::with(const LinearModel& model) const {
  GlobalClock c = *this;
  c.models_.push_back(model);
  return c;
}

GlobalTimeMap GlobalClock::to_time_map(std::int64_t origin_ns) const {
  GlobalTimeMap map;
  map.origin_ns = origin_ns;
  map.offset_at_origin_ns = origin_ns - to_global(origin_ns);
  double factor = 1.0;
  for (const auto& m : models_)
    factor *= 1.0 - m.slope;
  map.slope = 1.0 - factor;
  return map;
}

std::vector<std::uint8_t> GlobalClock::flatten() const {
  std::vector<std::uint8_t> out;
  put(out, kMagic);
  put(out, static_cast<std::uint32_t>(models_.size()));
  for (const auto& m : models_) {
    put(out, m.origin_ns);
    put(out, m.offset_at_origin_ns);
    put(out, m.slope);
  }
  return out;
}

bool GlobalClock::unflatten(const std::vector<std::uint8_t>& bytes, TimeSource base,
                            GlobalClock& out, std::string& error) {
  if (bytes.size() < 8 || get<std::uint32_t>(bytes.data()) != kMagic) {
    error = "flattened clock: bad header";
    return false;
  }
  const std::uint32_t n = get<std::uint32_t>(bytes.data() + 4);
  if (bytes.size() != 8 + n * kModelBytes) {
    error = "flattened clock: size does not match its model count";
    return false;
  }
  std::vector<LinearModel> models(n);
  const std::uint8_t* p = bytes.data() + 8;
  for (auto& m : models) {
    m.origin_ns = get<std::int64_t>(p);
    m.offset_at_origin_ns = get<std::int64_t>(p + 8);
    m.slope = get<double>(p + 16);
    p += kModelBytes;
  }
  out = GlobalClock(std::move(base), std::move(models));
  return true;
}

} // namespace htrace::clock
