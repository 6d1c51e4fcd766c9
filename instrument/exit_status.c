/* vigil — the program's exit status, which the process tells vigild with
 * its report (the warehouse keeps it with the run).
 *
 * _exit and _Exit are wrapped (state.c) and note theirs. exit() is harder:
 * a return from main calls it from inside libc, past any wrapper, and an
 * on_exit handler registered in our constructor would run too late, after
 * the destructors (ld.so registers its own exit handler, which runs them,
 * only once our constructor has run, and exit handlers run last-registered
 * first). So main itself is wrapped: __libc_start_main, which the
 * program's start-up code calls through the PLT, gets a main of ours that
 * registers the handler and then calls the program's. The handler then runs
 * before the destructors, with the status exit() was given.
 *
 * A process killed by a signal never gets there: its status stays -1
 * (unknown) here; only its parent learns the signal. */
#include <stdlib.h>
#include <unistd.h>

#include "preload.h"

typedef int (*main_fn)(int, char **, char **);

/* glibc declares it nowhere public. */
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end);

PRELOAD_REAL_SLOT(__libc_start_main);

static main_fn program_main;

void preload_exit_status_note(int status)
{
    /* A vfork child shares our memory: its status is not ours. */
    if (getpid() == preload.pid)
        atomic_store(&preload.exit_code, status & 0xff);
}

static void note_exit(int status, void *unused)
{
    (void)unused;
    preload_exit_status_note(status);
}

static int main_of_ours(int argc, char **argv, char **envp)
{
    on_exit(note_exit, NULL);
    return program_main(argc, argv, envp);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end)
{
    program_main = main;
    return REAL(__libc_start_main)(main_of_ours, argc, argv, init, fini, rtld_fini, stack_end);
}
