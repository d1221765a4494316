#include "metric_defs.h"

#include "archive_defs.h"
#include "format/otf2_library.h"

#include <otf2/otf2.h>

namespace htrace::report {
namespace {

struct Reading {
  std::map<OTF2_StringRef, std::string> strings;
  MetricDefs defs;
  std::map<OTF2_MetricRef, OTF2_MetricRef> instance_class;
};

Reading& of(void* u) {
  return *static_cast<Reading*>(u);
}

OTF2_CallbackCode on_string(void* u, OTF2_StringRef self, const char* s) {
  of(u).strings[self] = s;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_member(void* u, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef,
                            OTF2_MetricType, OTF2_MetricMode, OTF2_Type, OTF2_Base base,
                            int64_t exponent, OTF2_StringRef unit) {
  Reading& r = of(u);
  const auto text = [&r](OTF2_StringRef s) {
    auto it = r.strings.find(s);
    return it == r.strings.end() ? std::string() : it->second;
  };
  std::string label = text(name);
  if (label.empty()) label = "metric member " + std::to_string(self);
  r.defs.members[self] = {label, text(unit), base, exponent};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_class(void* u, OTF2_MetricRef self, uint8_t n,
                           const OTF2_MetricMemberRef* members, OTF2_MetricOccurrence,
                           OTF2_RecorderKind) {
  of(u).defs.metrics[self].assign(members, members + n);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_instance(void* u, OTF2_MetricRef self, OTF2_MetricRef metric_class,
                              OTF2_LocationRef, OTF2_MetricScope, uint64_t) {
  of(u).instance_class[self] = metric_class;
  return OTF2_CALLBACK_SUCCESS;
}

} // namespace

MetricDefs read_metric_defs(const std::string& archive) {
  const format::ReaderPtr owned(open_reader(archive));
  OTF2_Reader* reader = owned.get();
  check_read(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "'" + archive + "': serial reading");
  OTF2_GlobalDefReader* dr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!dr) throw input_error("'" + archive + "': no global definitions");
  Reading r;
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, on_string);
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cbs, on_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cbs, on_class);
  OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(cbs, on_instance);
  const OTF2_ErrorCode reg = OTF2_Reader_RegisterGlobalDefCallbacks(reader, dr, cbs, &r);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  check_read(reg, "'" + archive + "': registering metric definition callbacks");
  uint64_t read = 0;
  const OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(reader, dr, &read);
  OTF2_Reader_CloseGlobalDefReader(reader, dr);
  check_read(rc, "'" + archive + "': reading the metric definitions");
  // An instance's values are its class's members' (classes may follow their instances).
  for (const auto& [instance, metric_class] : r.instance_class) {
    r.defs.instances.insert(instance);
    auto it = r.defs.metrics.find(metric_class);
    if (it != r.defs.metrics.end()) r.defs.metrics[instance] = it->second;
  }
  return r.defs;
}

} // namespace htrace::report
