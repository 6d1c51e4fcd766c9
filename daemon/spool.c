/* vigild — the spool: batches vigil-txd has not acknowledged, on disk.
 *
 * Segment files SPOOL_DIR/<first sequence as 20 digits>.spool hold whole
 * BATCH messages one after another; the wire header says how long each is
 * and carries a CRC, so a file needs no index of its own and damage is
 * found when it is read back. A segment is appended to until it reaches
 * segment_max_bytes, fdatasync'd when it is closed, and deleted when every
 * batch in it has been acknowledged. The bound counts the segments' size on
 * disk, acknowledged batches included, since that is what fills the disk.
 *
 * The folder also holds `lock` (flock: one vigild per spool), `sequence`
 * (see the end of this file) and `refused/`, which the uplink writes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vigil/wire.h"
#include "spool.h"
#include "spool_scan.h"
#include "uplink_drops.h"

#define SEGMENT_MAX_BYTES (16u << 20)
#define SEGMENT_SUFFIX    ".spool"
#define SEGMENT_DIGITS    20
#define SEQUENCE_RESERVE  4096

struct segment {
    uint64_t first_sequence;
    char *path;
    uint64_t bytes;    /* the file's size */
    GArray *sequences; /* uint64_t: every batch written to it, in order */
    guint unacked;     /* of those, still in the index */
    uint64_t unacked_bytes;
};

struct location {
    uint64_t sequence; /* the index's key */
    struct segment *segment;
    uint64_t offset;
    uint32_t length;
};

struct vigild_spool {
    char *dir;
    int lock_fd;
    uint64_t max_bytes;
    uint64_t segment_max_bytes;
    GQueue segments;        /* struct segment *, oldest first */
    struct segment *active; /* the newest, open for appending; NULL when none */
    int active_fd;
    GHashTable *index;          /* uint64_t sequence → struct location * */
    uint64_t bytes;             /* the sum of the segments' sizes */
    struct vigild_drops *drops; /* counts what the bound drops; NULL: not counted */
    struct vigild_spool_stats counts;
};

static gboolean set_errno_error(GError **error, int e, const char *format, ...) G_GNUC_PRINTF(3, 4);

static gboolean set_errno_error(GError **error, int e, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *what = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", what, g_strerror(e));
    g_free(what);
    return FALSE;
}

static gboolean write_all(int fd, const uint8_t *data, size_t length)
{
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return FALSE;
        }
        data += n;
        length -= (size_t)n;
    }
    return TRUE;
}

/* A new name in a folder is durable only once the folder is synced. */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* ---- segments ----------------------------------------------------------- */

static struct segment *segment_new(const char *dir, uint64_t first_sequence)
{
    struct segment *s = g_new0(struct segment, 1);
    s->first_sequence = first_sequence;
    char name[SEGMENT_DIGITS + sizeof SEGMENT_SUFFIX];
    snprintf(name, sizeof name, "%020" PRIu64 SEGMENT_SUFFIX, first_sequence);
    s->path = g_build_filename(dir, name, NULL);
    s->sequences = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    return s;
}

static void segment_free(struct segment *s)
{
    g_array_free(s->sequences, TRUE);
    g_free(s->path);
    g_free(s);
}

static void index_add(struct vigild_spool *spool, struct segment *s, uint64_t sequence,
                      uint64_t offset, uint32_t length)
{
    struct location *l = g_new(struct location, 1);
    l->sequence = sequence;
    l->segment = s;
    l->offset = offset;
    l->length = length;
    g_hash_table_insert(spool->index, &l->sequence, l);
    g_array_append_val(s->sequences, sequence);
    s->unacked++;
    s->unacked_bytes += length;
}

static void close_active(struct vigild_spool *spool)
{
    if (spool->active == NULL)
        return;
    if (fdatasync(spool->active_fd) != 0) {
        spool->counts.errors++;
        g_warning("spool %s: fdatasync: %s", spool->active->path, g_strerror(errno));
    }
    close(spool->active_fd);
    spool->active_fd = -1;
    spool->active = NULL;
}

/* What the unacknowledged batches of a segment about to go carried, per
 * process, read back from its file. */
static void count_dropped(struct vigild_spool *spool, const struct segment *s)
{
    if (spool->drops == NULL || s->unacked == 0)
        return;
    gchar *contents = NULL;
    gsize size = 0;
    gboolean readable = g_file_get_contents(s->path, &contents, &size, NULL);
    for (guint i = 0; i < s->sequences->len; i++) {
        uint64_t sequence = g_array_index(s->sequences, uint64_t, i);
        const struct location *l = g_hash_table_lookup(spool->index, &sequence);
        if (l == NULL || l->segment != s)
            continue;
        if (readable && l->offset + l->length <= size)
            vigild_drops_count_batch(spool->drops, (const uint8_t *)contents + l->offset,
                                     l->length);
        else
            vigild_drops_count_unknown(spool->drops);
    }
    g_free(contents);
}

/* Deletes a segment and forgets its batches; those still unacknowledged
 * are appended to `dropped` when it is not NULL (and counted as dropped). */
static void segment_delete(struct vigild_spool *spool, struct segment *s, GArray *dropped)
{
    if (dropped != NULL)
        count_dropped(spool, s);
    if (s == spool->active)
        close_active(spool);
    for (guint i = 0; i < s->sequences->len; i++) {
        uint64_t sequence = g_array_index(s->sequences, uint64_t, i);
        struct location *l = g_hash_table_lookup(spool->index, &sequence);
        if (l == NULL || l->segment != s)
            continue;
        if (dropped != NULL)
            g_array_append_val(dropped, sequence);
        g_hash_table_remove(spool->index, &sequence);
    }
    if (unlink(s->path) != 0 && errno != ENOENT) {
        spool->counts.errors++;
        g_warning("spool: cannot delete %s: %s", s->path, g_strerror(errno));
    }
    spool->bytes -= s->bytes;
    g_queue_remove(&spool->segments, s);
    segment_free(s);
}

/* ---- reading back at open ----------------------------------------------- */

/* A damaged stretch of a file, kept beside it: appended to NAME.damaged,
 * where `vigil spool check` shows it and `vigil spool replay` takes back
 * whatever in it can still be read. */
static void keep_aside(struct vigild_spool *spool, const char *path, const uint8_t *data,
                       const struct vigild_spool_piece *damage)
{
    char *aside = g_strconcat(path, ".damaged", NULL);
    int fd = open(aside, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    size_t offset = (size_t)damage->offset_bytes, length = (size_t)damage->length_bytes;
    gboolean kept = fd >= 0 && write_all(fd, data + offset, length) && fsync(fd) == 0;
    int e = errno;
    if (fd >= 0)
        close(fd);
    spool->counts.corrupt++;
    spool->counts.corrupt_bytes += length;
    if (kept)
        g_warning("spool %s: bytes %zu to %zu (%zu bytes) are damaged (%s) and skipped: the next "
                  "intact batch starts after them; they are kept in %s and not replayed",
                  path, offset, offset + length, length, damage->why, aside);
    else
        g_warning("spool %s: bytes %zu to %zu (%zu bytes) are damaged (%s) and skipped; they "
                  "could not be kept in %s (%s) and are lost",
                  path, offset, offset + length, length, damage->why, aside, g_strerror(e));
    g_free(aside);
}

/* Writes the file again with only its good messages. */
static gboolean rewrite_segment(struct vigild_spool *spool, struct segment *s, const uint8_t *data,
                                const GArray *good)
{
    if (good->len == 0)
        return unlink(s->path) == 0 || errno == ENOENT;
    char *tmp = g_strconcat(s->path, ".tmp", NULL);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    gboolean ok = fd >= 0;
    for (guint i = 0; ok && i < good->len; i++) {
        const struct location *l = &g_array_index(good, struct location, i);
        ok = write_all(fd, data + l->offset, l->length);
    }
    ok = ok && fdatasync(fd) == 0;
    if (fd >= 0)
        close(fd);
    ok = ok && rename(tmp, s->path) == 0;
    if (ok)
        sync_dir(spool->dir);
    if (!ok) {
        g_warning("spool %s: cannot rewrite it without its damaged part: %s", s->path,
                  g_strerror(errno));
        spool->counts.errors++;
        unlink(tmp);
    }
    g_free(tmp);
    return ok;
}

static void read_segment(struct vigild_spool *spool, uint64_t first_sequence)
{
    struct segment *s = segment_new(spool->dir, first_sequence);
    gchar *contents = NULL;
    gsize size = 0;
    GError *error = NULL;
    if (!g_file_get_contents(s->path, &contents, &size, &error)) {
        g_warning("spool: cannot read %s: %s; it is left as it is", s->path, error->message);
        spool->counts.errors++;
        g_error_free(error);
        segment_free(s);
        return;
    }
    const uint8_t *data = (const uint8_t *)contents;
    GArray *good = g_array_new(FALSE, FALSE, sizeof(struct location));
    gboolean damaged = FALSE;
    GArray *pieces = vigild_spool_scan(data, size);
    for (guint i = 0; i < pieces->len; i++) {
        const struct vigild_spool_piece *piece =
            &g_array_index(pieces, struct vigild_spool_piece, i);
        if (piece->damaged) {
            damaged = TRUE;
            keep_aside(spool, s->path, data, piece);
            continue;
        }
        struct location l = {piece->sequence, s, piece->offset_bytes,
                             (uint32_t)piece->length_bytes};
        g_array_append_val(good, l);
    }
    vigild_spool_scan_free(pieces);
    /* When the file cannot be rewritten, its good batches are still read
     * where they are; the damage stays in it, kept aside already. */
    if (damaged && !rewrite_segment(spool, s, data, good))
        damaged = FALSE;
    /* Offsets move when the file is rewritten without its damage. */
    uint64_t at = 0;
    for (guint i = 0; i < good->len; i++) {
        struct location *l = &g_array_index(good, struct location, i);
        if (g_hash_table_contains(spool->index, &l->sequence)) {
            /* A batch written twice: the first copy is the one kept. */
            g_message("spool %s: batch %" PRIu64 " is also in an earlier segment", s->path,
                      l->sequence);
        } else {
            index_add(spool, s, l->sequence, damaged ? at : l->offset, l->length);
        }
        at += l->length;
    }
    s->bytes = damaged ? at : size;
    g_array_free(good, TRUE);
    g_free(contents);
    spool->bytes += s->bytes;
    g_queue_push_tail(&spool->segments, s);
    if (s->unacked == 0)
        segment_delete(spool, s, NULL);
}

static int compare_u64(gconstpointer a, gconstpointer b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The first sequences of the segment files in the folder, ascending. */
static GArray *list_segments(const char *dir, GError **error)
{
    GDir *d = g_dir_open(dir, 0, error);
    if (d == NULL)
        return NULL;
    GArray *firsts = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        if (strlen(name) != SEGMENT_DIGITS + strlen(SEGMENT_SUFFIX) ||
            !g_str_has_suffix(name, SEGMENT_SUFFIX))
            continue;
        char *end;
        errno = 0;
        uint64_t first = g_ascii_strtoull(name, &end, 10);
        if (errno == 0 && end == name + SEGMENT_DIGITS)
            g_array_append_val(firsts, first);
    }
    g_dir_close(d);
    g_array_sort(firsts, compare_u64);
    return firsts;
}

struct vigild_spool *vigild_spool_open(const char *dir, uint64_t max_bytes, GError **error)
{
    if (g_mkdir_with_parents(dir, 0700) != 0) {
        set_errno_error(error, errno, "[uplink] spool_dir: cannot make %s", dir);
        return NULL;
    }
    char *lock_path = g_build_filename(dir, "lock", NULL);
    int lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0) {
        set_errno_error(error, errno, "[uplink] spool_dir: cannot open %s", lock_path);
        g_free(lock_path);
        return NULL;
    }
    if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e == EWOULDBLOCK)
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                        "[uplink] spool_dir %s is used by another vigild (it holds %s)", dir,
                        lock_path);
        else
            set_errno_error(error, e, "[uplink] spool_dir: cannot lock %s", lock_path);
        close(lock_fd);
        g_free(lock_path);
        return NULL;
    }
    g_free(lock_path);
    GArray *firsts = list_segments(dir, error);
    if (firsts == NULL) {
        close(lock_fd);
        return NULL;
    }
    struct vigild_spool *spool = g_new0(struct vigild_spool, 1);
    spool->dir = g_strdup(dir);
    spool->lock_fd = lock_fd;
    spool->max_bytes = max_bytes;
    /* Segments small beside the bound, so that staying under it drops a
     * small part of the oldest data rather than most of the spool. */
    spool->segment_max_bytes = MIN((uint64_t)SEGMENT_MAX_BYTES, MAX(max_bytes / 8, 1));
    spool->active_fd = -1;
    g_queue_init(&spool->segments);
    spool->index = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    for (guint i = 0; i < firsts->len; i++)
        read_segment(spool, g_array_index(firsts, uint64_t, i));
    g_array_free(firsts, TRUE);
    return spool;
}

GArray *vigild_spool_sequences(const struct vigild_spool *spool)
{
    GArray *out =
        g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), g_hash_table_size(spool->index));
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, spool->index);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_array_append_val(out, *(uint64_t *)key);
    g_array_sort(out, compare_u64);
    return out;
}

/* ---- appending ------------------------------------------------------------ */

static void describe_dropped(GString *text, const GArray *sequences, guint from)
{
    guint n = sequences->len - from;
    if (n == 0)
        g_string_append(text, "none unacknowledged");
    else if (n == 1)
        g_string_append_printf(text, "sequence %" PRIu64, g_array_index(sequences, uint64_t, from));
    else
        g_string_append_printf(text, "sequences %" PRIu64 " to %" PRIu64,
                               g_array_index(sequences, uint64_t, from),
                               g_array_index(sequences, uint64_t, sequences->len - 1));
}

/* Drops the oldest segments until `incoming` more bytes fit. */
static void make_room(struct vigild_spool *spool, uint64_t incoming, GArray *dropped)
{
    while (spool->bytes + incoming > spool->max_bytes && spool->segments.length > 0) {
        struct segment *oldest = g_queue_peek_head(&spool->segments);
        guint from = dropped->len;
        uint64_t batches = oldest->unacked, bytes = oldest->unacked_bytes;
        char *path = g_strdup(oldest->path);
        segment_delete(spool, oldest, dropped);
        spool->counts.dropped_batches += batches;
        spool->counts.dropped_bytes += bytes;
        GString *which = g_string_new(NULL);
        describe_dropped(which, dropped, from);
        g_warning("spool %s is full ([uplink] spool_max_bytes = %" PRIu64
                  "): deleted its oldest segment %s, %" PRIu64 " unacknowledged batches (%" PRIu64
                  " bytes, %s) that vigil-txd will never have",
                  spool->dir, spool->max_bytes, path, batches, bytes, which->str);
        g_string_free(which, TRUE);
        g_free(path);
    }
}

static gboolean open_segment(struct vigild_spool *spool, uint64_t sequence, GError **error)
{
    struct segment *s = segment_new(spool->dir, sequence);
    /* O_EXCL: an existing file must not be overwritten. New sequences never
     * repeat, but a batch queued again (`vigil spool resend|replay`) has an
     * old one, whose segment may still be there: the name then takes the
     * next free number (a name only orders the segments, roughly). */
    int fd = -1;
    for (uint64_t next = sequence + 1;; next++) {
        fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST || next - sequence > 64)
            break;
        segment_free(s);
        s = segment_new(spool->dir, next);
    }
    if (fd < 0) {
        set_errno_error(error, errno, "spool: cannot create %s", s->path);
        segment_free(s);
        return FALSE;
    }
    sync_dir(spool->dir);
    spool->active = s;
    spool->active_fd = fd;
    g_queue_push_tail(&spool->segments, s);
    return TRUE;
}

gboolean vigild_spool_append(struct vigild_spool *spool, uint64_t sequence, GBytes *batch,
                             GArray *dropped, GError **error)
{
    gsize length;
    const uint8_t *data = g_bytes_get_data(batch, &length);
    if (length > spool->max_bytes) {
        if (spool->drops != NULL)
            vigild_drops_count_batch(spool->drops, data, length);
        spool->counts.dropped_batches++;
        spool->counts.dropped_bytes += length;
        g_array_append_val(dropped, sequence);
        g_warning("spool %s: batch %" PRIu64 " of %zu bytes is larger than [uplink] "
                  "spool_max_bytes = %" PRIu64 " and is dropped",
                  spool->dir, sequence, (size_t)length, spool->max_bytes);
        return TRUE;
    }
    make_room(spool, length, dropped);
    if (spool->active != NULL && spool->active->bytes > 0 &&
        spool->active->bytes + length > spool->segment_max_bytes)
        close_active(spool);
    if (spool->active == NULL && !open_segment(spool, sequence, error)) {
        spool->counts.errors++;
        return FALSE;
    }
    struct segment *s = spool->active;
    if (!write_all(spool->active_fd, data, length)) {
        int e = errno;
        /* Keep the file whole: a batch is in it entirely or not at all. */
        if (ftruncate(spool->active_fd, (off_t)s->bytes) != 0)
            g_warning("spool %s: cannot cut off a partial write: %s", s->path, g_strerror(errno));
        spool->counts.errors++;
        set_errno_error(error, e, "spool: cannot write batch %" PRIu64 " to %s", sequence, s->path);
        if (s->sequences->len == 0)
            segment_delete(spool, s, NULL);
        return FALSE;
    }
    index_add(spool, s, sequence, s->bytes, (uint32_t)length);
    s->bytes += length;
    spool->bytes += length;
    return TRUE;
}

void vigild_spool_set_drops(struct vigild_spool *spool, struct vigild_drops *drops)
{
    spool->drops = drops;
}

gboolean vigild_spool_has(const struct vigild_spool *spool, uint64_t sequence)
{
    return g_hash_table_contains(spool->index, &sequence);
}

GBytes *vigild_spool_read(struct vigild_spool *spool, uint64_t sequence, GError **error)
{
    const struct location *l = g_hash_table_lookup(spool->index, &sequence);
    if (l == NULL) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "spool %s: no batch %" PRIu64,
                    spool->dir, sequence);
        return NULL;
    }
    int fd = open(l->segment->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        spool->counts.errors++;
        set_errno_error(error, errno, "spool: cannot open %s", l->segment->path);
        return NULL;
    }
    uint8_t *data = g_malloc(l->length);
    ssize_t n = pread(fd, data, l->length, (off_t)l->offset);
    int e = n < 0 ? errno : EIO;
    close(fd);
    if (n >= 0 && n != (ssize_t)l->length) {
        /* The file is shorter than when the batch went in: the batch is
         * gone, as surely as if its file were (NOENT tells the caller). */
        spool->counts.errors++;
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                    "spool: batch %" PRIu64 " at offset %" PRIu64 " of %s is cut short: %zd of "
                    "%" PRIu64 " bytes left",
                    sequence, l->offset, l->segment->path, n, (uint64_t)l->length);
        g_free(data);
        return NULL;
    }
    if (n < 0) {
        spool->counts.errors++;
        set_errno_error(error, e,
                        "spool: cannot read batch %" PRIu64 " at offset %" PRIu64 " of %s",
                        sequence, l->offset, l->segment->path);
        g_free(data);
        return NULL;
    }
    return g_bytes_new_take(data, l->length);
}

void vigild_spool_remove(struct vigild_spool *spool, uint64_t sequence)
{
    struct location *l = g_hash_table_lookup(spool->index, &sequence);
    if (l == NULL)
        return;
    struct segment *s = l->segment;
    s->unacked--;
    s->unacked_bytes -= l->length;
    g_hash_table_remove(spool->index, &sequence);
    if (s->unacked == 0)
        segment_delete(spool, s, NULL);
}

void vigild_spool_sync(struct vigild_spool *spool)
{
    if (spool->active != NULL && fdatasync(spool->active_fd) != 0) {
        spool->counts.errors++;
        g_warning("spool %s: fdatasync: %s", spool->active->path, g_strerror(errno));
    }
}

void vigild_spool_stats(const struct vigild_spool *spool, struct vigild_spool_stats *out)
{
    *out = spool->counts;
    out->batches = g_hash_table_size(spool->index);
    out->bytes = spool->bytes;
    out->segments = spool->segments.length;
}

void vigild_spool_close(struct vigild_spool *spool)
{
    if (spool == NULL)
        return;
    close_active(spool);
    struct segment *s;
    while ((s = g_queue_pop_head(&spool->segments)) != NULL)
        segment_free(s);
    g_hash_table_destroy(spool->index);
    close(spool->lock_fd); /* releases the lock */
    g_free(spool->dir);
    g_free(spool);
}

/* ---- sequence numbers ------------------------------------------------------ */

/* vigil-txd takes a (node, sequence) it already has for a resend, so a
 * number used twice would be a batch lost (vigil-txd refuses it when its
 * content differs, but it is still not stored). The file holds a number
 * above every one handed out: it is written before any number at or above
 * what it says is handed out, SEQUENCE_RESERVE at a time.
 *
 * The file lives in the spool folder, which an admin may empty or a new
 * disk may replace. Without it the numbers start at the realtime clock in
 * µs: a node hands out far fewer than one number a µs (one or a few a
 * cycle), so the clock at any start is above every number it used before,
 * as long as the clock has not gone back by more than the node's running
 * time. 2^63 µs is 292,000 years: the numbers still fit the warehouse's
 * bigint. */

/* The first number of a node whose sequence file is gone: the realtime
 * clock in µs, or 1 for a clock before 2001 (not set yet at boot), which
 * could not be trusted to be above anything. */
static uint64_t sequence_from_clock(void)
{
    int64_t now_us = g_get_real_time();
    const int64_t year_2001_us = INT64_C(978307200) * G_USEC_PER_SEC;
    return now_us > year_2001_us ? (uint64_t)now_us : 1;
}

static gboolean write_sequence_file(const char *path, uint64_t value, GError **error)
{
    char text[32];
    snprintf(text, sizeof text, "%" PRIu64 "\n", value);
    /* A temporary file, fsync'd and renamed over the old one. */
    return g_file_set_contents_full(
        path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE, 0600, error);
}

gboolean vigild_sequence_open(struct vigild_sequence *s, const char *dir, uint64_t floor,
                              GError **error)
{
    memset(s, 0, sizeof *s);
    s->path = g_build_filename(dir, "sequence", NULL);
    uint64_t stored = 0;
    gchar *text = NULL;
    GError *read_error = NULL;
    if (g_file_get_contents(s->path, &text, NULL, &read_error)) {
        char *end;
        errno = 0;
        stored = g_ascii_strtoull(text, &end, 10);
        gboolean ok = errno == 0 && end != text && g_ascii_isdigit(text[0]) &&
                      (*end == '\0' || strcmp(end, "\n") == 0);
        if (!ok) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                        "%s: not a sequence number; vigild cannot tell which numbers vigil-txd "
                        "already has from this node (write in it a number above the highest "
                        "sequence the warehouse has for this node)",
                        s->path);
            g_free(text);
            g_clear_pointer(&s->path, g_free);
            return FALSE;
        }
        g_free(text);
    } else if (!g_error_matches(read_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
        g_propagate_error(error, read_error);
        g_clear_pointer(&s->path, g_free);
        return FALSE;
    } else {
        g_error_free(read_error);
        stored = sequence_from_clock();
        g_message("%s: none; sequences start at %" PRIu64 " (the realtime clock in µs), above "
                  "any this node used before",
                  s->path, MAX(stored, floor));
    }
    s->next = MAX(MAX(stored, floor), 1);
    s->reserved_to = s->next; /* nothing reserved by this process yet */
    return TRUE;
}

uint64_t vigild_sequence_take(struct vigild_sequence *s)
{
    if (s->next >= s->reserved_to) {
        GError *error = NULL;
        if (write_sequence_file(s->path, s->next + SEQUENCE_RESERVE, &error)) {
            s->reserved_to = s->next + SEQUENCE_RESERVE;
        } else {
            /* Handing out numbers anyway keeps the data flowing; only a
             * restart before the file can be written again could reuse
             * them. */
            if (s->write_errors++ == 0)
                g_warning("cannot reserve sequence numbers: %s; a restart now could reuse "
                          "numbers and vigil-txd would take those batches for ones it has",
                          error->message);
            g_error_free(error);
        }
    }
    return s->next++;
}

void vigild_sequence_close(struct vigild_sequence *s)
{
    if (s->path == NULL)
        return;
    GError *error = NULL;
    /* Every number below `next` may be in use, none above. */
    if (s->next != s->reserved_to && !write_sequence_file(s->path, s->next, &error)) {
        g_warning("%s: %s; the numbers reserved before stay unused", s->path, error->message);
        g_error_free(error);
    }
    g_clear_pointer(&s->path, g_free);
}
