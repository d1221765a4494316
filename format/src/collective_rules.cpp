#include "format/collective_rules.h"

#include <otf2/otf2.h>

namespace htrace::format {

CollectivePattern collective_pattern(uint32_t op) {
  switch (op) {
  case OTF2_COLLECTIVE_OP_BCAST:
  case OTF2_COLLECTIVE_OP_SCATTER:
  case OTF2_COLLECTIVE_OP_SCATTERV:
    return CollectivePattern::OneToN;
  case OTF2_COLLECTIVE_OP_GATHER:
  case OTF2_COLLECTIVE_OP_GATHERV:
  case OTF2_COLLECTIVE_OP_REDUCE:
    return CollectivePattern::NToOne;
  case OTF2_COLLECTIVE_OP_SCAN:
  case OTF2_COLLECTIVE_OP_EXSCAN:
    return CollectivePattern::Prefix;
  default:
    return CollectivePattern::AllToAll;
  }
}

bool collective_end_waits(uint32_t op, uint64_t bytes_received) {
  if (op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE) return false;
  return op == OTF2_COLLECTIVE_OP_BARRIER || op == OTF2_COLLECTIVE_OP_CREATE_HANDLE ||
         bytes_received > 0;
}

} // namespace htrace::format
