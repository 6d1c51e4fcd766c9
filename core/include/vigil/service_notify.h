/* vigil — telling the service manager how a daemon is doing (systemd's
 * Type=notify readiness protocol).
 *
 * Through libsystemd's sd_notify when the build found libsystemd, else
 * no-ops. Without $NOTIFY_SOCKET (a daemon started by hand, or under
 * another init) sd_notify does nothing either, so the daemons call these
 * unconditionally. Not installed: it is the daemons', not user code's. */
#ifndef VIGIL_SERVICE_NOTIFY_H
#define VIGIL_SERVICE_NOTIFY_H

/* The daemon serves: its sockets are bound (READY=1). Also the end of a
 * reload. */
void vigil_service_ready(void);

/* A reload (SIGHUP) begins (RELOADING=1); vigil_service_ready() ends it. */
void vigil_service_reloading(void);

/* The daemon is stopping (STOPPING=1). */
void vigil_service_stopping(void);

#endif
