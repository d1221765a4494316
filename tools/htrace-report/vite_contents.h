// What the ViTE copy (vite_export.h) carries, by OTF2 record kind (format::def_record_name and
// format::event_record_name spell them).
//
// ViTE 1.2 reads the clock, strings, system tree, location groups (of every type), locations,
// regions, groups, communicators and metric classes with their members; the copy also carries
// the definitions OTF2 readers need beside them (attributes, paradigms, properties, parameters,
// inter-communicators), which ViTE skips without a word. It leaves out every other kind of
// definition: metric instances (ViTE 1.2 says "handler_DefMetricInstance not implemented" and
// crashes on their Metric records), metric class recorders (it says "... not implemented" once
// each), calling contexts, source code locations, interrupt generators, RMA windows, I/O
// definitions, Cartesian topologies and callpaths.
//
// Events it leaves out: those that refer to definitions left out (Metric records of metric
// instances, CallingContext*, Rma*, Io*), and those ViTE 1.2 has no handler for and warns about
// once per record (BufferFlush, ThreadFork, ThreadJoin, ThreadCreate, Parameter*).
#pragma once

#include <string_view>

namespace htrace::report {

/// Whether the ViTE copy carries definitions of kind `kind`.
bool vite_carries_definition(std::string_view kind);

/// Whether the ViTE copy carries events of kind `kind`; a carried Metric record still goes only
/// when its metric is a metric class (not an instance).
bool vite_carries_event(std::string_view kind);

} // namespace htrace::report
