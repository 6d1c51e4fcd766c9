/* vigil — reading the JSON reports of libvigil-preload.so in tests: load
 * one, and look its values up by dotted path ("activities.dropped",
 * "layers.posix.write.calls", "argv.1"). Every lookup but the *_node ones
 * fails the test, naming the report and the path, when the value is not
 * there or not of its type. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_REPORT_H
#define VIGIL_TEST_REPORT_H

#include <glib.h>
#include <json-glib/json-glib.h>

struct test_report {
    JsonParser *parser;
    JsonObject *root;
    char *path;
};

/* Loads the report at `path`, which must exist, be JSON and be a vigil
 * report ("vigil_report": 1). test_report_free it. */
struct test_report test_report_load(const char *path);
void test_report_free(struct test_report *rep);

/* The same lookups in any JSON document: from `root`, with `where` naming
 * the document in failure messages. A part that is a number indexes an
 * array. test_json_node gives NULL where there is nothing. */
JsonNode *test_json_node(JsonNode *root, const char *dotted);
gint64 test_json_int(JsonNode *root, const char *where, const char *dotted);
double test_json_number(JsonNode *root, const char *where, const char *dotted); /* int or not */
const char *test_json_string(JsonNode *root, const char *where, const char *dotted);
JsonObject *test_json_object(JsonNode *root, const char *where, const char *dotted);

JsonNode *test_report_node(const struct test_report *rep, const char *dotted);
gint64 test_report_int(const struct test_report *rep, const char *dotted);
double test_report_number(const struct test_report *rep, const char *dotted);
const char *test_report_string(const struct test_report *rep, const char *dotted);
JsonObject *test_report_object(const struct test_report *rep, const char *dotted);
/* The report's code region `name` (of its "regions"), which must be there. */
JsonObject *test_report_region(const struct test_report *rep, const char *name);

/* A field ("calls", "bytes", "errors") of operation `op` of `layer`
 * ("posix", "stdio", "mpiio"). The layer must be there; an operation
 * nobody called is left out of the report, and counts 0. */
gint64 test_report_op(const struct test_report *rep, const char *layer, const char *op,
                      const char *field);

#endif
