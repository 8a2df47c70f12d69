#pragma once
// The round trip as both ends keep it: the client from its Pings, the server from their echoes
// (schema/PROTOCOL.md, "Time sync"). One smoothing for both, so their figures agree.

namespace ks::net {

// The smoothed round trip (ms) after a sample of sample_s seconds; the first sample is taken whole.
inline double smoothed_rtt_ms(double rtt_ms, double sample_s) { return rtt_ms == 0 ? sample_s * 1000.0 : 0.8 * rtt_ms + 200.0 * sample_s; }

}  // namespace ks::net
