// What transferd's event loop costs by itself: libcurl's multi socket interface driven by libuv,
// as transferd drives it (a uv_poll per socket, a uv_timer for libcurl's timeouts, 16 transfers
// at once, the next one added as one ends, a 512 KiB receive buffer), each body written to a
// file of its own as it arrives. No scheduler, store, threads or durability: the floor under
// transferd's loop thread, to set beside curl -Z, which drives the same libcurl with its own
// poll loop (bench/loop-floor.sh).
//   usage: loop-floor URL_PREFIX COUNT OUT_DIR   (fetches URL_PREFIX1 .. URL_PREFIXCOUNT)
#include <curl/curl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

enum { PARALLEL = 16 };

static uv_loop_t *loop;
static uv_timer_t timer;
static CURLM *multi;
static const char *prefix, *out;
static int count, next_index = 1, running_transfers, failures;

struct transfer {
    CURL *easy;
    int fd;
};

struct watch {
    uv_poll_t poll;
    curl_socket_t socket;
};

static size_t on_body(char *data, size_t size, size_t n, void *user) {
    struct transfer *t = user;
    size_t length = size * n;
    return write(t->fd, data, length) == (ssize_t)length ? length : 0;
}

static void add_next(void) {
    if (next_index > count) return;
    int index = next_index++;
    char url[4096], path[4096];
    snprintf(url, sizeof url, "%s%d", prefix, index);
    snprintf(path, sizeof path, "%s/f%d", out, index);
    struct transfer *t = calloc(1, sizeof *t);
    t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (t->fd < 0) { perror(path); exit(1); }
    t->easy = curl_easy_init();
    curl_easy_setopt(t->easy, CURLOPT_URL, url);
    curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
    curl_easy_setopt(t->easy, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(t->easy, CURLOPT_NOSIGNAL, 1L);
    curl_multi_add_handle(multi, t->easy);
    running_transfers++;
}

static void read_finished(void) {
    CURLMsg *message;
    int left;
    while ((message = curl_multi_info_read(multi, &left))) {
        if (message->msg != CURLMSG_DONE) continue;
        struct transfer *t;
        curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        long status = 0;
        curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &status);
        if (message->data.result != CURLE_OK || status != 200) failures++;
        curl_multi_remove_handle(multi, t->easy);
        curl_easy_cleanup(t->easy);
        close(t->fd);
        free(t);
        running_transfers--;
        add_next();
    }
}

static void on_poll(uv_poll_t *handle, int status, int events) {
    struct watch *w = handle->data;
    int flags = (status < 0) ? CURL_CSELECT_ERR : 0;
    if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    int still;
    curl_multi_socket_action(multi, w->socket, flags, &still);
    read_finished();
}

static void on_timeout(uv_timer_t *handle) {
    (void)handle;
    int still;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &still);
    read_finished();
}

static int on_timer_change(CURLM *m, long timeout_ms, void *user) {
    (void)m; (void)user;
    if (timeout_ms < 0) uv_timer_stop(&timer);
    else uv_timer_start(&timer, on_timeout, (uint64_t)timeout_ms, 0);
    return 0;
}

static void free_watch(uv_handle_t *handle) { free(handle->data); }

static int on_socket_change(CURL *easy, curl_socket_t socket, int what, void *user, void *socket_data) {
    (void)easy; (void)user;
    struct watch *w = socket_data;
    if (what == CURL_POLL_REMOVE) {
        if (w) {
            uv_poll_stop(&w->poll);
            uv_close((uv_handle_t *)&w->poll, free_watch);
            curl_multi_assign(multi, socket, NULL);
        }
        return 0;
    }
    if (!w) {
        w = calloc(1, sizeof *w);
        w->socket = socket;
        uv_poll_init_socket(loop, &w->poll, socket);
        w->poll.data = w;
        curl_multi_assign(multi, socket, w);
    }
    int events = 0;
    if (what & CURL_POLL_IN) events |= UV_READABLE;
    if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
    uv_poll_start(&w->poll, events, on_poll);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s URL_PREFIX COUNT OUT_DIR\n", argv[0]);
        return 2;
    }
    prefix = argv[1];
    count = atoi(argv[2]);
    out = argv[3];
    curl_global_init(CURL_GLOBAL_DEFAULT);
    loop = uv_default_loop();
    uv_timer_init(loop, &timer);
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket_change);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer_change);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 4L * PARALLEL);
    for (int i = 0; i < PARALLEL; i++) add_next();
    while (running_transfers > 0) uv_run(loop, UV_RUN_ONCE);
    curl_multi_cleanup(multi);
    if (failures) fprintf(stderr, "%d transfers failed\n", failures);
    return failures ? 1 : 0;
}
