/* vigil — readiness for the service manager (service_notify.h). */
#include "vigil/service_notify.h"

#ifdef VIGIL_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>

/* A failure to notify is not the daemon's failure: systemd's own start
 * timeout tells the admin, and a daemon started by hand has no one to
 * tell. So the result is not looked at. */
static void notify(const char *state)
{
    (void)sd_notify(0, state);
}
#else
static void notify(const char *state)
{
    (void)state;
}
#endif

void vigil_service_ready(void)
{
    notify("READY=1");
}

void vigil_service_reloading(void)
{
    notify("RELOADING=1");
}

void vigil_service_stopping(void)
{
    notify("STOPPING=1");
}
