// What transferd's event loop costs by itself: libcurl's multi socket interface driven by libuv,
// as transferd drives it (a uv_poll per socket, a uv_timer for libcurl's timeouts, 16 transfers
// at once, the next one added as one ends, a 512 KiB receive buffer), each body written to a
// file of its own as it arrives. No scheduler, store, threads or durability: the floor under
// transferd's loop thread, to set beside curl -Z, which drives the same libcurl with its own
// poll loop (bench/loop-floor.sh).
//
// With a database path as a fourth argument it also keeps transferd's promises, the least way
// it can: every job inserted as a row first, in one transaction; each body written to a hidden
// `.part` file; one thread beside the loop that, for all that has come in since its last
// round, records the attempts begun (the row's state), then makes the finished files durable
// (one syncfs), records them finalizing, renames them, fsyncs the directory and records them
// completed (SQLite in WAL mode, synchronous=FULL, one transaction each). The floor under
// transferd's whole work for a small file.
//   usage: loop-floor URL_PREFIX COUNT OUT_DIR [DATABASE]   (fetches URL_PREFIX1 .. COUNT)
#define _GNU_SOURCE
#include <curl/curl.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
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
    int fd, index;
    struct transfer *next;
};

// The durable mode: what the loop hands the finishing thread, and what comes back.
static sqlite3 *db;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static struct transfer *finished;              // done on the loop, to be made durable
static int *begun, begun_count;                // attempts begun, to be recorded (room for all)
static int completed, unfinished;              // completed: set by the thread, read on the loop
static uv_async_t answers;

static void fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, db ? sqlite3_errmsg(db) : "");
    exit(1);
}

static void sql(const char *text) {
    if (sqlite3_exec(db, text, NULL, NULL, NULL) != SQLITE_OK) fail(text);
}

// Sets `state` on each of `ids` in one transaction.
static void record(const char *state, const int *ids, int n) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db, "UPDATE jobs SET state = ?, updated_at = ? WHERE id = ?", -1, &statement, NULL)) fail("prepare");
    sql("BEGIN IMMEDIATE");
    for (int i = 0; i < n; i++) {
        sqlite3_bind_text(statement, 1, state, -1, SQLITE_STATIC);
        sqlite3_bind_int64(statement, 2, (sqlite3_int64)time(NULL));
        sqlite3_bind_int(statement, 3, ids[i]);
        if (sqlite3_step(statement) != SQLITE_DONE) fail("update");
        sqlite3_reset(statement);
    }
    sql("COMMIT");
    sqlite3_finalize(statement);
}

static void *finishing(void *unused) {
    (void)unused;
    int directory = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int *starts = malloc(sizeof(int) * (size_t)count), *ids = malloc(sizeof(int) * (size_t)count);
    for (;;) {
        pthread_mutex_lock(&lock);
        while (!finished && begun_count == 0 && unfinished > 0) pthread_cond_wait(&work, &lock);
        if (unfinished == 0) { pthread_mutex_unlock(&lock); break; }
        struct transfer *group = finished;
        finished = NULL;
        int n_starts = begun_count;
        memcpy(starts, begun, sizeof(int) * (size_t)n_starts);
        begun_count = 0;
        pthread_mutex_unlock(&lock);

        if (n_starts) record("running", starts, n_starts);
        if (!group) continue;
        int n = 0;
        syncfs(directory);
        for (struct transfer *t = group; t; t = t->next) ids[n++] = t->index;
        record("finalizing", ids, n);
        for (struct transfer *t = group; t; t = t->next) {
            char from[4096], to[4096];
            snprintf(from, sizeof from, "%s/.f%d.part", out, t->index);
            snprintf(to, sizeof to, "%s/f%d", out, t->index);
            fchmod(t->fd, 0644);
            if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) != 0) fail(to);
        }
        fsync(directory);
        record("completed", ids, n);
        for (struct transfer *t = group; t;) {
            struct transfer *following = t->next;
            close(t->fd);
            free(t);
            t = following;
        }
        pthread_mutex_lock(&lock);
        completed += n;
        unfinished -= n;
        pthread_mutex_unlock(&lock);
        uv_async_send(&answers);
    }
    close(directory);
    free(starts);
    free(ids);
    return NULL;
}

static void on_answers(uv_async_t *handle) { (void)handle; }

static void open_store(const char *path) {
    if (sqlite3_open(path, &db) != SQLITE_OK) fail(path);
    sql("PRAGMA journal_mode = WAL");
    sql("PRAGMA synchronous = FULL");
    sql("CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, url TEXT NOT NULL, path TEXT NOT NULL, "
        "state TEXT NOT NULL, created_at INTEGER, updated_at INTEGER)");
    sql("CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id)");
    sql("DELETE FROM jobs");
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v2(db, "INSERT INTO jobs (id, url, path, state, created_at) VALUES (?, ?, ?, 'queued', ?)", -1,
                           &statement, NULL)) fail("prepare");
    sql("BEGIN IMMEDIATE");
    for (int i = 1; i <= count; i++) {
        char url[4096], path[4096];
        snprintf(url, sizeof url, "%s%d", prefix, i);
        snprintf(path, sizeof path, "%s/f%d", out, i);
        sqlite3_bind_int(statement, 1, i);
        sqlite3_bind_text(statement, 2, url, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(statement, 3, path, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(statement, 4, (sqlite3_int64)time(NULL));
        if (sqlite3_step(statement) != SQLITE_DONE) fail("insert");
        sqlite3_reset(statement);
    }
    sql("COMMIT");
    sqlite3_finalize(statement);
}

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
    if (db) snprintf(path, sizeof path, "%s/.f%d.part", out, index);
    else snprintf(path, sizeof path, "%s/f%d", out, index);
    struct transfer *t = calloc(1, sizeof *t);
    t->index = index;
    t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, db ? 0600 : 0644);
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
    if (db) {
        pthread_mutex_lock(&lock);
        begun[begun_count++] = index;
        pthread_cond_signal(&work);
        pthread_mutex_unlock(&lock);
    }
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
        if (db) {
            pthread_mutex_lock(&lock);
            t->next = finished;
            finished = t;
            pthread_cond_signal(&work);
            pthread_mutex_unlock(&lock);
        } else {
            close(t->fd);
            free(t);
        }
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
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s URL_PREFIX COUNT OUT_DIR [DATABASE]\n", argv[0]);
        return 2;
    }
    prefix = argv[1];
    count = atoi(argv[2]);
    out = argv[3];
    curl_global_init(CURL_GLOBAL_DEFAULT);
    loop = uv_default_loop();
    uv_timer_init(loop, &timer);
    pthread_t thread;
    if (argc == 5) {
        open_store(argv[4]);
        begun = malloc(sizeof(int) * (size_t)count);
        unfinished = count;
        uv_async_init(loop, &answers, on_answers);
        pthread_create(&thread, NULL, finishing, NULL);
    }
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket_change);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer_change);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 4L * PARALLEL);
    for (int i = 0; i < PARALLEL; i++) add_next();
    while (running_transfers > 0) uv_run(loop, UV_RUN_ONCE);
    if (db) {
        // Answers wake the loop as groups complete, as they would wake transferd's.
        for (;;) {
            pthread_mutex_lock(&lock);
            int left = unfinished;
            pthread_mutex_unlock(&lock);
            if (left == 0) break;
            uv_run(loop, UV_RUN_ONCE);
        }
        pthread_join(thread, NULL);
        uv_close((uv_handle_t *)&answers, NULL);
        sqlite3_close(db);
    }
    curl_multi_cleanup(multi);
    if (failures) fprintf(stderr, "%d transfers failed\n", failures);
    return failures ? 1 : 0;
}
