// Attributes every byte of one location's event file to a row of the score: each event, with the
// bytes in front of it since the previous event (its timestamp record, its attribute list, and a
// chunk header and the previous chunk's padding where it opens a chunk), goes to the innermost
// region open on the location (Enter to the region it opens, Leave to the region it closes), or to
// the row of events outside any region; the end-of-file record goes to the last event's row. So
// the rows add up to the event file's size exactly.
//
// Per call of an MPI function it also decides what HTRACE_MPI_EXCLUDE would remove: the call's own
// records, unless the wrapper would still record it (a wait or test that completes a request, an
// MPI_Improbe that finds a message, MPI_Waitall; wrapper_call.h); and the records a request it
// posted leaves in later calls that stay recorded (an MpiIrecv in an MPI_Wait: the wrappers write
// nothing for a request they did not see posted), without their timestamp records, which the
// call's Leave at the same time then carries. A completion inside a call that its own
// function's exclusion would remove counts for that function only, so no byte is counted for two
// functions; where only the posting function is excluded it vanishes too, uncounted. Requests
// completed on another thread's location are not followed. So the estimate of what an exclusion
// saves errs low, never high.
#pragma once

#include "request_posts.h"
#include "score_tally.h"

#include <cstddef>
#include <cstdint>
#include <otf2/otf2.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace htrace::format {
class IdMaps;
class MappedFile;
struct RawEvent;
} // namespace htrace::format

namespace htrace::score {

/// Region refs of the archive -> rows of the score.
class RowIndex {
public:
  /// `rows`: one per region in `refs`' order; two more rows follow, outside() and undefined().
  explicit RowIndex(const std::vector<OTF2_RegionRef>& refs);
  std::uint32_t row(OTF2_RegionRef region) const {
    if (region < dense_.size()) return dense_[region];
    auto it = sparse_.find(region);
    return it == sparse_.end() ? undefined_ : it->second;
  }
  std::uint32_t outside() const { return outside_; }
  std::uint32_t undefined() const { return undefined_; }

private:
  std::vector<std::uint32_t> dense_;
  std::unordered_map<OTF2_RegionRef, std::uint32_t> sparse_;
  std::uint32_t outside_, undefined_;
};

/// What the archive says about runs of polls: the global id of HTRACE::POLLS, if defined.
struct PollAttribute {
  bool defined = false;
  OTF2_AttributeRef id = 0;
};

/// One location's event file, attributed to `rows` and its rank. Reused across locations (its
/// region stack keeps its capacity).
class LocationScan {
public:
  LocationScan(const RowIndex& index, std::vector<RegionRow>& rows, PollAttribute polls);
  /// Walks the file, giving back the pages it has read as it goes (memory stays flat however
  /// large the file); throws an input Error (format/error.h) naming `path` and the byte offset if
  /// the file is malformed.
  void scan(format::MappedFile& file, std::size_t chunk_size, OTF2_LocationRef location,
            const format::IdMaps* maps, RankTally& rank, const std::string& path);
  /// Leaves that did not close the innermost open region (malformed nesting), so far.
  std::uint64_t mismatched_leaves() const { return mismatched_; }

  // Decoder callbacks' targets (public for them; not an interface).
  enum class Kind : std::uint8_t { Enter, Leave, Other };
  /// What a request record does: posts it, completes it (MpiIsendComplete, MpiIrecv,
  /// MpiRequestCancelled, NonBlockingCollectiveComplete), or tests it unsuccessfully.
  enum class Request : std::uint8_t { None, Post, Complete, Test };
  Kind kind_ = Kind::Other;
  OTF2_RegionRef region_ = 0;
  int type_ = 0;
  Request request_kind_ = Request::None;
  std::uint64_t request_ = 0;

private:
  struct Frame {
    OTF2_RegionRef region;
    std::uint32_t row;
    bool completed; ///< a request completion record inside the call
    std::uint64_t records, bytes;
    std::size_t follow_on_begin; ///< its entries in follow_on_
  };
  /// A record inside a call that belongs to a request another row posted.
  struct FollowOn {
    std::uint32_t poster;
    std::uint64_t bytes;
  };
  void on_event(const format::RawEvent& e, std::uint64_t bytes, RankTally& rank,
                const format::IdMaps* maps);
  /// One event and its bytes to `row` (and the rank); it becomes the last row.
  void attribute(std::uint32_t row, std::uint64_t bytes, RankTally& rank);
  void add_bytes(std::uint32_t row, std::uint64_t bytes, RankTally& rank);
  void close_call(const Frame& f, std::uint64_t polls);
  /// Whether excluding its function removes the call (the wrapper would not record it).
  bool call_removable(const RegionRow& r, const Frame& f, std::uint64_t polls) const;
  /// The request record just decoded, `bytes` long without its timestamp, in the innermost call
  /// (if any).
  void note_request(std::uint64_t bytes);
  void add_follow_on(const FollowOn& f);
  std::uint64_t polls_of(const std::uint8_t* list, const format::IdMaps* maps) const;

  const RowIndex& index_;
  std::vector<RegionRow>& rows_;
  PollAttribute polls_;
  std::vector<Frame> stack_;
  std::vector<FollowOn> follow_on_; ///< of the open calls, innermost last
  RequestPosts posts_;
  std::vector<bool> completion_types_; ///< by record type: completes a request
  std::uint32_t last_row_ = 0;
  std::uint64_t mismatched_ = 0;
};

} // namespace htrace::score
