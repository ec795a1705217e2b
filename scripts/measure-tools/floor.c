/* The floor motiond is measured against: the least a daemon could do to deliver the same
 * replay. It plays an evemu recording's frames at their times (as motiond --replay does:
 * from 0.1 s after start, with a pause of 1 s of recording time between plays when looping)
 * and, for each frame,
 * encodes one line once and writes it to every client with one write(2). It reads and
 * discards what clients send. No gestures, no springs, no protocol: what is left is the
 * kernel's share, which motiond pays too.
 *
 *     floor SOCKET RECORDING.evemu [SPEED] [loop]
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

typedef struct { double t; int x, y; } Frame;

static volatile sig_atomic_t stopping;
static void on_signal(int s) { (void)s; stopping = 1; }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The recording's frames: time, and the last ABS_MT_POSITION_X/Y (0x35/0x36) seen. */
static Frame *read_frames(const char *path, int *count) {
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); exit(1); }
    Frame *frames = NULL;
    int n = 0, capacity = 0, x = 0, y = 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        double t; unsigned type, code; int value;
        if (sscanf(line, "E: %lf %x %x %d", &t, &type, &code, &value) != 4) continue;
        if (type == 3 && code == 0x35) x = value;
        if (type == 3 && code == 0x36) y = value;
        if (type == 0 && code == 0) {
            if (n == capacity) frames = realloc(frames, (capacity = capacity ? capacity * 2 : 256) * sizeof *frames);
            frames[n++] = (Frame){t, x, y};
        }
    }
    fclose(f);
    *count = n;
    return frames;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: floor SOCKET RECORDING [SPEED] [loop]\n"); return 2; }
    double speed = argc > 3 ? atof(argv[3]) : 1;
    int loop = argc > 4 && strcmp(argv[4], "loop") == 0;
    int count;
    Frame *frames = read_frames(argv[2], &count);
    if (count == 0) { fprintf(stderr, "floor: no frames in %s\n", argv[2]); return 1; }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);

    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    unlink(argv[1]);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4096)) { perror("bind"); return 1; }
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    printf("ready\n");
    fflush(stdout);

    /* The next frame's time, on a timer as precise as the one motiond's event loop uses. */
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event timer_event = {.events = EPOLLIN, .data.fd = timer};
    epoll_ctl(epoll, EPOLL_CTL_ADD, timer, &timer_event);

    int *clients = NULL, nclients = 0, capacity = 0;
    long seq = 0, missed = 0;
    int next = 0;
    double base = now() + 0.1;
    char discard[65536], text[256];
    while (!stopping) {
        double due = base + frames[next].t / speed;
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
                    if (nclients == capacity) clients = realloc(clients, (capacity = capacity ? capacity * 2 : 64) * sizeof *clients);
                    clients[nclients++] = client;
                    struct epoll_event e = {.events = EPOLLIN, .data.fd = client};
                    epoll_ctl(epoll, EPOLL_CTL_ADD, client, &e);
                }
            } else if (read(fd, discard, sizeof discard) == 0) {
                epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL);
                close(fd);
                for (int c = 0; c < nclients; c++) if (clients[c] == fd) { clients[c] = clients[--nclients]; break; }
            }
        }
        /* Every frame that is due: one line, encoded once, written to each client. Its time
         * is the frame's, as motiond's replay stamps it, so lateness counts for both. */
        while (!stopping && now() >= base + frames[next].t / speed) {
            int length = snprintf(text, sizeof text,
                "{\"event\":\"value\",\"stream\":\"card.position\",\"value\":{\"x\":%d,\"y\":%d},\"t\":%.6f,\"seq\":%ld}\n",
                frames[next].x, frames[next].y, base + frames[next].t / speed, ++seq);
            for (int c = 0; c < nclients; c++)
                if (write(clients[c], text, length) != length) missed++;
            if (++next == count) {
                if (!loop) { stopping = 1; break; }
                next = 0;
                base = now() + (1 - frames[0].t) / speed;
            }
        }
    }
    fprintf(stderr, "floor: %ld frames, %ld writes missed\n", seq, missed);
    unlink(argv[1]);
    return 0;
}
