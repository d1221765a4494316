// What one rank sends and receives in the tracer's own collective steps (the clock
// synchronization in MPI_Init, the definition unification in MPI_Finalize): the counts that the
// design's claim of O(log P) rounds per rank is checked against (bench/scale).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace htrace {

struct TrafficCount {
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  /// Point-to-point calls whose partner differs from the previous call's: one per round of a
  /// tree or of pairwise rounds, however many messages the round exchanges with its partner.
  std::uint64_t partner_changes = 0;
  /// Collective calls (broadcast, gather, reduce, barrier): ceil(log2 P) rounds each in the
  /// MPI libraries' trees.
  std::uint64_t collectives = 0;

  void sent(const void* partner, int peer, std::uint64_t bytes) {
    ++messages_sent;
    bytes_sent += bytes;
    note_partner(partner, peer);
  }
  void received(const void* partner, int peer, std::uint64_t bytes) {
    ++messages_received;
    bytes_received += bytes;
    note_partner(partner, peer);
  }
  void collective() { ++collectives; }

  /// One line for the debug log: "sent 12 (96 B), received 12 (96 B), partners 3, collectives 5".
  std::string summary() const {
    char line[192];
    std::snprintf(line, sizeof line,
                  "sent %llu (%llu B), received %llu (%llu B), partner changes %llu, collectives "
                  "%llu",
                  static_cast<unsigned long long>(messages_sent),
                  static_cast<unsigned long long>(bytes_sent),
                  static_cast<unsigned long long>(messages_received),
                  static_cast<unsigned long long>(bytes_received),
                  static_cast<unsigned long long>(partner_changes),
                  static_cast<unsigned long long>(collectives));
    return line;
  }

private:
  // A partner is a peer within a group (the group's identity: any pointer that tells groups apart).
  void note_partner(const void* group, int peer) {
    if (group != last_group_ || peer != last_peer_) ++partner_changes;
    last_group_ = group;
    last_peer_ = peer;
  }
  const void* last_group_ = nullptr;
  int last_peer_ = -1;
};

} // namespace htrace
