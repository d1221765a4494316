// The entries of a std::map keyed by a definition reference (communicators, regions), found
// through one array: readers look communicators up per event, and an archive has one per OpenMP
// team besides MPI's, thousands at thousands of processes, so that the map's tree missed the cache
// at each of its levels. References are dense in practice (writers number definitions from 0);
// those beyond the array are looked up in the map. Points into the map, which must outlive it and
// not change.
#ifndef HTRACE_RELATIONS_REF_INDEX_H
#define HTRACE_RELATIONS_REF_INDEX_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_set>
#include <vector>

namespace htrace::relations {

template <class T> class RefIndex {
public:
  explicit RefIndex(const std::map<std::uint32_t, T>& map) : map_(map) {
    const std::size_t limit = 2 * map.size() + 64;
    for (const auto& [ref, entry] : map) {
      if (ref >= limit) break;
      if (ref >= dense_.size()) dense_.resize(ref + 1, nullptr);
      dense_[ref] = &entry;
    }
  }
  /// The entry of `ref`, nullptr if the map has none.
  const T* find(std::uint32_t ref) const {
    if (ref < dense_.size()) return dense_[ref];
    const auto it = map_.find(ref);
    return it == map_.end() ? nullptr : &it->second;
  }

private:
  const std::map<std::uint32_t, T>& map_;
  std::vector<const T*> dense_; ///< by reference below the first one left to the map
};

/// The references of a std::map's entries that `member` accepts (the MPI regions among the
/// regions), tested per event: a flag per reference where RefIndex has an array, a hash set above.
class RefSet {
public:
  template <class T, class Member> RefSet(const std::map<std::uint32_t, T>& map, Member member) {
    const std::size_t limit = 2 * map.size() + 64;
    for (const auto& [ref, entry] : map) {
      if (!member(entry)) continue;
      if (ref >= limit) {
        sparse_.insert(ref);
        continue;
      }
      if (ref >= flags_.size()) flags_.resize(ref + 1, 0);
      flags_[ref] = 1;
    }
  }
  bool contains(std::uint32_t ref) const {
    return ref < flags_.size() ? flags_[ref] != 0 : sparse_.count(ref) > 0;
  }

private:
  std::vector<std::uint8_t> flags_; ///< by reference, up to the last dense member
  std::unordered_set<std::uint32_t> sparse_;
};

} // namespace htrace::relations
#endif
