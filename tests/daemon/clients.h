/* vigil — test clients of vigild that speak the local protocol directly,
 * without the preload library: each makes its own ring, registers it and
 * writes known records, or misbehaves in one chosen way. They run in
 * forked children of the test. */
#ifndef VIGIL_TEST_DAEMON_CLIENTS_H
#define VIGIL_TEST_DAEMON_CLIENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "vigil/ring.h"

/* A connection to the socket at `path`; -1 when none. */
int client_connect(const char *path);

/* A ring of `slots` in monotonic ns, registered on `fd` as program
 * "test-client"; waits for REGISTERED when `wait_answer`. Exits the child
 * with status 90 when anything fails. */
struct vigil_ring *client_register(int fd, uint32_t slots, bool wait_answer);

/* A connection to `path` (exits the child with status 92 when there is
 * none) and a ring of `slots` registered on it, as client_register. */
struct vigil_ring *client_start(const char *path, uint32_t slots, bool wait_answer);

/* Pushes `n` valid activities; exits with 91 if the ring is full. */
void client_push(struct vigil_ring *ring, uint64_t n);

#endif
