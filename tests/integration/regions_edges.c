/* The region stack's hard cases, for tests/integration/test_regions.c,
 * with counts the test knows: THREADS threads each enter "outer" and,
 * inside it, "inner" ROUNDS times (with one byte written to a file in
 * "inner" each time), recurse into "outer" once, end a region that was
 * never begun, and end "outer" while "left-open" is open inside it (which
 * closes it). Then the main thread nests "deep" DEPTH times (past the 32
 * levels a thread follows), leaves "open-at-exit" open, and begins more
 * names than a process tracks (64: 5 are taken by the names above).
 * Nothing of vigil is needed to run it. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include <vigil/vigil.h>

#define THREADS 8
#define ROUNDS  1000
#define NAMES   70 /* more than the 64 a process tracks */
#define DEPTH   40

static int out_fd;

static void *worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        vigil_region_begin("outer");
        vigil_region_begin("inner");
        if (write(out_fd, "x", 1) != 1)
            return NULL;
        vigil_region_end("inner");
        vigil_region_end("outer");
    }
    vigil_region_begin("outer");
    vigil_region_begin("outer"); /* a recursion: counted once */
    vigil_region_end("outer");
    vigil_region_end("never-begun"); /* unmatched */
    vigil_region_begin("left-open");
    vigil_region_end("outer"); /* closes left-open too */
    return NULL;
}

int main(void)
{
    out_fd = open("edges.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < DEPTH; i++)
        vigil_region_begin("deep");
    for (int i = 0; i < DEPTH; i++)
        vigil_region_end("deep");
    vigil_region_begin("open-at-exit");
    /* Past the table: the first names take what room is left. */
    char name[32];
    for (int i = 0; i < NAMES; i++) {
        snprintf(name, sizeof name, "name-%d", i);
        vigil_region_begin(name);
        vigil_region_end(name);
    }
    printf("done\n");
    return 0;
}
