/* preload-pages: the load-independent side of bench-preload. Makes N calls
 * of one case (write 1 B to /dev/null, pread 4 KiB, fwrite 16 B), each
 * followed by a load of a marker word, so that a memory trace
 * (valgrind --tool=lackey --trace-mem=yes, read by preload_pages.py) can be
 * cut into one piece per call and the distinct pages and cache lines each
 * call touched counted, with and without the library.
 *
 *   preload-pages write|pread|fwrite N DATA_FILE
 *
 * Prints the marker's address on stdout first. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long preload_pages_marker;

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: preload-pages write|pread|fwrite N DATA_FILE\n");
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    if (n <= 0) {
        fprintf(stderr, "preload-pages: N must be a positive count, not '%s'\n", argv[2]);
        return 2;
    }
    printf("marker %#lx\n", (unsigned long)&preload_pages_marker);
    fflush(stdout);
    static char buffer[4096];
    if (strcmp(argv[1], "write") == 0) {
        int fd = open("/dev/null", O_WRONLY);
        for (long i = 0; i < n; i++) {
            if (write(fd, buffer, 1) != 1)
                return 1;
            (void)preload_pages_marker;
        }
    } else if (strcmp(argv[1], "pread") == 0) {
        int fd = open(argv[3], O_RDONLY);
        if (fd < 0)
            return 1;
        for (long i = 0; i < n; i++) {
            if (pread(fd, buffer, sizeof buffer, 0) < 0)
                return 1;
            (void)preload_pages_marker;
        }
    } else if (strcmp(argv[1], "fwrite") == 0) {
        FILE *f = fopen(argv[3], "w");
        if (f == NULL)
            return 1;
        for (long i = 0; i < n; i++) {
            if (fwrite(buffer, 16, 1, f) != 1)
                return 1;
            (void)preload_pages_marker;
        }
        fclose(f);
    } else {
        fprintf(stderr, "preload-pages: unknown case '%s' (write, pread or fwrite)\n", argv[1]);
        return 2;
    }
    /* Where each page is, for preload_pages.py --where. */
    const char *maps_copy = getenv("PRELOAD_PAGES_MAPS");
    if (maps_copy != NULL) {
        FILE *in = fopen("/proc/self/maps", "r"), *out = fopen(maps_copy, "w");
        char line[4096];
        while (in != NULL && out != NULL && fgets(line, sizeof line, in) != NULL)
            fputs(line, out);
        if (in != NULL)
            fclose(in);
        if (out != NULL)
            fclose(out);
    }
    return 0;
}
