/* mpi-script SCRIPT DIR: runs the MPI-IO calls a script lists, on files
 * under DIR, so that a model of the same script (darshan_truth.py) knows
 * every MPI-IO counter the job must give. Plain MPI: nothing of vigil in it.
 * `mpi-script --amodes` prints this MPI's amode constants (the model needs
 * their values: a file's mode is their sum).
 *
 * A line is "RANK CALL ARGS…", RANK a rank or "*" for every rank (a
 * collective call is on "*"); "#" starts a comment. Each rank runs its
 * lines in the script's order. An OFFSET is "B" or "B+Sr": B + S × rank.
 * Handles are slots 0..15:
 *
 *   open SLOT PATH AMODE COMM HINT   AMODE of r w b(read-write) c(create);
 *                                    COMM world or self; HINT key=value or "-"
 *   write_at | write_at_all | read_at | read_at_all  SLOT OFFSET SIZE
 *   write | write_all | read | read_all  SLOT SIZE  (at the individual pointer)
 *   seek SLOT OFFSET | set_view SLOT OFFSET | sync SLOT | close SLOT
 *
 * Sizes are bytes (MPI_BYTE). A failed call aborts the job. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 16

static MPI_File files[SLOTS];
static char *buffer;
static size_t buffer_bytes;
static int rank;

__attribute__((noreturn)) static void die(int number, const char *what)
{
    fprintf(stderr, "mpi-script: rank %d: line %d: %s\n", rank, number, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1); /* MPI_Abort is not declared noreturn */
}

static long long offset_of(int number, const char *text)
{
    long long base = 0, step = 0;
    char r = 0;
    int n = sscanf(text, "%lld+%lld%c", &base, &step, &r);
    if (n < 1 || (n == 3 && r != 'r') || n == 2)
        die(number, "bad offset");
    return base + step * rank;
}

static int amode_of(int number, const char *letters)
{
    int amode = 0;
    for (const char *c = letters; *c; c++)
        switch (*c) {
        case 'r':
            amode |= MPI_MODE_RDONLY;
            break;
        case 'w':
            amode |= MPI_MODE_WRONLY;
            break;
        case 'b':
            amode |= MPI_MODE_RDWR;
            break;
        case 'c':
            amode |= MPI_MODE_CREATE;
            break;
        default:
            die(number, "bad amode");
        }
    return amode;
}

static void *sized(long long size)
{
    if ((size_t)size > buffer_bytes) {
        free(buffer);
        buffer_bytes = (size_t)size;
        buffer = malloc(buffer_bytes);
        memset(buffer, 'm', buffer_bytes);
    }
    return buffer;
}

static void check(int number, int rc, const char *call)
{
    if (rc != MPI_SUCCESS)
        die(number, call);
}

/* One data call: `call` names it. */
static void data_call(int number, const char *call, MPI_File f, const char *offset_text,
                      long long size)
{
    MPI_Status st;
    void *b = sized(size);
    int n = (int)size, rc = MPI_ERR_OTHER;
    MPI_Offset at = offset_text ? offset_of(number, offset_text) : 0;
    if (strcmp(call, "write_at") == 0)
        rc = MPI_File_write_at(f, at, b, n, MPI_BYTE, &st);
    else if (strcmp(call, "write_at_all") == 0)
        rc = MPI_File_write_at_all(f, at, b, n, MPI_BYTE, &st);
    else if (strcmp(call, "read_at") == 0)
        rc = MPI_File_read_at(f, at, b, n, MPI_BYTE, &st);
    else if (strcmp(call, "read_at_all") == 0)
        rc = MPI_File_read_at_all(f, at, b, n, MPI_BYTE, &st);
    else if (strcmp(call, "write") == 0)
        rc = MPI_File_write(f, b, n, MPI_BYTE, &st);
    else if (strcmp(call, "write_all") == 0)
        rc = MPI_File_write_all(f, b, n, MPI_BYTE, &st);
    else if (strcmp(call, "read") == 0)
        rc = MPI_File_read(f, b, n, MPI_BYTE, &st);
    else if (strcmp(call, "read_all") == 0)
        rc = MPI_File_read_all(f, b, n, MPI_BYTE, &st);
    else
        die(number, "unknown call");
    check(number, rc, call);
    int moved = 0;
    MPI_Get_count(&st, MPI_BYTE, &moved);
    if (moved != n)
        die(number, "short transfer");
}

static void run_line(int number, char **w, int words, const char *dir)
{
    const char *call = w[0];
    if (words < 2)
        die(number, "missing slot");
    int s = atoi(w[1]);
    if (s < 0 || s >= SLOTS)
        die(number, "slot out of range");
    if (strcmp(call, "open") == 0) {
        if (words < 6)
            die(number, "want open SLOT PATH AMODE COMM HINT");
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, w[2]);
        MPI_Info info = MPI_INFO_NULL;
        if (strcmp(w[5], "-") != 0) {
            char *eq = strchr(w[5], '=');
            if (eq == NULL)
                die(number, "bad hint");
            *eq = '\0';
            MPI_Info_create(&info);
            MPI_Info_set(info, w[5], eq + 1);
        }
        MPI_Comm comm = strcmp(w[4], "self") == 0 ? MPI_COMM_SELF : MPI_COMM_WORLD;
        check(number, MPI_File_open(comm, path, amode_of(number, w[3]), info, &files[s]), call);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    } else if (strcmp(call, "close") == 0) {
        check(number, MPI_File_close(&files[s]), call);
    } else if (strcmp(call, "sync") == 0) {
        check(number, MPI_File_sync(files[s]), call);
    } else if (strcmp(call, "seek") == 0 && words >= 3) {
        check(number, MPI_File_seek(files[s], offset_of(number, w[2]), MPI_SEEK_SET), call);
    } else if (strcmp(call, "set_view") == 0 && words >= 3) {
        check(number,
              MPI_File_set_view(files[s], offset_of(number, w[2]), MPI_BYTE, MPI_BYTE, "native",
                                MPI_INFO_NULL),
              call);
    } else if (strstr(call, "_at") != NULL && words >= 4) {
        data_call(number, call, files[s], w[2], atoll(w[3]));
    } else if (words >= 3) {
        data_call(number, call, files[s], NULL, atoll(w[2]));
    } else {
        die(number, "unknown call or missing arguments");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc == 2 && strcmp(argv[1], "--amodes") == 0) {
        if (rank == 0)
            printf("{\"r\": %d, \"w\": %d, \"b\": %d, \"c\": %d}\n", MPI_MODE_RDONLY,
                   MPI_MODE_WRONLY, MPI_MODE_RDWR, MPI_MODE_CREATE);
        MPI_Finalize();
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: mpi-script SCRIPT DIR | mpi-script --amodes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    FILE *f = fopen(argv[1], "r");
    if (f == NULL)
        die(0, "cannot open the script");
    char text[1024];
    int number = 0;
    while (fgets(text, sizeof text, f) != NULL) {
        number++;
        char *hash = strchr(text, '#');
        if (hash != NULL)
            *hash = '\0';
        char *w[8] = {NULL}, *save = NULL;
        int words = 0;
        char *who = strtok_r(text, " \t\n", &save);
        if (who == NULL)
            continue;
        for (char *t = strtok_r(NULL, " \t\n", &save); t != NULL && words < 8;
             t = strtok_r(NULL, " \t\n", &save))
            w[words++] = t;
        if (words == 0)
            die(number, "want RANK CALL ARGS");
        if (strcmp(who, "*") == 0 || atoi(who) == rank)
            run_line(number, w, words, argv[2]);
    }
    fclose(f);
    free(buffer);
    MPI_Finalize();
    return 0;
}
