/* threads — many threads writing at once, for exact counts under
 * contention.
 *
 * usage: threads N M
 *
 * Opens /dev/null once, starts N threads that each write() one byte to it
 * M times, joins them and closes it: N×M writes of one byte, plus one open
 * and one close. Prints nothing; exits 0 when every write returned 1. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static int null_fd;
static long writes_each;

static void *writer(void *arg)
{
    (void)arg;
    long failures = 0;
    for (long i = 0; i < writes_each; i++)
        if (write(null_fd, "x", 1) != 1)
            failures++;
    return (void *)failures;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long threads = strtol(argv[1], NULL, 10);
    writes_each = strtol(argv[2], NULL, 10);
    if (threads < 1 || threads > 1024 || writes_each < 0)
        return 2;
    null_fd = open("/dev/null", O_WRONLY);
    if (null_fd < 0)
        return 1;
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    if (ids == NULL)
        return 1;
    for (long t = 0; t < threads; t++)
        if (pthread_create(&ids[t], NULL, writer, NULL) != 0)
            return 1;
    long failures = 0;
    for (long t = 0; t < threads; t++) {
        void *result;
        pthread_join(ids[t], &result);
        failures += (long)result;
    }
    free(ids);
    close(null_fd);
    return failures == 0 ? 0 : 1;
}
