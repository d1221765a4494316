#include "event_copy.h"

namespace htrace::salvage {
namespace {

/// One record through the sink protocol the generated copy callbacks follow; `write(writer, time)`
/// writes it.
template <class Write>
OTF2_CallbackCode copy_record(LocationCopy& c, OTF2_LocationRef location, OTF2_TimeStamp t,
                              Write&& write) {
  const OTF2_TimeStamp time = c.begin_record(location, t, 0); // (the type is not used here)
  OTF2_EvtWriter* w = c.writer(location);
  return c.end_record(w ? write(w, time) : OTF2_SUCCESS);
}

/// Enter and Leave are copied like every record, and also keep the open regions up to date.
OTF2_CallbackCode on_enter(OTF2_LocationRef location, OTF2_TimeStamp t, std::uint64_t, void* user,
                           OTF2_AttributeList* attributes, OTF2_RegionRef region) {
  LocationCopy& c = LocationCopy::of(user);
  c.open.push_back(region);
  return copy_record(c, location, t, [&](OTF2_EvtWriter* w, OTF2_TimeStamp time) {
    return OTF2_EvtWriter_Enter(w, attributes, time, region);
  });
}

OTF2_CallbackCode on_leave(OTF2_LocationRef location, OTF2_TimeStamp t, std::uint64_t, void* user,
                           OTF2_AttributeList* attributes, OTF2_RegionRef region) {
  LocationCopy& c = LocationCopy::of(user);
  if (!c.open.empty() && c.open.back() == region) c.open.pop_back();
  return copy_record(c, location, t, [&](OTF2_EvtWriter* w, OTF2_TimeStamp time) {
    return OTF2_EvtWriter_Leave(w, attributes, time, region);
  });
}

OTF2_CallbackCode on_unknown(OTF2_LocationRef, OTF2_TimeStamp, std::uint64_t, void* user,
                             OTF2_AttributeList*) {
  ++LocationCopy::of(user).unknown;
  return OTF2_CALLBACK_SUCCESS;
}

} // namespace

void register_callbacks(OTF2_EvtReaderCallbacks* cbs) {
  format::register_copy_events(cbs);
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cbs, on_unknown);
  OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, on_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, on_leave);
}

} // namespace htrace::salvage
