/* The floor motiond is measured against: the least a daemon could do to send the same bytes.
 * It replays a capture of what motiond sent one subscriber of "*" during one loop of the
 * replay (scripts/measure makes it), so that both servers do equal work: the same lines, in
 * the same groups, at the same times. No touch input, no gestures, no springs, no protocol:
 * what is left is the kernel's share, which motiond pays too.
 *
 *     floor SOCKET CAPTURE
 *
 * The capture is text: a "period SECONDS" line (the time from one play's start to the next),
 * then one line per value line motiond sent: its due time in seconds from the play's start,
 * its kind ('i': an input frame's, stamped with the time the frame was due; 'c': the frame
 * clock's, stamped with the time it runs, as motiond stamps each), a space and the line.
 * Lines with the same due time are one group: motiond wrote them with one write per client.
 *
 * The floor plays the capture from 0.1 s after start (as motiond --replay does), again each
 * period. For each group that is due it encodes the lines once, with "t" re-stamped on
 * CLOCK_MONOTONIC (the clock motiond uses) and each stream's "seq" continued across plays
 * (the captured seq plus the play's number times the stream's values in one play), and
 * sends that buffer to every client with one send(2) (as motiond does: cheaper in the kernel
 * than write(2), which goes through the VFS); what a socket does not take waits for
 * EPOLLOUT, as motiond keeps it. It reads and discards what clients send.
 *
 * Prints "ready" on stdout once listening; ends on SIGTERM or SIGINT. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BACKLOG_LIMIT (4 << 20)  /* bytes waiting for a client that reads too slowly: then it is dropped */

typedef struct {
    char *prefix;      /* up to and including "t": */
    int prefix_length;
    int t_length;      /* the captured time's characters: the re-stamped time keeps the length */
    long seq;          /* as captured */
    int stream;        /* index into streams */
    char *suffix;      /* after the seq's digits, with the newline */
    int suffix_length;
} Line;

typedef struct { double due; int input; int first, count; } Group;

typedef struct { int fd; char *pending; size_t used, capacity; } Client;

static volatile sig_atomic_t stopping;
static void on_signal(int s) { (void)s; stopping = 1; }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *grow(void *array, int *capacity, int needed, size_t size) {
    if (needed <= *capacity) return array;
    while (*capacity < needed) *capacity = *capacity ? *capacity * 2 : 64;
    array = realloc(array, *capacity * size);
    if (!array) { perror("floor"); exit(1); }
    return array;
}

static char *last(char *text, const char *needle) {
    char *found = NULL, *at = text;
    while ((at = strstr(at, needle))) found = at++;
    return found;
}

static Line *lines;
static Group *groups;
static int nlines, ngroups, nstreams;
static char **stream_names;
static long *per_play;  /* each stream's values in one play */
static double period;

static void read_capture(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); exit(1); }
    int line_capacity = 0, group_capacity = 0, stream_capacity = 0, number = 0;
    size_t size = 0;
    char *text = NULL;
    while (getline(&text, &size, f) > 0) {
        number++;
        text[strcspn(text, "\n")] = 0;
        if (text[0] == '#' || text[0] == 0) continue;
        if (sscanf(text, "period %lf", &period) == 1) continue;
        double due;
        char kind;
        int offset;
        if (sscanf(text, "%lf %c %n", &due, &kind, &offset) != 2 || (kind != 'i' && kind != 'c')) {
            fprintf(stderr, "floor: %s:%d: not DUE KIND LINE\n", path, number);
            exit(1);
        }
        char *json = text + offset, *t = last(json, ",\"t\":"), *seq = last(json, ",\"seq\":"), *stream = strstr(json, "\"stream\":\"");
        if (!t || !seq || !stream || seq < t) { fprintf(stderr, "floor: %s:%d: no stream, t and seq\n", path, number); exit(1); }
        t += 5;
        char *digits = seq + 7, *end;
        long value = strtol(digits, &end, 10);
        stream += 10;
        int name_length = strcspn(stream, "\"");
        int s = 0;
        while (s < nstreams && !(strlen(stream_names[s]) == (size_t)name_length && !strncmp(stream_names[s], stream, name_length))) s++;
        if (s == nstreams) {
            stream_names = grow(stream_names, &stream_capacity, nstreams + 1, sizeof *stream_names);
            per_play = realloc(per_play, stream_capacity * sizeof *per_play);
            stream_names[s] = strndup(stream, name_length);
            per_play[s] = 0;
            nstreams++;
        }
        per_play[s]++;
        lines = grow(lines, &line_capacity, nlines + 1, sizeof *lines);
        Line *l = &lines[nlines];
        l->prefix_length = t - json;
        l->prefix = strndup(json, l->prefix_length);
        l->t_length = seq - t;
        l->seq = value;
        l->stream = s;
        l->suffix_length = strlen(end) + 1;
        l->suffix = malloc(l->suffix_length + 1);
        sprintf(l->suffix, "%s\n", end);
        if (ngroups == 0 || groups[ngroups - 1].due != due) {
            groups = grow(groups, &group_capacity, ngroups + 1, sizeof *groups);
            groups[ngroups++] = (Group){due, kind == 'i', nlines, 0};
        }
        groups[ngroups - 1].count++;
        nlines++;
    }
    free(text);
    fclose(f);
    if (ngroups == 0 || period <= 0 || period < groups[ngroups - 1].due) {
        fprintf(stderr, "floor: %s: no lines, or no period after the last\n", path);
        exit(1);
    }
}

static Client *clients;     /* by file descriptor */
static int *connected, nconnected, client_capacity, connected_capacity;
static long missed, dropped;
static int epoll;

static void disconnect(int fd) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    clients[fd].used = 0;
    for (int c = 0; c < nconnected; c++) if (connected[c] == fd) { connected[c] = connected[--nconnected]; break; }
}

static void wait_writable(Client *c, int writable) {
    struct epoll_event e = {.events = EPOLLIN | (writable ? EPOLLOUT : 0), .data.fd = c->fd};
    epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &e);
}

static void keep(Client *c, const char *data, size_t length) {
    if (c->used + length > BACKLOG_LIMIT) { dropped++; disconnect(c->fd); return; }
    if (c->used + length > c->capacity) {
        while (c->used + length > c->capacity) c->capacity = c->capacity ? c->capacity * 2 : 65536;
        c->pending = realloc(c->pending, c->capacity);
    }
    memcpy(c->pending + c->used, data, length);
    c->used += length;
}

/* One buffer to one client: written now if nothing waits before it, the rest kept. */
static void send_to(Client *c, const char *data, size_t length) {
    if (c->used) { keep(c, data, length); return; }
    ssize_t written = send(c->fd, data, length, MSG_NOSIGNAL);
    if (written == (ssize_t)length) return;
    if (written < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK) { disconnect(c->fd); return; }
        written = 0;
    }
    missed++;
    keep(c, data + written, length - written);
    if (c->used) wait_writable(c, 1);
}

static void flush(Client *c) {
    ssize_t written = send(c->fd, c->pending, c->used, MSG_NOSIGNAL);
    if (written < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK) disconnect(c->fd);
        return;
    }
    memmove(c->pending, c->pending + written, c->used - written);
    c->used -= written;
    if (c->used == 0) wait_writable(c, 0);
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: floor SOCKET CAPTURE\n"); return 2; }
    read_capture(argv[2]);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);

    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    unlink(argv[1]);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4096)) { perror("bind"); return 1; }
    epoll = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    printf("ready\n");
    fflush(stdout);

    /* The next group's time, on a timer as precise as the one motiond's event loop uses. */
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event timer_event = {.events = EPOLLIN, .data.fd = timer};
    epoll_ctl(epoll, EPOLL_CTL_ADD, timer, &timer_event);

    size_t buffer_capacity = 0;
    for (int i = 0; i < nlines; i++) buffer_capacity += lines[i].prefix_length + 32 + lines[i].t_length + 24 + lines[i].suffix_length;
    char *buffer = malloc(buffer_capacity), discard[65536];
    long play = 0, values = 0;
    int next = 0;
    double base = now() + 0.1;
    while (!stopping) {
        double due = base + groups[next].due;
        struct itimerspec at = {.it_value = {.tv_sec = (time_t)due, .tv_nsec = (long)((due - (time_t)due) * 1e9)}};
        timerfd_settime(timer, TFD_TIMER_ABSTIME, &at, NULL);
        struct epoll_event events[64];
        int ready = epoll_wait(epoll, events, 64, -1);
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd == timer) {
                unsigned long long expirations;
                (void)!read(timer, &expirations, sizeof expirations);
            } else if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    if (client >= client_capacity) {
                        int old = client_capacity;
                        clients = grow(clients, &client_capacity, client + 1, sizeof *clients);
                        memset(clients + old, 0, (client_capacity - old) * sizeof *clients);
                    }
                    clients[client].fd = client;
                    clients[client].used = 0;
                    connected = grow(connected, &connected_capacity, nconnected + 1, sizeof *connected);
                    connected[nconnected++] = client;
                    struct epoll_event e = {.events = EPOLLIN, .data.fd = client};
                    epoll_ctl(epoll, EPOLL_CTL_ADD, client, &e);
                }
            } else {
                if ((events[i].events & EPOLLOUT) && clients[fd].used) flush(&clients[fd]);
                if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                    ssize_t got = read(fd, discard, sizeof discard);
                    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) disconnect(fd);
                }
            }
        }
        /* Every group that is due: encoded once, written to each client. */
        while (!stopping && now() >= base + groups[next].due) {
            Group *g = &groups[next];
            double stamp = g->input ? base + g->due : now();
            char *out = buffer;
            for (int l = g->first; l < g->first + g->count; l++) {
                Line *line = &lines[l];
                memcpy(out, line->prefix, line->prefix_length);
                out += line->prefix_length;
                int whole = snprintf(NULL, 0, "%.0f", stamp), decimals = line->t_length - whole - 1;
                if (decimals < 6) decimals = 6;
                if (decimals > 15) decimals = 15;
                out += sprintf(out, "%.*f,\"seq\":%ld", decimals, stamp, line->seq + play * per_play[line->stream]);
                memcpy(out, line->suffix, line->suffix_length);
                out += line->suffix_length;
            }
            for (int c = nconnected - 1; c >= 0; c--)  /* from the end: a client dropped is replaced by the last */
                send_to(&clients[connected[c]], buffer, out - buffer);
            values += g->count;
            if (++next == ngroups) {
                next = 0;
                play++;
                base += period;
                if (now() > base + period) base = now();  /* a whole play behind: start again from now */
            }
        }
    }
    fprintf(stderr, "floor: %ld plays, %ld values, %ld writes short, %ld clients dropped\n", play, values, missed, dropped);
    unlink(argv[1]);
    return 0;
}
