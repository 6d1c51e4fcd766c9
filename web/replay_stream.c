/* vigil-web — a connection as vigil-web gives it to libsoup for a request.
 *
 * GIO has no input stream that puts read bytes back, and libsoup needs
 * pollable streams (it reads without blocking), so two small types: an
 * input stream that serves the bytes first, then the socket's; and an I/O
 * stream pairing it with the socket's own output stream, whose close (as
 * libsoup closes a connection it is done with) closes neither. */
#include <string.h>

#include "replay_stream.h"

/* ---- the input ---------------------------------------------------------------------------- */

#define REPLAY_TYPE_INPUT (replay_input_get_type())
G_DECLARE_FINAL_TYPE(ReplayInput, replay_input, REPLAY, INPUT, GInputStream)

struct _ReplayInput {
    GInputStream parent;
    GInputStream *base; /* the socket connection's, pollable */
    GBytes *replay;     /* NULL once served */
    gsize replayed;
};

static void replay_input_pollable_init(GPollableInputStreamInterface *iface);

G_DEFINE_TYPE_WITH_CODE(ReplayInput, replay_input, G_TYPE_INPUT_STREAM,
                        G_IMPLEMENT_INTERFACE(G_TYPE_POLLABLE_INPUT_STREAM,
                                              replay_input_pollable_init))

/* Up to `count` bytes of what is to be replayed, or -1 when all has been. */
static gssize replay_some(ReplayInput *in, void *buffer, gsize count)
{
    if (in->replay == NULL)
        return -1;
    gsize size = 0;
    const guint8 *data = g_bytes_get_data(in->replay, &size);
    gsize n = MIN(count, size - in->replayed);
    memcpy(buffer, data + in->replayed, n);
    in->replayed += n;
    if (in->replayed == size)
        g_clear_pointer(&in->replay, g_bytes_unref);
    return (gssize)n;
}

static gssize replay_input_read(GInputStream *stream, void *buffer, gsize count,
                                GCancellable *cancellable, GError **error)
{
    ReplayInput *in = REPLAY_INPUT(stream);
    gssize n = replay_some(in, buffer, count);
    return n >= 0 ? n : g_input_stream_read(in->base, buffer, count, cancellable, error);
}

static gboolean replay_input_can_poll(GPollableInputStream *stream)
{
    return g_pollable_input_stream_can_poll(G_POLLABLE_INPUT_STREAM(REPLAY_INPUT(stream)->base));
}

static gboolean replay_input_is_readable(GPollableInputStream *stream)
{
    ReplayInput *in = REPLAY_INPUT(stream);
    return in->replay != NULL ||
           g_pollable_input_stream_is_readable(G_POLLABLE_INPUT_STREAM(in->base));
}

static gssize replay_input_read_nonblocking(GPollableInputStream *stream, void *buffer, gsize count,
                                            GError **error)
{
    ReplayInput *in = REPLAY_INPUT(stream);
    gssize n = replay_some(in, buffer, count);
    return n >= 0 ? n
                  : g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(in->base),
                                                             buffer, count, NULL, error);
}

static GSource *replay_input_create_source(GPollableInputStream *stream, GCancellable *cancellable)
{
    ReplayInput *in = REPLAY_INPUT(stream);
    /* Bytes to replay: ready at once; else when the socket is (or its
     * timeout fires, as a GSocket source does). */
    GSource *base =
        in->replay != NULL
            ? g_timeout_source_new(0)
            : g_pollable_input_stream_create_source(G_POLLABLE_INPUT_STREAM(in->base), cancellable);
    g_source_set_dummy_callback(base);
    GSource *source = g_pollable_source_new(G_OBJECT(stream));
    g_source_add_child_source(source, base);
    g_source_unref(base);
    return source;
}

static void replay_input_pollable_init(GPollableInputStreamInterface *iface)
{
    iface->can_poll = replay_input_can_poll;
    iface->is_readable = replay_input_is_readable;
    iface->create_source = replay_input_create_source;
    iface->read_nonblocking = replay_input_read_nonblocking;
}

static void replay_input_finalize(GObject *object)
{
    ReplayInput *in = REPLAY_INPUT(object);
    g_clear_object(&in->base);
    g_clear_pointer(&in->replay, g_bytes_unref);
    G_OBJECT_CLASS(replay_input_parent_class)->finalize(object);
}

static void replay_input_class_init(ReplayInputClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = replay_input_finalize;
    /* No close_fn: closing it leaves the socket's input as it is. */
    G_INPUT_STREAM_CLASS(klass)->read_fn = replay_input_read;
}

static void replay_input_init(ReplayInput *in)
{
    (void)in;
}

/* ---- the pair ----------------------------------------------------------------------------- */

#define REPLAY_TYPE_STREAM (replay_stream_get_type())
G_DECLARE_FINAL_TYPE(ReplayStream, replay_stream, REPLAY, STREAM, GIOStream)

struct _ReplayStream {
    GIOStream parent;
    GInputStream *input;   /* a ReplayInput */
    GOutputStream *output; /* the socket connection's own */
};

G_DEFINE_TYPE(ReplayStream, replay_stream, G_TYPE_IO_STREAM)

static GInputStream *replay_stream_get_input(GIOStream *stream)
{
    return REPLAY_STREAM(stream)->input;
}

static GOutputStream *replay_stream_get_output(GIOStream *stream)
{
    return REPLAY_STREAM(stream)->output;
}

/* The socket connection's output stream is not closed: it is the same
 * object for every request of the connection. */
static gboolean replay_stream_close(GIOStream *stream, GCancellable *cancellable, GError **error)
{
    return g_input_stream_close(REPLAY_STREAM(stream)->input, cancellable, error);
}

static void replay_stream_finalize(GObject *object)
{
    ReplayStream *s = REPLAY_STREAM(object);
    g_clear_object(&s->input);
    g_clear_object(&s->output);
    G_OBJECT_CLASS(replay_stream_parent_class)->finalize(object);
}

static void replay_stream_class_init(ReplayStreamClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = replay_stream_finalize;
    GIOStreamClass *io = G_IO_STREAM_CLASS(klass);
    io->get_input_stream = replay_stream_get_input;
    io->get_output_stream = replay_stream_get_output;
    io->close_fn = replay_stream_close;
}

static void replay_stream_init(ReplayStream *s)
{
    (void)s;
}

GIOStream *web_replay_stream_new(GIOStream *connection, GBytes *already_read)
{
    ReplayInput *in = g_object_new(REPLAY_TYPE_INPUT, NULL);
    in->base = g_object_ref(g_io_stream_get_input_stream(connection));
    if (already_read != NULL && g_bytes_get_size(already_read) > 0)
        in->replay = g_bytes_ref(already_read);
    ReplayStream *s = g_object_new(REPLAY_TYPE_STREAM, NULL);
    s->input = G_INPUT_STREAM(in);
    s->output = g_object_ref(g_io_stream_get_output_stream(connection));
    return G_IO_STREAM(s);
}
