/* vigil — the run key (vigil/run_key.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/run_key.h"

bool vigil_run_key_valid(const char *key, size_t length)
{
    if (key == NULL || length == 0 || length > VIGIL_RUN_KEY_MAX)
        return false;
    for (size_t i = 0; i < length; i++)
        if (key[i] < 0x21 || key[i] > 0x7e)
            return false;
    return true;
}

/* "PREFIX" VALUE [".SUFFIX"] into out, when it makes a valid key. */
static bool compose(char *out, const char *prefix, const char *value, const char *suffix)
{
    if (value == NULL || value[0] == '\0')
        return false;
    char key[VIGIL_RUN_KEY_MAX + 2];
    int n = snprintf(key, sizeof key, "%s%s%s%s", prefix, value,
                     suffix != NULL && suffix[0] != '\0' ? "." : "", suffix != NULL ? suffix : "");
    if (n < 0 || !vigil_run_key_valid(key, (size_t)n) || (size_t)n >= sizeof key)
        return false;
    memcpy(out, key, (size_t)n + 1);
    return true;
}

enum vigil_run_key_origin vigil_run_key_from_environment(char *out, struct vigil_error *problem)
{
    vigil_error_set(problem, "%s", "");
    const char *given = getenv("VIGIL_RUN_ID");
    if (given != NULL) {
        if (compose(out, "", given, NULL))
            return VIGIL_RUN_KEY_GIVEN;
        vigil_error_set(problem,
                        "VIGIL_RUN_ID is not 1 to %d printable ASCII characters without "
                        "spaces",
                        VIGIL_RUN_KEY_MAX);
    }
    /* A batch script has a job id but no step. */
    if (compose(out, "slurm-", getenv("SLURM_JOB_ID"), getenv("SLURM_STEP_ID")))
        return VIGIL_RUN_KEY_SLURM;
    if (compose(out, "pmix-", getenv("PMIX_NAMESPACE"), NULL))
        return VIGIL_RUN_KEY_PMIX;
    return VIGIL_RUN_KEY_NONE;
}

void vigil_run_key_fresh(char *out, const char *host, int pid, uint64_t realtime_ns)
{
    char clean[64];
    size_t n = 0;
    for (const char *h = host != NULL ? host : ""; *h != '\0' && n < sizeof clean - 1; h++) {
        char c = *h;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '-' || c == '_';
        clean[n++] = plain ? c : '_';
    }
    clean[n] = '\0';
    snprintf(out, VIGIL_RUN_KEY_MAX + 1, "%s-%d-%" PRIu64, n > 0 ? clean : "host", pid,
             realtime_ns);
}

/* FNV-1a, 64-bit: small, and the same everywhere (vigild and vigil-txd
 * must derive the same key). */
static uint64_t fnv1a64(const char *text)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        h ^= *p;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

void vigil_run_key_apart(char *out, const char *key, uint32_t uid)
{
    char suffix[16];
    size_t suffix_bytes = (size_t)snprintf(suffix, sizeof suffix, "@uid%" PRIu32, uid);
    size_t key_bytes = strnlen(key, VIGIL_RUN_KEY_MAX);
    char *at = out;
    if (key_bytes + suffix_bytes <= VIGIL_RUN_KEY_MAX) {
        memcpy(at, key, key_bytes);
        at += key_bytes;
    } else {
        /* Cut, and "~" and 16 hex digits in place of what was cut. */
        size_t kept = VIGIL_RUN_KEY_MAX - suffix_bytes - 17;
        memcpy(at, key, kept);
        at += kept;
        char hash[18];
        snprintf(hash, sizeof hash, "~%016" PRIx64, fnv1a64(key));
        memcpy(at, hash, 17);
        at += 17;
    }
    memcpy(at, suffix, suffix_bytes + 1);
}

bool vigil_run_key_owner(const char *key, uint32_t *uid)
{
    const char *at = strrchr(key, '@');
    if (at == NULL || strncmp(at, "@uid", 4) != 0)
        return false;
    const char *digits = at + 4;
    size_t n = strlen(digits);
    if (n == 0 || n > 10 || (digits[0] == '0' && n > 1))
        return false;
    uint64_t value = 0;
    for (size_t i = 0; i < n; i++) {
        if (digits[i] < '0' || digits[i] > '9')
            return false;
        value = value * 10 + (uint64_t)(digits[i] - '0');
    }
    if (value > UINT32_MAX)
        return false;
    *uid = (uint32_t)value;
    return true;
}

bool vigil_run_key_scheduler_job(const char *key, char *job, size_t job_size)
{
    static const char prefix[] = "slurm-";
    if (strncmp(key, prefix, sizeof prefix - 1) != 0)
        return false;
    const char *start = key + sizeof prefix - 1;
    size_t n = strcspn(start, ".");
    if (n == 0 || n >= job_size || memchr(start, '@', n) != NULL)
        return false;
    memcpy(job, start, n);
    job[n] = '\0';
    return true;
}
