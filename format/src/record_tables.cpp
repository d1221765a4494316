#include "format/record_tables.h"

namespace htrace::format {

// Deprecated record types (Omp*) must be copied too.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include "record_tables.inc"
#pragma GCC diagnostic pop

int event_record_type_count() {
  return kEventRecordTypeCount;
}
const char* event_record_name(int type) {
  return kEventRecordNames[type];
}
int def_record_type_count() {
  return kDefRecordTypeCount;
}
const char* def_record_name(int type) {
  return kDefRecordNames[type];
}

void register_copy_events(OTF2_EvtReaderCallbacks* callbacks) {
  register_copy_event_callbacks(callbacks);
}
void register_copy_defs(OTF2_GlobalDefReaderCallbacks* callbacks) {
  register_copy_def_callbacks(callbacks);
}

} // namespace htrace::format
