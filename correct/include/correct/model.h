// Compact per-location event model: timestamps per event plus sparse links to logical messages.
// Only events that take part in a logical message carry a Link; a Channel joins the contributing
// events of one logical message (send, collective begins, OpenMP releases) to its receiving ones.
#ifndef HTRACE_CORRECT_MODEL_H
#define HTRACE_CORRECT_MODEL_H

#include "correct/event_array.h"
#include "correct/event_file_rewrite.h"
#include "correct/input_times.h"
#include "correct/record_store.h"
#include "format/error.h"
#include "relations/collective_bounds.h"
#include "relations/p2p_messages.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace htrace::correct {

using relations::kNoTime;
using relations::kUnbounded; // a contribution nobody receives
using relations::Top2;

enum class MessageKind : uint8_t { P2P = 0, Collective = 1, OpenMP = 2 };
constexpr int kMessageKinds = 3;
extern const char* const kMessageKindNames[kMessageKinds];

// What a channel connects; the key fields a..d depend on the type.
enum class ChannelType : uint8_t {
  P2P,        // a=src process, b=dst process, c=comm<<32|tag, d=sequence
  Collective, // one instance: a=comm, b=sequence (per correction rank; remote members by message)
  Local,      // OpenMP, inside one process: a=process<<8|sub-kind, b..d per sub-kind
};

struct ChannelKey {
  ChannelType type;
  uint64_t a, b, c, d;
  bool operator==(const ChannelKey& o) const {
    return type == o.type && a == o.a && b == o.b && c == o.c && d == o.d;
  }
};
struct ChannelKeyHash {
  size_t operator()(const ChannelKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.type);
    for (uint64_t v : {k.a, k.b, k.c, k.d})
      h = mix(h ^ v);
    return static_cast<size_t>(h);
  }
  static uint64_t mix(uint64_t x) { // splitmix64 finalizer: sequence numbers spread over all bits
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
};

// Aggregated begins (forward) and ends (backward) of one collective instance; see collective.h.
struct CollectiveInstance;

// The values of an OpenMP relation: several contributors and receivers, each excluding itself.
struct LocalValues {
  Top2 corrected, original; // contributions (forward LC, pre-synchronized input time)
  Top2 ub_neg; // backward: negated (receiver time - l_min), so ub = -largest excluding self
};

// One logical message (48 bytes: there is one per p2p message, millions of them). Its full key is
// not kept: ChannelTable::key rebuilds it.
struct Channel {
  ChannelType type = ChannelType::P2P;
  MessageKind kind = MessageKind::P2P;
  bool has_receiver = false, has_contribution = false;
  uint32_t key = 0; // P2P: ChannelTable::stream_list index; others: ChannelTable::keys index
  uint32_t seq = 0; // P2P: sequence number in the stream
  // Contributions from this correction rank; receivers wait until all of them arrived. Remote
  // contributions never block: they refine the value in later rounds (see forward_replay.cpp).
  int32_t expected = 0, arrived = 0;
  // Collective: index into LocalModel::collectives; Local: index into ChannelTable::local_values;
  // P2P: its receive, numbered by the forward replay on several correction ranks (UINT32_MAX: none
  // here).
  uint32_t slot = UINT32_MAX;
  // P2P: the send's forward and input times and the latest time the send may move to (receive
  // time - l_min).
  int64_t value = kNoTime, input = kNoTime, limit = kNoTime;
};
static_assert(sizeof(Channel) == 48, "one Channel per p2p message: keep it small");

// Receives sort first: an event takes its bounds before it passes its own time on.
enum class LinkRole : uint8_t { Receive = 0, Contribute = 1 };

// 8 bytes (there is one per event and logical message, millions): the role is kept in the top bit
// of the channel index.
class Link {
public:
  Link(uint32_t event_index, LinkRole role, uint32_t channel)
      : event(event_index), channel_role_(channel | static_cast<uint32_t>(role) << 31) {}
  LinkRole role() const { return static_cast<LinkRole>(channel_role_ >> 31); }
  uint32_t channel() const { return channel_role_ & kChannelMask; } // ChannelTable::channels index

  static constexpr uint32_t kChannelMask = 0x7fffffff;
  uint32_t event;

private:
  uint32_t channel_role_;
};
static_assert(sizeof(Link) == 8, "one Link per event with a logical message: keep it small");

// Append-only sequence in fixed-size chunks: growth never moves or copies elements (there are
// hundreds of thousands of channels), and indexing is a shift and a mask.
template <class T> class ChunkedVector {
public:
  T& operator[](size_t i) { return chunks_[i >> kShift][i & kMask]; }
  const T& operator[](size_t i) const { return chunks_[i >> kShift][i & kMask]; }
  size_t size() const { return size_; }
  T& back() { return (*this)[size_ - 1]; }
  T& emplace_back() {
    if ((size_ & kMask) == 0) chunks_.push_back(std::make_unique<T[]>(kMask + 1));
    return (*this)[size_++];
  }

private:
  static constexpr unsigned kShift = 12;
  static constexpr size_t kMask = (size_t(1) << kShift) - 1;
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

// All messages from one process to another on one communicator with one tag (a
// relations::P2pChannel), in order: the n-th send posted matches the n-th receive posted
// (relations/p2p_messages.h).
struct P2PStream {
  uint64_t src = 0, dst = 0, comm_tag = 0; // process indices, comm<<32|tag
  std::vector<uint32_t> channels;          // by sequence number; UINT32_MAX: not created yet
  relations::MessageCounts counts;         // ends numbered so far
  uint32_t id = 0;                         // index in ChannelTable::stream_list
};

struct ChannelTable {
  ChunkedVector<Channel> channels;
  ChunkedVector<LocalValues> local_values;
  ChunkedVector<ChannelKey> keys; // of non-P2P channels
  std::unordered_map<ChannelKey, P2PStream, ChannelKeyHash> streams;
  std::vector<P2PStream*> stream_list; // by P2PStream::id (unordered_map values never move)

  // A collective or OpenMP channel by its key, created on first use (p2p channels: p2p()).
  uint32_t get(const ChannelKey& key, MessageKind kind);
  // An existing collective or OpenMP channel, or UINT32_MAX.
  uint32_t find(const ChannelKey& key) const;
  // Existing stream or nullptr.
  P2PStream* find_stream(uint64_t src, uint64_t dst, uint64_t comm_tag);
  P2PStream& stream(uint64_t src, uint64_t dst, uint64_t comm_tag);
  uint32_t p2p(P2PStream& stream, uint64_t sequence);

  ChannelKey key(const Channel& ch) const {
    if (ch.type != ChannelType::P2P) return keys[ch.key];
    const P2PStream& s = *stream_list[ch.key];
    return {ChannelType::P2P, s.src, s.dst, s.comm_tag, ch.seq};
  }
  // P2P: the sending and the receiving process.
  uint32_t src(const Channel& ch) const { return static_cast<uint32_t>(stream_list[ch.key]->src); }
  uint32_t dst(const Channel& ch) const { return static_cast<uint32_t>(stream_list[ch.key]->dst); }

private:
  uint32_t add(ChannelType type, MessageKind kind, uint32_t key, uint32_t seq) {
    if (channels.size() > Link::kChannelMask)
      throw internal_error("more than 2^31 logical messages on one correction rank");
    Channel& ch = channels.emplace_back();
    ch.type = type, ch.kind = kind, ch.key = key, ch.seq = seq;
    if (type == ChannelType::Local) {
      ch.slot = static_cast<uint32_t>(local_values.size());
      local_values.emplace_back();
    }
    return static_cast<uint32_t>(channels.size() - 1);
  }
  // The non-P2P channels by key: open addressing, linear probing, at most half full. A slot is 12
  // bytes and holds no key (ChannelTable::keys has it): an OpenMP program has a few channels per
  // parallel region, hundreds of thousands, each looked up by every member's events, and a node
  // of a std::unordered_map cost ~90 bytes and a cache miss more per lookup.
  struct IndexSlot {
    uint32_t hash = 0;               // the low bits of ChannelKeyHash: the slot, also when growing
    uint32_t key_index = UINT32_MAX; // into keys; UINT32_MAX: empty
    uint32_t channel = 0;
  };
  // The slot holding `key`, or the empty one where it goes (slots_ not empty).
  size_t probe(const ChannelKey& key, uint32_t hash) const;
  void grow();
  std::vector<IndexSlot> slots_;
  size_t indexed_ = 0;
  // Messages alternate between few streams (and values from other ranks arrive stream by
  // stream): a small cache of the latest ones avoids most hash lookups, finds included.
  P2PStream* cached(uint64_t src, uint64_t dst, uint64_t comm_tag);
  void remember(P2PStream* stream);
  struct StreamCache {
    uint64_t src = 0, dst = 0, comm_tag = 0;
    P2PStream* stream = nullptr;
  };
  std::array<StreamCache, 4> cache_{};
  size_t next_cache_ = 0;
};

struct Jump {
  uint32_t event;
  int64_t amount; // forward jump added by the receive rule
};

struct ClockKnot {
  int64_t time, offset;
};

// Clock-offset model of one location (pre-synchronization): t' = t - offset(t). With the
// measurements at MPI_Init and MPI_Finalize only, offset(t) = o0 + slope (t - t0); with
// measurements during the run as well, `knots` holds them all and offset(t) is linear between
// consecutive ones, the first and last segments extended beyond the ends.
struct Presync {
  bool active = false;
  bool measured = false; // the archive holds usable clock measurements for the location
  int64_t t0 = 0, o0 = 0;
  double slope = 0;
  std::vector<ClockKnot> knots; // ascending time, at least 3, or empty
  int64_t error = 0; // bound of the model's error (the measurements' uncertainty), if measured
  int64_t expected_error = -1; // from the midpoints, not a bound (clock_knots.h); -1: unknown
  int measurements = 0;        // used: at MPI_Init, during the run and at MPI_Finalize
  int64_t apply(int64_t t) const {
    if (!active) return t;
    if (knots.empty()) return t - (o0 + static_cast<int64_t>(std::llround(slope * double(t - t0))));
    return t - piecewise_offset(t);
  }
  int64_t piecewise_offset(int64_t t) const;
};

struct LocationModel {
  uint32_t location = 0; // index into Definitions::locations
  uint32_t process = 0;
  InputTimes input;            // timestamps as read (ClockOffsets applied by the reader)
  std::vector<Link> links;     // ascending event
  EventArray<int64_t> link_lc; // forward time of each link's event (the others are not kept)
  std::vector<Jump> jumps;     // ascending event
  Presync presync;
  // How the corrected events are written: copy_file, from the input's event file (event_file.h),
  // if it holds the events of type_counts; otherwise from `records`, kept while reading.
  bool copy_file = false;
  TypeCounts type_counts;
  RecordStore records;
};

} // namespace htrace::correct
#endif
