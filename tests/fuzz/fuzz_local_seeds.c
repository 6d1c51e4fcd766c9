/* fuzz-local-seeds DIR: writes one valid message of each local protocol
 * type to DIR/seed-<type>.bin, in fuzz-local's input form: a byte saying
 * how many descriptors travel with it, then the message, header included. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "vigil/insight.h"
#include "vigil/local_protocol.h"
#include "fuzz_seeds.h"
#include "test_local.h"

static size_t payload_of(enum vigil_local_type type, unsigned char *payload)
{
    switch (type) {
    case VIGIL_LOCAL_REGISTER: {
        const struct vigil_local_register fixed = test_local_register_fixed();
        char *argv[] = {"/usr/bin/dd", "if=/dev/zero", "", "count=1", NULL};
        return vigil_local_encode_register(payload, &fixed, "/usr/bin/dd", "/home/me", "4242",
                                           "slurm-4242.0", 4, argv);
    }
    case VIGIL_LOCAL_REGISTERED: {
        const struct vigil_local_registered m = {.process_id = 17};
        memcpy(payload, &m, sizeof m);
        return sizeof m;
    }
    case VIGIL_LOCAL_REFUSED: {
        static const char why[] = "run key slurm-1 belongs to another user";
        memcpy(payload, why, sizeof why - 1);
        return sizeof why - 1;
    }
    case VIGIL_LOCAL_RANK: {
        const struct vigil_local_rank m = {.rank = 3, .size = 4};
        memcpy(payload, &m, sizeof m);
        return sizeof m;
    }
    case VIGIL_LOCAL_SUMMARY_REQUEST:
    case VIGIL_LOCAL_STATUS_REQUEST: {
        const struct vigil_local_status_request m = {.finished_pid = 4242};
        memcpy(payload, &m, sizeof m);
        return type == VIGIL_LOCAL_STATUS_REQUEST ? sizeof m : 0;
    }
    case VIGIL_LOCAL_SUMMARY: {
        const struct vigil_local_summary m = test_local_summary();
        memcpy(payload, &m, sizeof m);
        return sizeof m;
    }
    case VIGIL_LOCAL_STATUS: {
        const struct vigil_local_status m = {.json_bytes = 4096};
        memcpy(payload, &m, sizeof m);
        return sizeof m;
    }
    case VIGIL_LOCAL_REPORT: {
        const struct vigil_local_report m = {.exit_code = 0, .json_bytes = 2048};
        memcpy(payload, &m, sizeof m);
        return sizeof m;
    }
    case VIGIL_LOCAL_JOB:
        return vigil_local_encode_job(payload, true, "4242", "0", "jörg", 1000, "node[01-04],gpu3",
                                      NULL);
    case VIGIL_LOCAL_JOB_NOTED:
        return 0;
    case VIGIL_LOCAL_REGISTERED_APART:
        return vigil_local_encode_registered_apart(payload, 17, "run-7@uid1",
                                                   "run run-7 is not uid 1's: its processes are "
                                                   "uid 65534's");
    case VIGIL_LOCAL_INSIGHT: {
        struct vigil_insight_thresholds m;
        vigil_insight_defaults(&m);
        memcpy(payload, &m, sizeof m);
        return sizeof m;
    }
    case VIGIL_LOCAL_SPOOL: {
        struct vigil_local_spool m = {.op = VIGIL_LOCAL_SPOOL_REPLAY};
        g_strlcpy(m.path, "/var/spool/vigil/segment-1.damaged", sizeof m.path);
        memcpy(payload, &m, sizeof m);
        return sizeof m;
    }
    }
    return 0;
}

static gboolean carries_descriptor(enum vigil_local_type type)
{
    return type == VIGIL_LOCAL_REGISTER || type == VIGIL_LOCAL_STATUS || type == VIGIL_LOCAL_REPORT;
}

int main(int argc, char **argv)
{
    const char *dir = seeds_dir(argc, argv);
    for (unsigned type = VIGIL_LOCAL_REGISTER; type <= VIGIL_LOCAL_INSIGHT; type++) {
        static _Alignas(8) unsigned char input[1 + VIGIL_LOCAL_MAX_BYTES];
        /* One descriptor, taken, where the protocol passes one. */
        input[0] = carries_descriptor(type) ? 1 | 4 : 0;
        size_t payload_bytes = payload_of(type, input + 1 + sizeof(struct vigil_local_header));
        const struct vigil_local_header header = {
            .magic = VIGIL_LOCAL_MAGIC,
            .version = VIGIL_LOCAL_VERSION,
            .type = (uint16_t)type,
            .payload_bytes = (uint32_t)payload_bytes,
        };
        memcpy(input + 1, &header, sizeof header);
        char *name = g_strdelimit(g_strdup(vigil_local_type_name(type)), " ", '-');
        char *file = g_strconcat(name, ".bin", NULL);
        write_seed_file(dir, file, input, 1 + sizeof header + payload_bytes);
        g_free(file);
        g_free(name);
    }
    return 0;
}
