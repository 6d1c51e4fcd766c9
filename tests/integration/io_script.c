/* io-script SCRIPT DIR: runs the POSIX and stdio calls a script lists, on
 * files under DIR, in exactly the script's order, so that a model of the
 * same script (darshan_truth.py) knows every counter the run must give.
 * Plain C: nothing of vigil in it.
 *
 * A line is "THREAD CALL ARGS…"; "#" starts a comment. Threads are
 * numbered from 0; each line runs on its thread, and a thread waits for its
 * turn (a condition variable: the line before it is done), so the order of
 * the calls on a file is the script's even with several threads. Handles
 * are slots 0..63, an fd or a FILE * by the call that made them:
 *
 *   open SLOT PATH FLAGS MODE   FLAGS of r w b(read-write) c(create) t(trunc) a(append);
 *                               MODE octal, passed only with c
 *   write SLOT SIZE MEMOFF      the buffer starts MEMOFF bytes past a page boundary
 *   pwrite SLOT OFFSET SIZE MEMOFF
 *   read SLOT SIZE MEMOFF       every read must return SIZE bytes
 *   pread SLOT OFFSET SIZE MEMOFF
 *   lseek SLOT OFFSET           SEEK_SET
 *   fsync SLOT | fdatasync SLOT | close SLOT
 *   dup SLOT NEWSLOT
 *   stat PATH
 *   fopen SLOT PATH MODE        fopen's mode string
 *   fwrite SLOT SIZE MEMOFF | fread SLOT SIZE MEMOFF (one item of SIZE bytes)
 *   fseek SLOT OFFSET | fflush SLOT | fclose SLOT
 *   fileno SLOT NEWSLOT         the stream's descriptor in NEWSLOT (not to be closed)
 *
 * Any call that fails or moves fewer bytes than asked ends the run with
 * status 1 and the line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLOTS     64
#define MAX_WORDS 6
#define PAGE      4096

struct line {
    int number; /* in the script, for messages */
    int thread;
    int words;
    char *word[MAX_WORDS]; /* word[0] is the call */
};

static struct line *lines;
static int line_count;
static const char *dir;
static unsigned char *buffer; /* page-aligned, the largest size plus a page */
static int fds[SLOTS];
static FILE *streams[SLOTS];

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn; /* the line that runs next */

static void die(const struct line *l, const char *what)
{
    fprintf(stderr, "io-script: line %d: %s: %s\n", l->number, what,
            errno != 0 ? strerror(errno) : "short transfer");
    exit(1);
}

static long long number(const struct line *l, int i)
{
    if (i >= l->words)
        die(l, "missing argument");
    char *end;
    long long v = strtoll(l->word[i], &end, 0);
    if (*end != '\0' || v < 0)
        die(l, "bad number");
    return v;
}

static int slot(const struct line *l, int i)
{
    long long s = number(l, i);
    if (s >= SLOTS)
        die(l, "slot out of range");
    return (int)s;
}

static char *path_of(const struct line *l, int i)
{
    static __thread char path[4096];
    if (i >= l->words)
        die(l, "missing path");
    snprintf(path, sizeof path, "%s/%s", dir, l->word[i]);
    return path;
}

static int open_flags(const struct line *l, const char *letters)
{
    int flags = 0;
    for (const char *c = letters; *c; c++)
        switch (*c) {
        case 'r':
            flags |= O_RDONLY;
            break;
        case 'w':
            flags |= O_WRONLY;
            break;
        case 'b':
            flags |= O_RDWR;
            break;
        case 'c':
            flags |= O_CREAT;
            break;
        case 't':
            flags |= O_TRUNC;
            break;
        case 'a':
            flags |= O_APPEND;
            break;
        default:
            die(l, "bad open flags");
        }
    return flags;
}

/* Checks a transfer moved exactly `want` bytes. */
static void transferred(const struct line *l, long long got, long long want)
{
    if (got != want) {
        if (got >= 0)
            errno = 0;
        die(l, l->word[0]);
    }
}

static void run_line(const struct line *l)
{
    const char *call = l->word[0];
    errno = 0;
    if (strcmp(call, "open") == 0) {
        int flags = open_flags(l, l->words > 3 ? l->word[3] : "");
        int fd = (flags & O_CREAT) ? open(path_of(l, 2), flags, (mode_t)number(l, 4))
                                   : open(path_of(l, 2), flags);
        if (fd < 0)
            die(l, "open");
        fds[slot(l, 1)] = fd;
    } else if (strcmp(call, "write") == 0) {
        long long size = number(l, 2);
        transferred(l, write(fds[slot(l, 1)], buffer + number(l, 3), (size_t)size), size);
    } else if (strcmp(call, "pwrite") == 0) {
        long long size = number(l, 3);
        transferred(l, pwrite(fds[slot(l, 1)], buffer + number(l, 4), (size_t)size, number(l, 2)),
                    size);
    } else if (strcmp(call, "read") == 0) {
        long long size = number(l, 2);
        transferred(l, read(fds[slot(l, 1)], buffer + number(l, 3), (size_t)size), size);
    } else if (strcmp(call, "pread") == 0) {
        long long size = number(l, 3);
        transferred(l, pread(fds[slot(l, 1)], buffer + number(l, 4), (size_t)size, number(l, 2)),
                    size);
    } else if (strcmp(call, "lseek") == 0) {
        long long offset = number(l, 2);
        transferred(l, lseek(fds[slot(l, 1)], offset, SEEK_SET), offset);
    } else if (strcmp(call, "fsync") == 0) {
        if (fsync(fds[slot(l, 1)]) != 0)
            die(l, call);
    } else if (strcmp(call, "fdatasync") == 0) {
        if (fdatasync(fds[slot(l, 1)]) != 0)
            die(l, call);
    } else if (strcmp(call, "close") == 0) {
        if (close(fds[slot(l, 1)]) != 0)
            die(l, call);
    } else if (strcmp(call, "dup") == 0) {
        int fd = dup(fds[slot(l, 1)]);
        if (fd < 0)
            die(l, call);
        fds[slot(l, 2)] = fd;
    } else if (strcmp(call, "stat") == 0) {
        struct stat st;
        if (stat(path_of(l, 1), &st) != 0)
            die(l, call);
    } else if (strcmp(call, "fopen") == 0) {
        if (l->words < 4)
            die(l, "missing mode");
        FILE *f = fopen(path_of(l, 2), l->word[3]);
        if (f == NULL)
            die(l, call);
        streams[slot(l, 1)] = f;
    } else if (strcmp(call, "fwrite") == 0) {
        FILE *f = streams[slot(l, 1)];
        transferred(l, (long long)fwrite(buffer + number(l, 3), (size_t)number(l, 2), 1, f), 1);
    } else if (strcmp(call, "fread") == 0) {
        FILE *f = streams[slot(l, 1)];
        transferred(l, (long long)fread(buffer + number(l, 3), (size_t)number(l, 2), 1, f), 1);
    } else if (strcmp(call, "fseek") == 0) {
        if (fseek(streams[slot(l, 1)], (long)number(l, 2), SEEK_SET) != 0)
            die(l, call);
    } else if (strcmp(call, "fflush") == 0) {
        if (fflush(streams[slot(l, 1)]) != 0)
            die(l, call);
    } else if (strcmp(call, "fclose") == 0) {
        if (fclose(streams[slot(l, 1)]) != 0)
            die(l, call);
    } else if (strcmp(call, "fileno") == 0) {
        int fd = fileno(streams[slot(l, 1)]);
        if (fd < 0)
            die(l, call);
        fds[slot(l, 2)] = fd;
    } else {
        errno = EINVAL;
        die(l, "unknown call");
    }
}

static void *thread_main(void *arg)
{
    int self = (int)(long)arg;
    for (int i = 0; i < line_count; i++) {
        if (lines[i].thread != self)
            continue;
        pthread_mutex_lock(&turn_lock);
        while (turn != i)
            pthread_cond_wait(&turn_changed, &turn_lock);
        pthread_mutex_unlock(&turn_lock);
        run_line(&lines[i]);
        pthread_mutex_lock(&turn_lock);
        turn = i + 1;
        pthread_cond_broadcast(&turn_changed);
        pthread_mutex_unlock(&turn_lock);
    }
    return NULL;
}

/* Reads the script; returns the number of threads it names. */
static int read_script(const char *path, size_t *largest)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "io-script: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    char *text = NULL;
    size_t cap = 0;
    int threads = 0, number_in_file = 0, allocated = 0;
    *largest = 0;
    while (getline(&text, &cap, f) >= 0) {
        number_in_file++;
        char *hash = strchr(text, '#');
        if (hash != NULL)
            *hash = '\0';
        struct line l = {.number = number_in_file};
        char *save = NULL;
        char *first = strtok_r(text, " \t\n", &save);
        if (first == NULL)
            continue;
        l.thread = atoi(first);
        for (char *w = strtok_r(NULL, " \t\n", &save); w != NULL && l.words < MAX_WORDS;
             w = strtok_r(NULL, " \t\n", &save))
            l.word[l.words++] = strdup(w);
        if (l.words == 0 || l.thread < 0 || l.thread > 63) {
            fprintf(stderr, "io-script: %s:%d: want THREAD CALL ARGS\n", path, number_in_file);
            exit(2);
        }
        /* The largest transfer bounds the buffer. */
        const char *call = l.word[0];
        int size_at = strcmp(call, "pread") == 0 || strcmp(call, "pwrite") == 0 ? 3
                      : strstr("read write fread fwrite", call) != NULL         ? 2
                                                                                : 0;
        if (size_at > 0 && size_at < l.words) {
            size_t v = strtoull(l.word[size_at], NULL, 0);
            *largest = v > *largest ? v : *largest;
        }
        if (line_count == allocated) {
            allocated = allocated ? 2 * allocated : 256;
            struct line *more = realloc(lines, (size_t)allocated * sizeof *lines);
            if (more == NULL) {
                fprintf(stderr, "io-script: out of memory\n");
                exit(2);
            }
            lines = more;
        }
        lines[line_count++] = l;
        threads = l.thread + 1 > threads ? l.thread + 1 : threads;
    }
    free(text);
    fclose(f);
    return threads;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: io-script SCRIPT DIR\n");
        return 2;
    }
    dir = argv[2];
    size_t largest;
    int threads = read_script(argv[1], &largest);
    buffer = aligned_alloc(PAGE, (largest / PAGE + 2) * PAGE);
    memset(buffer, 'v', (largest / PAGE + 2) * PAGE);
    pthread_t ids[64];
    for (int t = 1; t < threads; t++)
        pthread_create(&ids[t], NULL, thread_main, (void *)(long)t);
    thread_main((void *)0L);
    for (int t = 1; t < threads; t++)
        pthread_join(ids[t], NULL);
    printf("%ld\n", (long)getpid());
    return 0;
}
