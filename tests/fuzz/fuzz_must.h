/* must(condition): a promise the fuzz target checks. A broken one prints
 * where and what, then aborts, which libFuzzer reports as a crash and
 * saves the input of. */
#ifndef VIGIL_FUZZ_MUST_H
#define VIGIL_FUZZ_MUST_H

#include <stdio.h>
#include <stdlib.h>

#define must(condition)                                                                            \
    ((condition)                                                                                   \
         ? (void)0                                                                                 \
         : (fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__, __LINE__, #condition),        \
            abort()))

#endif
