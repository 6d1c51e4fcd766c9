/* vigil-txd — the ROUTER the daemons connect to, and its options. */
#include <zmq.h>

#include "txd.h"
#include "vigil/link_liveness.h"

void *txd_router_new(void *context, guint receive_batches_per_node, GError **error)
{
    void *router = zmq_socket(context, ZMQ_ROUTER);
    if (router == NULL) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_REFUSE, "cannot make the ROUTER socket: %s",
                    zmq_strerror(zmq_errno()));
        return NULL;
    }
    int zero = 0, on = 1;
    zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof zero);
    /* A daemon's routing id is its node id. When its node crashed, the old
     * connection may look alive for a while; the restarted daemon's new one
     * must take its place rather than be turned away, and TCP keepalive
     * finds the dead one. */
    zmq_setsockopt(router, ZMQ_ROUTER_HANDOVER, &on, sizeof on);
    /* No frame larger than the largest message: a peer cannot make us
     * allocate gigabytes. */
    int64_t max_message_bytes = (int64_t)VIGIL_WIRE_HEADER_BYTES + VIGIL_WIRE_MAX_PAYLOAD_BYTES;
    zmq_setsockopt(router, ZMQ_MAXMSGSIZE, &max_message_bytes, sizeof max_message_bytes);
    /* ZeroMQ queues up to this many messages per connection before we
     * read them (1,000 by default): with thousands of nodes each keeping
     * up to 64 batches in flight, that was most of our memory (900 MiB
     * for 2,000 minimal nodes). Past it a node's batches wait in its own
     * queue and spool, which is where they belong. That stops the
     * connection's input, which is why there are no ZMTP heartbeats
     * (vigil/link_liveness.h). */
    int receive_hwm = (int)receive_batches_per_node;
    zmq_setsockopt(router, ZMQ_RCVHWM, &receive_hwm, sizeof receive_hwm);
    GError *local = NULL;
    if (!vigil_link_liveness_set(router, &local)) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_REFUSE, "the ROUTER socket: %s", local->message);
        g_error_free(local);
        zmq_close(router);
        return NULL;
    }
    return router;
}
