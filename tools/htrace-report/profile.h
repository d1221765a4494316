// Everything the HTML report shows, aggregated while the events stream past: per location and
// region the calls, inclusive time and bytes; the process-to-process message matrix; each
// location's share of time in MPI per time bin; point-to-point clock-condition violations (a
// receive recorded before its send); and the detail timeline of one window, capped at a fixed
// number of slices (the longest are kept) and message lines, with the waits of the kept slices.
// Beyond a screenful of ranks (report_scale.h) the matrix is kept by blocks of ranks, the overview
// by blocks of locations and the detail for a sample of locations. Memory grows with locations,
// regions, channels, messages in flight and the caps, not with the number of events.
#pragma once

#include "analysis/wait_states.h"
#include "archive_defs.h"
#include "event_scan.h"
#include "message_ends.h"
#include "relations/fifo.h"
#include "relations/location_cache.h"
#include "relations/location_channels.h"
#include "report_scale.h"

#include <map>
#include <queue>
#include <tuple>
#include <vector>

namespace htrace::report {

struct RegionStats {
  std::uint64_t calls = 0, time_ns = 0, bytes_sent = 0, bytes_received = 0;
};

struct DetailSlice {
  std::uint32_t loc, region;
  std::int64_t start_ns, dur_ns;
  bool operator>(const DetailSlice& o) const { return dur_ns > o.dur_ns; }
};

/// A wait inside a detail slice: it runs from the slice's start for wait_ns.
struct WaitMark {
  analysis::WaitPattern pattern;
  std::int64_t wait_ns;
  std::uint32_t cause; ///< the location waited for
};

struct DetailMessage {
  std::uint32_t src_loc, dst_loc;
  std::int64_t send_ns, recv_ns;
  std::uint64_t bytes;
};

/// One point-to-point record: its location and its place among that location's point-to-point
/// records (the same in an archive and in its corrected copy).
struct MessageRecord {
  std::uint32_t loc = 0;
  std::uint64_t ordinal = 0;
};

/// A message end as the profile keeps it; `seen`: the position of its record among the
/// point-to-point records of the archive. A message counts (detail order, the first of equal
/// violations) where its later record is, where a reader in time order sees both of its ends.
struct ProfiledEnd {
  MessageRecord record;
  std::int64_t t;
  std::uint64_t bytes, seen;
  std::uint64_t index; ///< the message's number in its channel (sends only)
};

struct ProfileOptions {
  std::size_t bins = 200;            ///< timeline overview resolution
  std::int64_t window_begin_ns = -1; ///< detail window; -1: init_finalize_window, else all
  std::int64_t window_end_ns = -1;
  std::size_t max_slices = 20000;  ///< detail cap: the longest slices are kept
  std::size_t max_messages = 5000; ///< detail cap: the first message lines are kept
};

/// The run between the end of MPI_Init and the start of MPI_Finalize, from the clock
/// measurements htrace records there (ns from the start); false if the archive lacks them.
bool init_finalize_window(const ArchiveDefs& defs, std::int64_t& begin_ns, std::int64_t& end_ns);

class Profile final : public MatchingSink<ProfiledEnd> {
public:
  Profile(const ArchiveDefs& defs, const ProfileOptions& options);
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) override;
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) override;
  void collective(std::uint32_t loc, std::uint64_t t, std::uint8_t op, std::uint32_t comm,
                  std::uint32_t root, std::uint64_t sent, std::uint64_t received) override;
  void prefetch(std::uint32_t loc) override {
    relations::prefetch_object(locations_[loc]);
    channel_numbers_.prefetch(loc);
  }
  void finish() override;
  /// A wait the analysis decided (WaitStateAnalysis::on_wait), before or after finish(): kept
  /// when its call is a slice the detail keeps, or still open.
  void wait(const analysis::WaitStateAnalysis::CallWait& w);
  /// The waits of a slice of `detail`; null for none. Complete once the analysis has finished.
  const std::vector<WaitMark>* marks_of(const DetailSlice& s) const;

  const ReportScale scale; ///< what is kept one by one, what by blocks

  // Results (valid after finish()).
  /// location -> region -> stats (after finish)
  std::vector<std::map<std::uint32_t, RegionStats>> per_location;
  /// [src * side + dst], rank blocks (ranks when the scale is not summarized)
  std::vector<std::uint64_t> matrix_messages, matrix_bytes;
  std::vector<std::vector<double>> mpi_share; ///< [location block][bin] in 0..1, the block's mean
  std::int64_t bin_ns = 1, first_ns = 0, last_ns = 0;
  std::uint64_t messages = 0, matched = 0, violations = 0, unmatched = 0;
  /// Of matched and violations: messages between threads of one process (htrace-correct relates
  /// only processes).
  std::uint64_t matched_within_process = 0, violations_within_process = 0;
  std::int64_t worst_violation_ns = 0;
  DetailMessage worst{};      ///< the message with the largest violation
  P2pChannel worst_channel{}; ///< its channel, and its number there (from 0)
  std::uint64_t worst_index = 0;
  MessageRecord worst_send{}, worst_recv{}; ///< its records (MessageProbe finds them again)
  std::vector<DetailSlice> detail;          ///< sorted by start; locations of scale.in_detail
  std::vector<DetailMessage> detail_messages;
  std::uint64_t detail_total_slices = 0, detail_total_messages = 0;
  std::int64_t window_begin_ns = 0, window_end_ns = 0;
  bool seen_any = false;

private:
  struct Open {
    std::uint32_t region;
    std::uint64_t start;
  };
  using SliceKey = std::tuple<std::uint32_t, std::int64_t, std::uint32_t>; ///< loc, start, region
  /// A slice in longest_ (after finish: in detail) and its waits.
  struct Kept {
    std::uint32_t copies = 0;
    std::vector<WaitMark> marks;
  };
  struct Queues {
    relations::Fifo<ProfiledEnd> sends, recvs;
    std::uint64_t sent = 0;
  };
  /// A detail message line and where the message counts.
  struct Detail {
    std::uint64_t seen;
    DetailMessage message;
    bool operator<(const Detail& o) const { return seen < o.seen; }
  };
  void touch(std::int64_t ns);
  void add_mpi_time(std::uint32_t loc, std::int64_t from, std::int64_t to);
  ProfiledEnd pending(std::uint32_t loc, std::uint64_t t, std::uint64_t bytes);
  void matched_end(const relations::MessageEnd<ProfiledEnd>& end) override;
  void pair(const P2pChannel& channel, const ProfiledEnd& s, const ProfiledEnd& r);
  RegionStats* innermost(std::uint32_t loc);

  const ArchiveDefs& defs_;
  ProfileOptions options_;
  /// What a location has, in two cache lines: its innermost open regions in place (a location
  /// is rarely more than two deep). Its regions' statistics are scanned (a location runs in a
  /// few regions), and become per_location at finish(); a map per location missed the cache at
  /// each node.
  struct alignas(64) LocationState {
    relations::InlineStack<Open, 2> stack;
    std::vector<std::pair<std::uint32_t, RegionStats>> regions;
    std::uint64_t p2p_records = 0; ///< its point-to-point records so far
  };
  RegionStats& stats(std::uint32_t loc, std::uint32_t region);
  std::vector<LocationState> locations_;
  std::uint64_t seen_ = 0; ///< point-to-point records so far
  std::uint64_t worst_seen_ = 0;
  relations::LocationChannels channel_numbers_;
  std::vector<Queues> channels_;              ///< by channel number
  std::priority_queue<Detail> first_details_; ///< the detail messages that count first
  std::priority_queue<DetailSlice, std::vector<DetailSlice>, std::greater<DetailSlice>> longest_;
  std::map<SliceKey, Kept> kept_;
  /// Waits decided while their region is open (OpenMP lock acquisitions), by location and the
  /// region's depth in its stack (from 0): rare, so kept apart from the stacks.
  std::map<std::pair<std::uint32_t, std::size_t>, std::vector<WaitMark>> open_marks_;
};

} // namespace htrace::report
