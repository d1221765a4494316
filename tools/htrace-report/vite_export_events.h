// One location's events in the ViTE copy (vite_export.h), copied straight from its event file
// where format/event_file.h can parse it (POSIX substrate, no compression, little-endian: every
// htrace and Score-P archive): each kept record's bytes as they are (local ids, the times as
// recorded), the kinds vite_contents.h leaves out dropped, the rest re-chunked by format's encoder.
// The location's local definition file goes along unchanged, so an OTF2 reader of the copy
// applies its mapping tables and clock offsets as it does to the original. Through OTF2's reader
// and writer instead, each location cost a linear search of the archive's location list (in
// OTF2_Reader_SelectLocation and OTF2_Archive_GetEvtWriter: quadratic in the locations) and two
// cleared chunk buffers.
#pragma once

#include "format/event_decoder.h"
#include "format/event_file.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <otf2/otf2.h>
#include <set>
#include <string>
#include <vector>

namespace htrace::report {

/// Records left out of the copy, over all locations.
struct LeftOutEvents {
  std::vector<std::uint64_t> by_type; ///< by record type (record_tables.h numbering)
  std::uint64_t instance_metrics = 0; ///< Metric records of metric instances
  std::uint64_t unknown = 0;          ///< records of types this OTF2 does not know
  LeftOutEvents();
  void add(const LeftOutEvents& o);
};

/// Which records the copy keeps: by kind (vite_contents.h), and Metric records only of metric
/// classes.
class ViteRecordRule {
public:
  /// `instances`: the archive's metric instances (global ids).
  explicit ViteRecordRule(std::set<OTF2_MetricRef> instances);
  /// Whether records of type `type` (record_tables.h numbering, below event_record_type_count())
  /// may be kept; a Metric record then still depends on its metric.
  bool carries(int type) const { return carried_[static_cast<std::size_t>(type)]; }
  bool is_metric(int type) const { return type == metric_type_; }
  bool is_instance(OTF2_MetricRef metric) const { return instances_.count(metric) != 0; }
  bool has_instances() const { return !instances_.empty(); }

private:
  std::vector<bool> carried_;
  int metric_type_;
  std::set<OTF2_MetricRef> instances_;
};

/// A location's mapping tables, asked for only when a Metric record's metric must be known
/// globally (the archive has metric instances); nullptr if they cannot be had exactly (clock
/// offsets among them count as such: format::LocalDefinitions does not tell them apart from
/// tables it could not take), and then the location goes through OTF2.
using LocationMaps = std::function<const format::IdMaps*()>;

/// Writes the kept records of the event file `in` to `out` (`out_created`: its descriptor if
/// already created, else -1) in chunks of `chunk_size`. Returns the number of events written, with
/// what it left out added to `left_out`; or nothing, with `out` removed and `left_out` unchanged,
/// if format/ cannot read the file exactly as OTF2's reader would (a layout it refuses, maps it
/// lacks, a record OTF2 would refuse). Throws an output Error if `out` cannot be written.
std::optional<std::uint64_t> copy_vite_events(const format::MappedFile& in, const std::string& out,
                                              int out_created, std::size_t chunk_size,
                                              const ViteRecordRule& rule, const LocationMaps& maps,
                                              LeftOutEvents& left_out);

} // namespace htrace::report
