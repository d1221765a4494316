#include "vite_export_events.h"

#include "format/error.h"
#include "format/event_file_encoder.h"
#include "format/record_tables.h"
#include "vite_contents.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <utility>

namespace htrace::report {
namespace {

/// A Metric record's metric, its first field (a compressed integer); false if it leaves the
/// record.
bool metric_of(const format::RawEvent& e, OTF2_MetricRef* metric) {
  const uint8_t* p = e.fields;
  if (p >= e.end) return false;
  const uint8_t n = *p++;
  if (n == 0xff) {
    *metric = OTF2_UNDEFINED_METRIC;
    return true;
  }
  if (n > sizeof(OTF2_MetricRef) || n > e.end - p) return false;
  uint32_t v = 0;
  std::memcpy(&v, p, n); // little-endian, like the file
  *metric = v;
  return true;
}

void ignore_event(void*, OTF2_TimeStamp, int) {}

std::string cannot_write(const format::EventFileEncoder& file, const std::string& out) {
  return "'" + out + "': cannot write the events: " + std::strerror(file.error());
}

} // namespace

LeftOutEvents::LeftOutEvents()
    : by_type(static_cast<std::size_t>(format::event_record_type_count())) {}

void LeftOutEvents::add(const LeftOutEvents& o) {
  for (std::size_t type = 0; type < by_type.size(); ++type)
    by_type[type] += o.by_type[type];
  instance_metrics += o.instance_metrics;
  unknown += o.unknown;
}

ViteRecordRule::ViteRecordRule(std::set<OTF2_MetricRef> instances)
    : metric_type_(-1), instances_(std::move(instances)) {
  for (int type = 0; type < format::event_record_type_count(); ++type) {
    const std::string_view name = format::event_record_name(type);
    carried_.push_back(vite_carries_event(name));
    if (name == "Metric") metric_type_ = type;
  }
}

std::optional<std::uint64_t> copy_vite_events(const format::MappedFile& in, const std::string& out,
                                              int out_created, std::size_t chunk_size,
                                              const ViteRecordRule& rule, const LocationMaps& maps,
                                              LeftOutEvents& left_out) {
  format::EventFileEncoder file;
  if (!file.open(out, chunk_size, nullptr, out_created)) {
    errno = file.error();
    throw output_error("'" + out + "': cannot create: " + std::strerror(errno));
  }
  format::EventFileParser parser(in.data(), in.size(), chunk_size);
  const int known_types = format::event_record_type_count();
  LeftOutEvents dropped;
  const format::IdMaps* metric_maps = nullptr;
  std::uint64_t kept = 0, position = 0;
  bool exact = true, written = true;
  static const format::EventDecodeCallbacks kCheckOnly; // fields checked, none delivered
  const bool read = parser.for_each([&](const format::RawEvent& e) {
    // Every record checked as OTF2's reader checks it, kept or not: a copy must read as the
    // original does, and a record OTF2 refuses is left to OTF2's path to report.
    if (format::decode_event(e, in.data(), ++position, kCheckOnly, ignore_event, 0, nullptr))
      return exact = false;
    if (e.type >= known_types) {
      ++dropped.unknown;
      return true;
    }
    if (!rule.carries(e.type)) {
      ++dropped.by_type[static_cast<std::size_t>(e.type)];
      return true;
    }
    if (rule.is_metric(e.type) && rule.has_instances()) {
      // The record names its metric by local id: the location's METRIC table gives the global.
      OTF2_MetricRef metric = 0;
      if (!metric_maps) metric_maps = maps();
      if (!metric_maps || !metric_of(e, &metric)) return exact = false;
      if (rule.is_instance(
              static_cast<OTF2_MetricRef>(metric_maps->map(OTF2_MAPPING_METRIC, metric)))) {
        ++dropped.instance_metrics;
        return true;
      }
    }
    ++kept;
    return written =
               file.append_encoded(e.time, e.begin, static_cast<std::size_t>(e.end - e.begin));
  });
  if (!written && file.error() != E2BIG) throw output_error(cannot_write(file, out));
  if (read && exact && written) {
    if (!file.finish()) throw output_error(cannot_write(file, out));
    left_out.add(dropped);
    return kept;
  }
  ::unlink(out.c_str());
  return std::nullopt;
}

} // namespace htrace::report
