// Clock offset algorithms (building blocks of every synchronization algorithm): the client
// exchanges ping-pongs with a reference rank and estimates (client clock - reference clock).
//  - SKaMPI-Offset (Algorithm 7): keeps the tightest bounds seen over all exchanges; the estimate
//    is their midpoint, and half their distance bounds the error if the two directions are fair.
//  - Mean-RTT-Offset (Algorithm 8, Jones & Koenig): mean round trip first, then the median of
//    (local - reference - rtt/2).
// Protocol (both methods): the client sends the number of exchanges it will make and waits for
// the reference's go (both wait politely: either may have to wait for its turn); then for each
// exchange one int64 ping, answered with the reference's clock reading, and both partners spin
// (Transport::recv_hot) so that no wake-up latency lands in a round trip.
#pragma once

#include "clock/global_clock.h"
#include "clock/sync_config.h"
#include "clock/transport.h"

#include <cstdint>

namespace htrace::clock {

struct OffsetMeasurement {
  std::int64_t time_ns = 0;        ///< client clock at the measurement
  std::int64_t offset_ns = 0;      ///< client clock minus reference clock
  std::int64_t uncertainty_ns = 0; ///< half width of the bound, rounded up (SKaMPI) or rtt/2
  std::int64_t min_rtt_ns = 0;     ///< fastest round trip seen
};

OffsetMeasurement measure_offset_client(Transport& t, int reference, const GlobalClock& clock,
                                        OffsetMethod method, int pingpongs);
/// The reference's side of one measurement by `client` (answers whatever count it announces).
void serve_offset(Transport& t, int client, const GlobalClock& clock);

} // namespace htrace::clock
