// A member's rank in a communicator, looked up by a key of the caller's (the member's location or
// its process): the first rank whose member has that key. Each communicator is indexed the first
// time it is asked about; a search through the members instead cost as many steps as the
// communicator has members at every collective call, which at tens of thousands of ranks made
// collectives quadratic.
#ifndef HTRACE_RELATIONS_MEMBER_RANKS_H
#define HTRACE_RELATIONS_MEMBER_RANKS_H

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

namespace htrace::relations {

class MemberRanks {
public:
  /// The rank in communicator `comm` of `size` members whose member has `key`, or `size` if none
  /// has; `key_of(rank)` is the key of the member at a rank.
  template <class KeyOf>
  std::size_t rank(std::uint32_t comm, std::size_t size, std::uint32_t key, KeyOf&& key_of) {
    if (indexed_.insert(comm).second)
      for (std::size_t r = 0; r < size; ++r)
        ranks_.try_emplace(pack(comm, static_cast<std::uint32_t>(key_of(r))), r);
    const auto it = ranks_.find(pack(comm, key));
    return it == ranks_.end() ? size : it->second;
  }

private:
  static std::uint64_t pack(std::uint32_t comm, std::uint32_t key) {
    return std::uint64_t{comm} << 32 | key;
  }
  std::unordered_set<std::uint32_t> indexed_;
  std::unordered_map<std::uint64_t, std::size_t> ranks_; ///< (comm, key) -> rank
};

} // namespace htrace::relations
#endif
