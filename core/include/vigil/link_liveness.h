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
 * CNT unanswered probes. Data sent and never acknowledged is TCP's
 * retransmission timeout's (net.ipv4.tcp_retries2: about 15 minutes). No
 * ZMQ_TCP_MAXRT: TCP_USER_TIMEOUT also ends a link whose peer is alive but
 * reads nothing (a zero window, measured: 2 s set, ETIMEDOUT at 3 s), which
 * is a node's link to a vigil-txd that is behind. */
#define VIGIL_LINK_KEEPALIVE_IDLE_S  5
#define VIGIL_LINK_KEEPALIVE_INTVL_S 5
#define VIGIL_LINK_KEEPALIVE_CNT     3

/* Sets them on a ZeroMQ socket (before its bind or connect) and switches
 * its ZMTP heartbeats off; an error names the option. */
gboolean vigil_link_liveness_set(void *zmq_socket, GError **error);

#endif
