/* vigil — how vigild and vigil-txd each find the other end of their link
 * gone: TCP keepalive and a retransmission bound, not ZeroMQ heartbeats.
 *
 * libzmq 4.3.4 (Debian 12's) aborts with `Assertion failed: !_io_error
 * (src/stream_engine_base.cpp:331)` when a connection whose input it
 * stopped (its receive high-water mark reached: vigil-txd's
 * receive_batches_per_node) loses its peer and then has a ZMTP PING to send
 * (its own heartbeat tick) or a PING of the peer's to answer (read after
 * the stop). Upstream issues zeromq/libzmq#4364 and #3937, open. Without
 * ZMTP heartbeats on either end nothing reaches that path; TCP finds a
 * vanished host as they did. */
#ifndef VIGIL_LINK_LIVENESS_H
#define VIGIL_LINK_LIVENESS_H

#include <glib.h>

/* A silent link is probed after IDLE s, every INTVL s, and given up after
 * CNT unanswered probes; data unacknowledged for MAXRT ms ends it too. */
#define VIGIL_LINK_KEEPALIVE_IDLE_S  5
#define VIGIL_LINK_KEEPALIVE_INTVL_S 5
#define VIGIL_LINK_KEEPALIVE_CNT     3
#define VIGIL_LINK_MAXRT_MS          20000

/* Sets them on a ZeroMQ socket (before its bind or connect) and switches
 * its ZMTP heartbeats off; an error names the option. */
gboolean vigil_link_liveness_set(void *zmq_socket, GError **error);

#endif
