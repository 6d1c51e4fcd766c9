/* The link between vigild and vigil-txd finds a vanished peer by TCP
 * keepalive and carries no ZMTP heartbeats: libzmq 4.3.4 aborts vigil-txd
 * (`Assertion failed: !_io_error (src/stream_engine_base.cpp:331)`) when a
 * connection whose input stopped at the receive high-water mark loses its
 * peer and then has a PING to send or to answer (vigil/link_liveness.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <zmq.h>

#include "txd.h"
#include "vigil/link_liveness.h"
#include "test_main.h"

static int option(void *socket, int name)
{
    int value = -1;
    size_t size = sizeof value;
    assert_int_equal(zmq_getsockopt(socket, name, &value, &size), 0);
    return value;
}

static void assert_tcp_liveness_only(void *socket)
{
    assert_int_equal(option(socket, ZMQ_HEARTBEAT_IVL), 0);
    assert_int_equal(option(socket, ZMQ_TCP_KEEPALIVE), 1);
    assert_int_equal(option(socket, ZMQ_TCP_KEEPALIVE_IDLE), VIGIL_LINK_KEEPALIVE_IDLE_S);
    assert_int_equal(option(socket, ZMQ_TCP_KEEPALIVE_INTVL), VIGIL_LINK_KEEPALIVE_INTVL_S);
    assert_int_equal(option(socket, ZMQ_TCP_KEEPALIVE_CNT), VIGIL_LINK_KEEPALIVE_CNT);
    /* TCP_USER_TIMEOUT would end a node's link to a vigil-txd that is
     * behind (a zero window): not set. */
    assert_int_equal(option(socket, ZMQ_TCP_MAXRT), 0);
}

/* vigil-txd's ROUTER stops a connection's input at receive_batches_per_node:
 * with that, no heartbeat of its own may tick. */
static void test_the_router_stops_input_without_zmtp_heartbeats(void **state)
{
    (void)state;
    void *context = zmq_ctx_new();
    GError *error = NULL;
    void *router = txd_router_new(context, 4, &error);
    assert_null(error);
    assert_non_null(router);
    assert_int_equal(option(router, ZMQ_RCVHWM), 4);
    assert_tcp_liveness_only(router);
    zmq_close(router);
    zmq_ctx_term(context);
}

/* vigild's DEALER (and fanin-load's nodes) send no PING for vigil-txd to
 * answer from a stopped connection. */
static void test_a_daemon_socket_sends_no_zmtp_pings(void **state)
{
    (void)state;
    void *context = zmq_ctx_new();
    void *dealer = zmq_socket(context, ZMQ_DEALER);
    int heartbeat_ms = 5000;
    assert_int_equal(zmq_setsockopt(dealer, ZMQ_HEARTBEAT_IVL, &heartbeat_ms, sizeof heartbeat_ms),
                     0);
    GError *error = NULL;
    assert_true(vigil_link_liveness_set(dealer, &error));
    assert_null(error);
    assert_tcp_liveness_only(dealer);
    zmq_close(dealer);
    zmq_ctx_term(context);
}

TEST_MAIN(cmocka_unit_test(test_the_router_stops_input_without_zmtp_heartbeats),
          cmocka_unit_test(test_a_daemon_socket_sends_no_zmtp_pings))
