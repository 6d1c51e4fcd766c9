/* vigil keygen FILE — a CURVE key pair for the link between vigild and
 * vigil-txd: FILE (both keys, mode 0600) and FILE.pub (the public key, a
 * line to append to vigil-txd's [txd] curve_authorized_keys, or to give to
 * the daemons as [uplink] curve_server_key). Never overwrites a key. */
#include <stdio.h>

#include "commands.h"
#include "vigil/curve.h"

int vigil_cli_keygen(int argc, char **argv)
{
    static const struct vigil_cli_help help = {
        .parameters = "FILE - make a CURVE key pair: FILE (secret, mode 0600) and FILE.pub",
    };
    GError *error = NULL;
    if (!vigil_cli_parse_options(&help, NULL, &argc, &argv, &error) || argc != 2) {
        fprintf(stderr, "vigil keygen: %s\nusage: vigil keygen FILE\n",
                error != NULL ? error->message : "one FILE expected");
        g_clear_error(&error);
        return VIGIL_EXIT_USAGE;
    }
    struct vigil_curve_pair pair;
    if (!vigil_curve_keygen(argv[1], &pair, &error)) {
        fprintf(stderr, "vigil keygen: %s\n", error->message);
        g_error_free(error);
        return VIGIL_EXIT_FAILURE;
    }
    printf("wrote %s (the pair, mode 0600) and %s.pub\npublic key: %s\n", argv[1], argv[1],
           pair.public_key);
    return VIGIL_EXIT_OK;
}
