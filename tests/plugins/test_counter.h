/* The ops of the test plugin "provider-test-counter": the tests call them
 * to show that a loaded plugin runs with its own configuration. */
#ifndef VIGIL_TEST_COUNTER_H
#define VIGIL_TEST_COUNTER_H

#include <glib.h>

struct test_counter_ops {
    gint64 (*next)(void *instance);
    const char *(*label)(void *instance);
};

#endif
