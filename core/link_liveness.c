/* vigil — the link's liveness options (vigil/link_liveness.h says why they
 * are TCP's and not ZeroMQ's heartbeats). */
#include <gio/gio.h>
#include <zmq.h>

#include "vigil/link_liveness.h"

static const struct {
    int option;
    const char *name;
    int value;
} link_options[] = {
    {ZMQ_HEARTBEAT_IVL, "ZMQ_HEARTBEAT_IVL", 0},
    {ZMQ_TCP_KEEPALIVE, "ZMQ_TCP_KEEPALIVE", 1},
    {ZMQ_TCP_KEEPALIVE_IDLE, "ZMQ_TCP_KEEPALIVE_IDLE", VIGIL_LINK_KEEPALIVE_IDLE_S},
    {ZMQ_TCP_KEEPALIVE_INTVL, "ZMQ_TCP_KEEPALIVE_INTVL", VIGIL_LINK_KEEPALIVE_INTVL_S},
    {ZMQ_TCP_KEEPALIVE_CNT, "ZMQ_TCP_KEEPALIVE_CNT", VIGIL_LINK_KEEPALIVE_CNT},
};

gboolean vigil_link_liveness_set(void *zmq_socket, GError **error)
{
    for (gsize i = 0; i < G_N_ELEMENTS(link_options); i++)
        if (zmq_setsockopt(zmq_socket, link_options[i].option, &link_options[i].value,
                           sizeof link_options[i].value) != 0) {
            int e = zmq_errno();
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot set %s: %s",
                        link_options[i].name, zmq_strerror(e));
            return FALSE;
        }
    return TRUE;
}
