// Callbacks for every OTF2 event and global definition record type, generated from the OTF2
// headers (tools/generate_record_tables.py): the names of the record types and copy callbacks that
// re-emit a record unchanged except for the timestamp. htrace-correct copies definitions with them
// (its events travel through its record store), htrace-salvage and htrace-report's ViTE copy copy
// events.
#ifndef HTRACE_FORMAT_RECORD_TABLES_H
#define HTRACE_FORMAT_RECORD_TABLES_H

#include <otf2/otf2.h>

namespace htrace::format {

// Where the event copy callbacks (register_copy_events; their user data is an EventSink*) send a
// record: begin_record() returns its new timestamp, writer() the writer it goes to, or nullptr to
// leave it out, and end_record() gets what the write returned (OTF2_SUCCESS for a record left
// out) and tells the reader whether to go on.
class EventSink {
public:
  virtual ~EventSink() = default;
  virtual OTF2_TimeStamp begin_record(OTF2_LocationRef location, OTF2_TimeStamp time, int type) = 0;
  virtual OTF2_EvtWriter* writer(OTF2_LocationRef location) = 0;
  virtual OTF2_CallbackCode end_record(OTF2_ErrorCode written) = 0;
};

// Where the definition copy callbacks (register_copy_defs; their user data is a DefSink*) send a
// definition: count() gets its type first, then writer() returns the writer it goes to, or nullptr
// to leave it out, and result() gets what the write returned (OTF2_SUCCESS for a definition left
// out).
class DefSink {
public:
  virtual ~DefSink() = default;
  virtual OTF2_GlobalDefWriter* writer() = 0;
  virtual void count(int type) = 0;
  virtual OTF2_CallbackCode result(OTF2_ErrorCode written) = 0;
  virtual void adjust_clock_properties(uint64_t* resolution, uint64_t* offset, uint64_t* length,
                                       uint64_t* realtime) = 0;
};

// Sinks that copy records unchanged into `w` and stop at the first write error (the plain OTF2
// copy the benchmarks compare with, and tests that need an exact copy).
class UnchangedEvents final : public EventSink {
public:
  OTF2_EvtWriter* w = nullptr;
  OTF2_TimeStamp begin_record(OTF2_LocationRef, OTF2_TimeStamp t, int) override { return t; }
  OTF2_EvtWriter* writer(OTF2_LocationRef) override { return w; }
  OTF2_CallbackCode end_record(OTF2_ErrorCode rc) override {
    return rc == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
  }
};
class UnchangedDefs final : public DefSink {
public:
  explicit UnchangedDefs(OTF2_GlobalDefWriter* writer = nullptr) : w(writer) {}
  OTF2_GlobalDefWriter* w;
  OTF2_GlobalDefWriter* writer() override { return w; }
  void count(int) override {}
  OTF2_CallbackCode result(OTF2_ErrorCode rc) override {
    return rc == OTF2_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
  }
  void adjust_clock_properties(uint64_t*, uint64_t*, uint64_t*, uint64_t*) override {}
};

int event_record_type_count();
const char* event_record_name(int type);
int def_record_type_count();
const char* def_record_name(int type);

void register_copy_events(OTF2_EvtReaderCallbacks* callbacks);
void register_copy_defs(OTF2_GlobalDefReaderCallbacks* callbacks);

} // namespace htrace::format
#endif
