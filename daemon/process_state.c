/* vigild — what a restarted vigild needs of the processes the last one
 * served: their registrations, their file names and their counts, kept in
 * files of [daemon] state_dir, and their rings, found again through /proc.
 *
 * Why /proc and not the processes themselves: a process learns that its
 * vigild went away only when it next talks to it, at its exit, and it must
 * not look on its hot path. Until then its ring fills and drops. vigild, as
 * root (or as the process's owner), can open /proc/PID/fd/N of the ring's
 * memfd, which gives the same memory back, recognised by the device and
 * inode it had at registration; a program that closed the descriptor
 * still maps the ring, and /proc/PID/map_files/ (CAP_SYS_ADMIN) finds it
 * there. The systemd file-descriptor store would do the same only under
 * systemd and only for a vigild that stored the descriptor before it died.
 * A process vigild cannot reach this way re-attaches at its exit
 * (REGISTER with VIGIL_LOCAL_REATTACH) and is drained then.
 *
 * Files, for a process registered as PID with its monotonic start START
 * (/proc's start time, kept inside, tells a pid used again):
 *   PID-START.process  a key file: the registration, written once
 *   PID-START.counts   its counts as of the ring's committed position,
 *                      rewritten in place at every cycle's end; its
 *                      energy and CPU time the newest, whatever the
 *                      position (nothing reads them again from the ring)
 *   PID-START.names    its file names as drained, appended: u32 file id,
 *                      u16 length, the path's bytes
 * Written without fsync: they must survive vigild, not the machine, and
 * the state folder is in /run, which a reboot empties along with the
 * processes it describes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <glib/gstdio.h>

#include "capture.h"
#include "process_state.h"
#include "processes.h"

#define GROUP_PROCESS "process"

/* DIR/PID-START.SUFFIX, START being the process's own monotonic start: an
 * exec'd program has the same pid and its own files. */
static char *state_path(const char *dir, pid_t pid, uint64_t start_ns, const char *suffix)
{
    char name[64];
    g_snprintf(name, sizeof name, "%d-%" PRIu64 ".%s", (int)pid, start_ns, suffix);
    return g_build_filename(dir, name, NULL);
}

const char *vigild_boot_id(void)
{
    static char id[64];
    if (id[0] == '\0') {
        char *text = NULL;
        if (g_file_get_contents("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
            g_strlcpy(id, g_strstrip(text), sizeof id);
        else
            g_strlcpy(id, "unknown", sizeof id);
        g_free(text);
    }
    return id;
}

uint64_t vigild_proc_start_ticks(pid_t pid)
{
    char path[64], text[1024];
    g_snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    /* The program's name may hold spaces and parentheses: fields are
     * counted from the last ')'. starttime is field 22, the 20th after it. */
    const char *p = strrchr(text, ')');
    for (int field = 2; p != NULL && field < 22; field++)
        p = strchr(p + 1, ' ');
    return p != NULL ? g_ascii_strtoull(p + 1, NULL, 10) : 0;
}

gboolean vigild_process_state_open_dir(const char *dir, GError **error)
{
    if (g_mkdir_with_parents(dir, 0700) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                    "[daemon] state_dir: cannot make %s: %s", dir, g_strerror(errno));
        return FALSE;
    }
    /* vigild takes back whatever processes this folder names: it must be
     * vigild's own folder, not a link or a folder someone else made. */
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
                    "[daemon] state_dir: %s is not a folder of vigild's own user (uid %u): "
                    "refusing to take processes back from it",
                    dir, (unsigned)geteuid());
        return FALSE;
    }
    /* It names every process's files and program: vigild's alone. */
    if (g_chmod(dir, 0700) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                    "[daemon] state_dir: cannot make %s private: %s", dir, g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* The counts, rewritten in place at every cycle's end by one pwrite of a
 * fixed size: no rename, whose forced writeback on ext4 (auto_da_alloc)
 * costs milliseconds, and no fsync. A CRC tells a torn one. Version 2 adds
 * when it was written: vigild saw the process running then, which bounds
 * the end of a process that ends before the next vigild runs. */
#define COUNTS_FIELDS                                                                              \
    uint32_t magic, version;                                                                       \
    uint64_t committed;                                                                            \
    uint64_t activities, names, corrupt, torn, dropped, seq_gaps, restart_lost, restarts;          \
    uint64_t observed, forwarded, dropped_by_capture, lost, cycles, abnormal_cycles, windows;      \
    double cpu_s, energy_j;                                                                        \
    uint32_t energy_flags, energy_shared;                                                          \
    int32_t mpi_rank, mpi_size
struct saved_counts {
    COUNTS_FIELDS;
    uint64_t saved_ns; /* CLOCK_MONOTONIC when written */
    uint32_t reserved, crc32;
};
/* As a vigild before version 2 wrote them: read, never written. */
struct saved_counts_v1 {
    COUNTS_FIELDS;
    uint32_t reserved, crc32;
};
/* The counts kept as the process has them (struct vigild_process, struct
 * vigild_recovered), and those kept as its capture counts have them
 * (field, then its name in struct vigild_capture_counts): what a save
 * writes and a restart reads back. */
#define PROCESS_COUNTS(X)                                                                          \
    X(names)                                                                                       \
    X(corrupt)                                                                                     \
    X(torn)                                                                                        \
    X(dropped)                                                                                     \
    X(seq_gaps)                                                                                    \
    X(restart_lost)                                                                                \
    X(restarts)                                                                                    \
    X(cpu_s)                                                                                       \
    X(energy_j)                                                                                    \
    X(energy_flags)                                                                                \
    X(mpi_rank)                                                                                    \
    X(mpi_size)
#define CAPTURE_COUNTS(X)                                                                          \
    X(forwarded, forwarded)                                                                        \
    X(dropped_by_capture, dropped)                                                                 \
    X(lost, lost)                                                                                  \
    X(cycles, cycles)                                                                              \
    X(abnormal_cycles, abnormal_cycles)                                                            \
    X(windows, windows)
#define COUNTS_MAGIC   0x53434756u /* "VGCS" */
#define COUNTS_VERSION 2u

static uint32_t counts_crc(const struct saved_counts *c)
{
    return (uint32_t)crc32_z(0, (const Bytef *)c, offsetof(struct saved_counts, crc32));
}

static uint32_t counts_v1_crc(const struct saved_counts_v1 *c)
{
    return (uint32_t)crc32_z(0, (const Bytef *)c, offsetof(struct saved_counts_v1, crc32));
}

/* The counts of either version, as version 2 (saved_ns 0 for version 1);
 * FALSE when they are neither, or torn. */
static gboolean counts_decode(const char *data, gsize length, struct saved_counts *c)
{
    if (length == sizeof *c) {
        memcpy(c, data, sizeof *c);
        return c->magic == COUNTS_MAGIC && c->version == COUNTS_VERSION &&
               c->crc32 == counts_crc(c);
    }
    struct saved_counts_v1 v1;
    if (length != sizeof v1)
        return FALSE;
    memcpy(&v1, data, sizeof v1);
    if (v1.magic != COUNTS_MAGIC || v1.version != 1 || v1.crc32 != counts_v1_crc(&v1))
        return FALSE;
    memset(c, 0, sizeof *c);
    memcpy(c, &v1, offsetof(struct saved_counts_v1, reserved));
    return TRUE;
}

/* Writes `data` to PATH in one call; `create` makes it new, else it is
 * rewritten in place. */
static void write_state_file(const char *path, const void *data, size_t length, gboolean create)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (create ? O_TRUNC : 0), 0600);
    if (fd < 0 || pwrite(fd, data, length, 0) != (ssize_t)length)
        g_warning_once("cannot keep the processes' state for a restart (%s: %s)", path,
                       g_strerror(errno));
    if (fd >= 0)
        close(fd);
}

void vigild_process_state_register(const char *dir, const struct vigild_process *p)
{
    GKeyFile *k = g_key_file_new();
    g_key_file_set_integer(k, GROUP_PROCESS, "pid", p->pid);
    g_key_file_set_uint64(k, GROUP_PROCESS, "uid", p->uid);
    g_key_file_set_uint64(k, GROUP_PROCESS, "proc_start_ticks", p->proc_start_ticks);
    g_key_file_set_uint64(k, GROUP_PROCESS, "ring_device", (guint64)p->ring_device);
    g_key_file_set_uint64(k, GROUP_PROCESS, "ring_inode", (guint64)p->ring_inode);
    g_key_file_set_uint64(k, GROUP_PROCESS, "ring_slots", p->ring_slots);
    g_key_file_set_uint64(k, GROUP_PROCESS, "tick_source", (guint64)p->tick_source);
    g_key_file_set_uint64(k, GROUP_PROCESS, "start_monotonic_ns", p->start_monotonic_ns);
    g_key_file_set_uint64(k, GROUP_PROCESS, "start_realtime_ns", p->start_realtime_ns);
    g_key_file_set_uint64(k, GROUP_PROCESS, "registered_ns", p->registered_ns);
    g_key_file_set_string(k, GROUP_PROCESS, "program", p->program);
    g_key_file_set_string(k, GROUP_PROCESS, "cwd", p->cwd);
    g_key_file_set_string(k, GROUP_PROCESS, "job", p->job);
    g_key_file_set_string(k, GROUP_PROCESS, "run_key", p->run_key);
    g_key_file_set_string_list(k, GROUP_PROCESS, "argv", (const char *const *)p->argv->pdata,
                               p->argv->len);
    g_key_file_set_boolean(k, GROUP_PROCESS, "argv_truncated", p->argv_truncated);
    g_key_file_set_string(k, GROUP_PROCESS, "boot_id", vigild_boot_id());
    gsize length;
    char *data = g_key_file_to_data(k, &length, NULL);
    char *path = state_path(dir, p->pid, p->start_monotonic_ns, "process");
    write_state_file(path, data, length, TRUE);
    g_free(path);
    g_free(data);
    g_key_file_free(k);
}

void vigild_process_state_save(const char *dir, const struct vigild_process *p,
                               const struct vigild_capture_counts *capture, uint64_t committed,
                               uint64_t held_activities, uint64_t kept_activities)
{
    /* As of `committed`: what lies after it is read again by the next
     * vigild, so it is not counted here. */
    struct saved_counts c = {
        .magic = COUNTS_MAGIC,
        .version = COUNTS_VERSION,
        .committed = committed,
        .activities = p->activities - MIN(held_activities + kept_activities, p->activities),
        .observed = capture->observed - MIN(held_activities, capture->observed),
        .energy_shared = (uint32_t)p->energy_shared,
        .saved_ns = vigil_clock_monotonic_ns(),
#define SAVE_PROCESS(field)          .field = p->field,
#define SAVE_CAPTURE(field, counted) .field = capture->counted,
        PROCESS_COUNTS(SAVE_PROCESS) CAPTURE_COUNTS(SAVE_CAPTURE)
#undef SAVE_PROCESS
#undef SAVE_CAPTURE
    };
    c.crc32 = counts_crc(&c);
    char *path = state_path(dir, p->pid, p->start_monotonic_ns, "counts");
    write_state_file(path, &c, sizeof c, FALSE);
    g_free(path);
}

void vigild_process_state_save_energy(const char *dir, const struct vigild_process *p)
{
    char *path = state_path(dir, p->pid, p->start_monotonic_ns, "counts");
    int fd = open(path, O_RDWR | O_CLOEXEC);
    char data[sizeof(struct saved_counts)];
    struct saved_counts c;
    if (fd >= 0 && pread(fd, data, sizeof data, 0) == (ssize_t)sizeof data &&
        counts_decode(data, sizeof data, &c)) {
        c.cpu_s = p->cpu_s;
        c.energy_j = p->energy_j;
        c.energy_flags = p->energy_flags;
        c.energy_shared = (uint32_t)p->energy_shared;
        c.saved_ns = vigil_clock_monotonic_ns();
        c.crc32 = counts_crc(&c);
        if (pwrite(fd, &c, sizeof c, 0) != (ssize_t)sizeof c)
            g_warning_once("cannot keep the processes' state for a restart (%s: %s)", path,
                           g_strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    g_free(path);
}

void vigild_process_state_add_name(const char *dir, const struct vigild_process *p,
                                   uint32_t file_id, const char *path, size_t length)
{
    char *file = state_path(dir, p->pid, p->start_monotonic_ns, "names");
    int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
        uint16_t bytes = (uint16_t)MIN(length, VIGIL_PATH_MAX);
        unsigned char head[6];
        memcpy(head, &file_id, 4);
        memcpy(head + 4, &bytes, 2);
        /* One write: a name is whole or missing, never cut, whatever kills
         * vigild (a file system can still cut it; reading stops there). */
        unsigned char *record = g_malloc(sizeof head + bytes);
        memcpy(record, head, sizeof head);
        memcpy(record + sizeof head, path, bytes);
        if (write(fd, record, sizeof head + bytes) != (ssize_t)(sizeof head + bytes))
            g_warning_once("cannot keep a process's file names for a restart: %s",
                           g_strerror(errno));
        g_free(record);
        close(fd);
    } else {
        g_warning_once("cannot keep a process's file names for a restart (%s: %s)", file,
                       g_strerror(errno));
    }
    g_free(file);
}

static const char *const suffixes[] = {"process", "counts", "names"};

void vigild_process_state_remove(const char *dir, pid_t pid, uint64_t start_monotonic_ns)
{
    for (guint i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        char *path = state_path(dir, pid, start_monotonic_ns, suffixes[i]);
        g_unlink(path);
        g_free(path);
    }
}

/* ---- recovery ------------------------------------------------------------ */

/* A descriptor of the memfd (device, inode) the process still has, opened
 * read-write through /proc; -1 with `why` when there is none we can open. */
static int find_ring(pid_t pid, dev_t device, ino_t inode, char **why)
{
    const char *folders[] = {"fd", "map_files"};
    int open_errno = 0;
    for (guint f = 0; f < G_N_ELEMENTS(folders); f++) {
        char *dir_path = g_strdup_printf("/proc/%d/%s", (int)pid, folders[f]);
        DIR *dir = opendir(dir_path);
        if (dir == NULL) {
            open_errno = open_errno != 0 ? open_errno : errno;
            g_free(dir_path);
            continue;
        }
        struct dirent *entry;
        int found = -1;
        while (found < 0 && (entry = readdir(dir)) != NULL) {
            if (entry->d_name[0] == '.')
                continue;
            char *path = g_build_filename(dir_path, entry->d_name, NULL);
            struct stat st;
            if (stat(path, &st) == 0 && st.st_dev == device && st.st_ino == inode) {
                found = open(path, O_RDWR | O_CLOEXEC);
                if (found < 0)
                    open_errno = errno;
            }
            g_free(path);
        }
        closedir(dir);
        g_free(dir_path);
        if (found >= 0)
            return found;
    }
    *why = g_strdup_printf("its ring is not reachable through /proc/%d (%s)", (int)pid,
                           open_errno != 0 ? g_strerror(open_errno) : "not found");
    return -1;
}

/* The counts as the last cycle's end left them; zero (logged, FALSE) when
 * the file is missing, short or torn: the ring is still taken back. */
static gboolean read_counts(const char *dir, struct vigild_recovered *r)
{
    char *path = state_path(dir, r->pid, r->start_monotonic_ns, "counts");
    gchar *data = NULL;
    gsize length = 0;
    struct saved_counts c;
    r->mpi_rank = r->mpi_size = -1;
    r->cpu_s = r->energy_j = NAN;
    gboolean read = FALSE;
    if (!g_file_get_contents(path, &data, &length, NULL)) {
        g_message("restart: %s is missing: process %d's counts start again", path, (int)r->pid);
    } else {
        if (!counts_decode(data, length, &c)) {
            g_message("restart: %s is damaged (%zu bytes): process %d's counts start again", path,
                      (size_t)length, (int)r->pid);
        } else {
            r->saved_ns = c.saved_ns;
            r->committed = c.committed;
            r->activities = c.activities;
            r->capture.observed = c.observed;
            r->energy_shared = c.energy_shared != 0;
#define READ_PROCESS(field)          r->field = c.field;
#define READ_CAPTURE(field, counted) r->capture.counted = c.field;
            PROCESS_COUNTS(READ_PROCESS)
            CAPTURE_COUNTS(READ_CAPTURE)
#undef READ_PROCESS
#undef READ_CAPTURE
            read = TRUE;
        }
    }
    g_free(data);
    g_free(path);
    return read;
}

static void read_names(const char *dir, struct vigild_recovered *r)
{
    char *path = state_path(dir, r->pid, r->start_monotonic_ns, "names");
    gchar *data = NULL;
    gsize length = 0;
    if (g_file_get_contents(path, &data, &length, NULL)) {
        gsize at = 0;
        while (at + 6 <= length) {
            uint32_t file_id;
            uint16_t bytes;
            memcpy(&file_id, data + at, 4);
            memcpy(&bytes, data + at + 4, 2);
            if (at + 6 + bytes > length)
                break; /* cut by the file system: the rest is missing */
            char *name = g_strndup(data + at + 6, bytes);
            g_array_append_val(r->name_ids, file_id);
            g_ptr_array_add(r->name_paths, name);
            at += 6 + (gsize)bytes;
        }
    }
    g_free(data);
    g_free(path);
}

void vigild_recovered_free(struct vigild_recovered *r)
{
    if (r == NULL)
        return;
    g_free(r->program);
    g_free(r->cwd);
    g_free(r->job);
    g_free(r->run_key);
    g_strfreev(r->argv);
    g_array_free(r->name_ids, TRUE);
    g_ptr_array_free(r->name_paths, TRUE);
    if (r->ring_fd >= 0)
        close(r->ring_fd);
    g_free(r);
}

/* One state file back: NULL, with `why` for the log, when its process is
 * gone, is another process now, or its ring cannot be reached. */
static struct vigild_recovered *recover_one(const char *dir, const char *file, char **why)
{
    GKeyFile *k = g_key_file_new();
    GError *error = NULL;
    char *path = g_build_filename(dir, file, NULL);
    struct vigild_recovered *r = NULL;
    if (!g_key_file_load_from_file(k, path, G_KEY_FILE_NONE, &error)) {
        *why = g_strdup_printf("%s: %s", path, error->message);
        g_error_free(error);
        goto out;
    }
    r = g_new0(struct vigild_recovered, 1);
    r->ring_fd = -1;
    r->name_ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    r->name_paths = g_ptr_array_new_with_free_func(g_free);
    r->pid = g_key_file_get_integer(k, GROUP_PROCESS, "pid", NULL);
    r->start_monotonic_ns = g_key_file_get_uint64(k, GROUP_PROCESS, "start_monotonic_ns", NULL);
    r->uid = (uid_t)g_key_file_get_uint64(k, GROUP_PROCESS, "uid", NULL);
    uint64_t start_ticks = g_key_file_get_uint64(k, GROUP_PROCESS, "proc_start_ticks", NULL);
    r->program = g_key_file_get_string(k, GROUP_PROCESS, "program", NULL);
    r->cwd = g_key_file_get_string(k, GROUP_PROCESS, "cwd", NULL);
    r->job = g_key_file_get_string(k, GROUP_PROCESS, "job", NULL);
    r->run_key = g_key_file_get_string(k, GROUP_PROCESS, "run_key", NULL);
    r->argv = g_key_file_get_string_list(k, GROUP_PROCESS, "argv", NULL, NULL);
    if (r->pid <= 0 || r->program == NULL || r->cwd == NULL || r->job == NULL ||
        r->run_key == NULL || r->argv == NULL) {
        *why = g_strdup_printf("%s: incomplete", path);
        goto fail;
    }
    r->proc_start_ticks = start_ticks;
    r->ring_slots = (uint32_t)g_key_file_get_uint64(k, GROUP_PROCESS, "ring_slots", NULL);
    r->tick_source = (uint32_t)g_key_file_get_uint64(k, GROUP_PROCESS, "tick_source", NULL);
    r->start_realtime_ns = g_key_file_get_uint64(k, GROUP_PROCESS, "start_realtime_ns", NULL);
    r->registered_ns = g_key_file_get_uint64(k, GROUP_PROCESS, "registered_ns", NULL);
    r->argv_truncated = g_key_file_get_boolean(k, GROUP_PROCESS, "argv_truncated", NULL);
    if (start_ticks == 0 || vigild_proc_start_ticks(r->pid) != start_ticks) {
        /* Ended (or its pid is another process's now) while no vigild ran:
         * its end is known as a bound, on this boot's clock only. */
        char *boot = g_key_file_get_string(k, GROUP_PROCESS, "boot_id", NULL);
        gboolean other_boot = boot != NULL && g_strcmp0(boot, vigild_boot_id()) != 0;
        g_free(boot);
        if (other_boot) {
            *why = g_strdup_printf("process %d (%s) ran before the machine restarted: its end "
                                   "cannot be told",
                                   (int)r->pid, r->program);
            goto fail;
        }
        r->ended = TRUE;
    } else {
        r->ring_fd =
            find_ring(r->pid, (dev_t)g_key_file_get_uint64(k, GROUP_PROCESS, "ring_device", NULL),
                      (ino_t)g_key_file_get_uint64(k, GROUP_PROCESS, "ring_inode", NULL), why);
        if (r->ring_fd < 0)
            goto fail;
    }
    gboolean counts_read = read_counts(dir, r);
    read_names(dir, r);
    /* A name is appended as it is drained, and counted at the cycle's end:
     * fewer in the file than counted means some were lost with it. */
    r->names_complete = counts_read && r->name_ids->len >= r->names;
    if (!r->names_complete)
        g_message("restart: process %d (%s): %u file names kept of %" G_GUINT64_FORMAT " drained",
                  (int)r->pid, r->program, r->name_ids->len, r->names);
    goto out;
fail:
    vigild_recovered_free(r);
    r = NULL;
out:
    g_free(path);
    g_key_file_free(k);
    return r;
}

GPtrArray *vigild_process_state_recover(const char *dir)
{
    GPtrArray *found = g_ptr_array_new_with_free_func((GDestroyNotify)vigild_recovered_free);
    GDir *d = g_dir_open(dir, 0, NULL);
    if (d == NULL)
        return found;
    const char *name;
    GPtrArray *gone = g_ptr_array_new_with_free_func(g_free);
    while ((name = g_dir_read_name(d)) != NULL) {
        if (!g_str_has_suffix(name, ".process"))
            continue;
        char *why = NULL;
        struct vigild_recovered *r = recover_one(dir, name, &why);
        if (r != NULL) {
            g_ptr_array_add(found, r);
        } else {
            g_message("restart: %s; its state is forgotten", why);
            g_ptr_array_add(gone, g_strndup(name, strlen(name) - strlen("process")));
        }
        g_free(why);
    }
    g_dir_close(d);
    for (guint i = 0; i < gone->len; i++) {
        const char *stem = g_ptr_array_index(gone, i); /* "PID-START." */
        for (guint j = 0; j < G_N_ELEMENTS(suffixes); j++) {
            char *file = g_strconcat(stem, suffixes[j], NULL);
            char *path = g_build_filename(dir, file, NULL);
            g_unlink(path);
            g_free(path);
            g_free(file);
        }
    }
    g_ptr_array_free(gone, TRUE);
    return found;
}
