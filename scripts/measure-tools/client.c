/* The client the measurements use: N connections to a Unix socket, each subscribed to "*",
 * all read by one thread with epoll, so that what is measured is the server and not the
 * client. For each `value` line it takes the latency from the line's "t" (the frame's time
 * on CLOCK_MONOTONIC) to its reading, and per connection and stream the `seq` gaps (values
 * the client never saw: coalesced or dropped).
 *
 *     client SOCKET N SECONDS [WARMUP]
 *
 * Prints one JSON object: values, per_client_min, per_client_mean, frames_per_client (distinct
 * frame times: a frame's values share its "t"), gaps, p50_ms, p99_ms,
 * max_ms, closed (connections that ended early), seconds (of measuring). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BUCKET_US 10                 /* latency resolution */
#define BUCKETS (10 * 1000000 / BUCKET_US)  /* up to 10 s */
#define STREAMS 64

typedef struct {
    int fd;
    char *buffer;
    size_t used;
    long values;
    long frames;       /* distinct frame times seen: a frame's values share its "t" */
    double last_t;
    unsigned long hashes[STREAMS];
    long last[STREAMS];
    int streams;
} Connection;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned *histogram;
static long values, gaps, late;
static double worst;
static int measuring;

static void line(Connection *c, char *text, char *end, double at) {
    if (!strstr(text, "\"event\":\"value\"")) return;
    char *t = strstr(text, "\"t\":"), *seq = strstr(text, "\"seq\":"), *stream = strstr(text, "\"stream\":\"");
    if (!t || !seq || !stream || seq > end) return;
    long n = atol(seq + 6);
    if (n <= 0) return;  /* the value sent on subscribing */
    unsigned long hash = 5381;
    for (char *p = stream + 10; p < end && *p != '"'; p++) hash = hash * 33 + (unsigned char)*p;
    int slot = 0;
    while (slot < c->streams && c->hashes[slot] != hash) slot++;
    if (slot == c->streams && slot < STREAMS) { c->hashes[slot] = hash; c->last[slot] = 0; c->streams++; }
    if (slot < STREAMS) {
        if (measuring && c->last[slot] > 0 && n > c->last[slot] + 1) gaps += n - c->last[slot] - 1;
        c->last[slot] = n;
    }
    if (!measuring) return;
    double frame_time = atof(t + 4);
    if (frame_time != c->last_t) { c->frames++; c->last_t = frame_time; }
    double latency = at - frame_time;
    long bucket = (long)(latency * 1e6 / BUCKET_US);
    if (bucket < 0) bucket = 0;
    if (bucket >= BUCKETS) { bucket = BUCKETS - 1; late++; }
    histogram[bucket]++;
    if (latency > worst) worst = latency;
    values++;
    c->values++;
}

static double percentile(double p) {
    long target = (long)(p * values), seen = 0;
    for (long b = 0; b < BUCKETS; b++) if ((seen += histogram[b]) > target) return (b + 0.5) * BUCKET_US / 1000.0;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: client SOCKET N SECONDS [WARMUP]\n"); return 2; }
    int n = atoi(argv[2]);
    double seconds = atof(argv[3]), warmup = argc > 4 ? atof(argv[4]) : 0.5;
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    histogram = calloc(BUCKETS, sizeof *histogram);
    Connection *connections = calloc(n, sizeof *connections);
    int epoll = epoll_create1(0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    const char *subscribe = "{\"id\":1,\"op\":\"subscribe\",\"streams\":[\"*\"]}\n";
    for (int i = 0; i < n; i++) {
        Connection *c = &connections[i];
        c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
        double deadline = now() + 20;
        while (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0) {
            if (now() > deadline) { fprintf(stderr, "client: cannot connect to %s: %s\n", argv[1], strerror(errno)); return 1; }
            usleep(10000);
        }
        if (write(c->fd, subscribe, strlen(subscribe)) < 0) { perror("write"); return 1; }
        c->buffer = malloc(1 << 16);
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &e);
    }
    double start = now(), end = start + warmup + seconds;
    int closed = 0;
    struct epoll_event events[256];
    while (1) {
        double t = now();
        if (t >= end) break;
        measuring = t >= start + warmup;
        int ready = epoll_wait(epoll, events, 256, (int)((end - t) * 1000) + 1);
        double at = now();
        for (int i = 0; i < ready; i++) {
            Connection *c = events[i].data.ptr;
            ssize_t got = read(c->fd, c->buffer + c->used, (1 << 16) - c->used);
            if (got <= 0) {
                epoll_ctl(epoll, EPOLL_CTL_DEL, c->fd, NULL);
                closed++;
                continue;
            }
            c->used += got;
            char *begin = c->buffer, *stop = c->buffer + c->used, *newline;
            while ((newline = memchr(begin, '\n', stop - begin))) {
                *newline = 0;
                line(c, begin, newline, at);
                begin = newline + 1;
            }
            c->used = stop - begin;
            if (c->used == 1 << 16) c->used = 0;  /* a line longer than the buffer: not ours */
            memmove(c->buffer, begin, c->used);
        }
    }
    long least = -1, frames = 0;
    for (int i = 0; i < n; i++) {
        if (least < 0 || connections[i].values < least) least = connections[i].values;
        frames += connections[i].frames;
    }
    printf("{\"clients\": %d, \"values\": %ld, \"per_client_min\": %ld, \"per_client_mean\": %.1f, \"frames_per_client\": %.1f, \"gaps\": %ld, "
           "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, \"closed\": %d, \"seconds\": %.3f, \"beyond_10s\": %ld}\n",
           n, values, least, (double)values / n, (double)frames / n, gaps, percentile(0.5), percentile(0.99), worst * 1000, closed, seconds, late);
    return 0;
}
