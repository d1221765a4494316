/* Names htrace stores in an OTF2 archive besides standard records. Shared by libhtrace (writer)
 * and htrace-correct (reader); C-callable so other tools can read them too. */
#ifndef HTRACE_ARCHIVE_PROPERTIES_H
#define HTRACE_ARCHIVE_PROPERTIES_H

/* Archive properties (OTF2_Archive_SetProperty / OTF2_Reader_GetProperty), string values. */
/* "global": events on the synced clock; "local": raw; "corrected": htrace-correct's output, the
 * clock measurements below already applied (a second correction must not apply them again). */
#define HTRACE_PROP_TIMEBASE "HTRACE::CLOCK::TIMEBASE"
#define HTRACE_PROP_SYNC_CONFIG "HTRACE::CLOCK::SYNC" /* configuration string actually used */
#define HTRACE_PROP_BASE_CLOCK "HTRACE::CLOCK::BASE"  /* monotonic | monotonic_raw | tsc */
/* Minimum one-way latencies inside a node and between nodes, decimal ns. */
#define HTRACE_PROP_MIN_LATENCY_INTRA "HTRACE::CLOCK::MIN_LATENCY_INTRA_NS"
#define HTRACE_PROP_MIN_LATENCY_INTER "HTRACE::CLOCK::MIN_LATENCY_INTER_NS"
/* htrace-correct's output holds the minimum latencies it used in the two properties above. */
/* Version of the libhtrace that wrote the archive (HTRACE_VERSION_STRING of <htrace/version.h>). */
#define HTRACE_PROP_VERSION "HTRACE::VERSION"
/* The MPI library the traced program ran on: the first line of its MPI_Get_library_version. */
#define HTRACE_PROP_MPI_LIBRARY "HTRACE::MPI::LIBRARY"
/* Version of the htrace-correct that wrote a corrected archive (the writer's stays in VERSION). */
#define HTRACE_PROP_CORRECT_VERSION "HTRACE::CORRECT::VERSION"
/* Written by htrace-salvage into an archive rebuilt after a run that ended badly: how each rank
 * ended ("rank 0: SIGTERM; rank 1: MPI_Abort"), the ranks that reached MPI_Finalize (decimal,
 * space-separated, "none" for none), the salvaging tool's version, and whether the clock
 * measurement at MPI_Finalize is there ("absent on ranks ...": those ranks have only the INIT
 * measurement). */
#define HTRACE_PROP_RUN_END "HTRACE::RUN::END"
#define HTRACE_PROP_RUN_FINISHED_RANKS "HTRACE::RUN::FINISHED_RANKS"
#define HTRACE_PROP_SALVAGE_VERSION "HTRACE::SALVAGE::VERSION"
#define HTRACE_PROP_CLOCK_FINAL "HTRACE::CLOCK::FINAL"

/* Written by libhtrace when HTRACE_BUDGET stopped recording on some ranks: how many (decimal).
 * Each of their locations ends with a MeasurementOnOff (off) record; messages and collectives
 * whose other side was not recorded after that cut have one side only, as in a salvaged archive. */
#define HTRACE_PROP_RUN_BUDGET_RANKS "HTRACE::RUN::BUDGET_RANKS"

/* Event attributes (OTF2 Attribute definitions, in attribute lists of events). */
/* On the Leave of a run of unsuccessful MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall,
 * MPI_Iprobe or MPI_Improbe calls on the same arguments, recorded as one call from the first
 * call's Enter to the last one's Leave: the number of calls (uint64). */
#define HTRACE_ATTR_POLLS "HTRACE::POLLS"

/* Location properties (OTF2 LocationProperty definitions), one set per location; thread locations
 * carry their process's values. Times are in trace ticks (ns, same time base as the events).
 * OFFSET is this location's clock minus the reference clock (world rank 0) at TIME, in ns, signed:
 * a corrected timestamp is t - offset(t), offset interpolated linearly between the measurements. */
#define HTRACE_LPROP_INIT_PREFIX "HTRACE::CLOCK::INIT_"
#define HTRACE_LPROP_FINAL_PREFIX "HTRACE::CLOCK::FINAL_"
#define HTRACE_LPROP_INIT_TIME "HTRACE::CLOCK::INIT_TIME"
#define HTRACE_LPROP_INIT_OFFSET "HTRACE::CLOCK::INIT_OFFSET"
#define HTRACE_LPROP_INIT_UNCERTAINTY "HTRACE::CLOCK::INIT_UNCERTAINTY"
#define HTRACE_LPROP_FINAL_TIME "HTRACE::CLOCK::FINAL_TIME"
#define HTRACE_LPROP_FINAL_OFFSET "HTRACE::CLOCK::FINAL_OFFSET"
#define HTRACE_LPROP_FINAL_UNCERTAINTY "HTRACE::CLOCK::FINAL_UNCERTAINTY"
/* Measurements during the run (HTRACE_SYNC_INTERVAL_MS), between INIT and FINAL in time order:
 * MID_<k>_TIME, MID_<k>_OFFSET, MID_<k>_UNCERTAINTY for k = 1, 2, ... Readers interpolate the
 * offset piecewise linearly through INIT, every MID_<k> and FINAL. */
#define HTRACE_LPROP_MID_PREFIX "HTRACE::CLOCK::MID_"

/* Clock domain: the world rank of the process whose timestamps this process's timestamps equal
 * exactly (same base clock, and with TIMEBASE=global the same clock model), as verified by a
 * measurement at MPI_Init; a process that was not verified to share another's clock names itself.
 * Processes of one domain carry identical INIT/FINAL offsets, and the latency a message between
 * them shows in the trace is its true latency. */
#define HTRACE_LPROP_CLOCK_DOMAIN "HTRACE::CLOCK::DOMAIN"

#endif
