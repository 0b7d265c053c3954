// libcurl, opened at run time rather than linked: every function transferd calls in it goes
// through `api`, filled once from the library dlopen(3) finds. A linked libcurl brings some thirty
// shared libraries (TLS, SSH, LDAP, Kerberos, RTMP) that the loader maps and initialises when a
// process starts, ~4.5 ms of CPU: every `transferctl` paid it, though nearly none of its commands
// call libcurl (BENCHMARKS.md). The daemon opens it at its start (`tds_curl_load`); a call made
// before that opens it first.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "CTransferSupport.h"

/// The soname Debian's libcurl4-openssl-dev links against (libcurl's ABI 4, since 2006).
static const char library_name[] = "libcurl.so.4";

static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *easy);
    CURLcode (*easy_setopt)(CURL *easy, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *easy, CURLINFO info, ...);
    CURLcode (*easy_pause)(CURL *easy, int bitmask);
    CURLcode (*easy_perform)(CURL *easy);
    const char *(*easy_strerror)(CURLcode code);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *multi);
    CURLMcode (*multi_setopt)(CURLM *multi, CURLMoption option, ...);
    CURLMcode (*multi_add_handle)(CURLM *multi, CURL *easy);
    CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *easy);
    CURLMcode (*multi_assign)(CURLM *multi, curl_socket_t socket, void *pointer);
    CURLMcode (*multi_socket_action)(CURLM *multi, curl_socket_t socket, int mask, int *running);
    CURLMsg *(*multi_info_read)(CURLM *multi, int *remaining);
    const char *(*multi_strerror)(CURLMcode code);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_setopt)(CURLSH *share, CURLSHoption option, ...);
    CURLSHcode (*share_cleanup)(CURLSH *share);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
    void (*slist_free_all)(struct curl_slist *list);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *handle);
    CURLUcode (*url_set)(CURLU *handle, CURLUPart what, const char *part, unsigned int flags);
    CURLUcode (*url_get)(const CURLU *handle, CURLUPart what, char **part, unsigned int flags);
    const char *(*url_strerror)(CURLUcode code);
    void (*free)(void *pointer);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[512];

static void load(void) {
    void *library = dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return;
    }
#define RESOLVE(field, symbol)                                                                     \
    if ((*(void **)&api.field = dlsym(library, symbol)) == NULL) {                                 \
        snprintf(load_error, sizeof load_error, "%s has no %s (libcurl 7.80 or later is needed)",  \
                 library_name, symbol);                                                            \
        return;                                                                                    \
    }
    RESOLVE(global_init, "curl_global_init")
    RESOLVE(easy_init, "curl_easy_init")
    RESOLVE(easy_cleanup, "curl_easy_cleanup")
    RESOLVE(easy_setopt, "curl_easy_setopt")
    RESOLVE(easy_getinfo, "curl_easy_getinfo")
    RESOLVE(easy_pause, "curl_easy_pause")
    RESOLVE(easy_perform, "curl_easy_perform")
    RESOLVE(easy_strerror, "curl_easy_strerror")
    RESOLVE(multi_init, "curl_multi_init")
    RESOLVE(multi_cleanup, "curl_multi_cleanup")
    RESOLVE(multi_setopt, "curl_multi_setopt")
    RESOLVE(multi_add_handle, "curl_multi_add_handle")
    RESOLVE(multi_remove_handle, "curl_multi_remove_handle")
    RESOLVE(multi_assign, "curl_multi_assign")
    RESOLVE(multi_socket_action, "curl_multi_socket_action")
    RESOLVE(multi_info_read, "curl_multi_info_read")
    RESOLVE(multi_strerror, "curl_multi_strerror")
    RESOLVE(share_init, "curl_share_init")
    RESOLVE(share_setopt, "curl_share_setopt")
    RESOLVE(share_cleanup, "curl_share_cleanup")
    RESOLVE(slist_append, "curl_slist_append")
    RESOLVE(slist_free_all, "curl_slist_free_all")
    RESOLVE(url, "curl_url")
    RESOLVE(url_cleanup, "curl_url_cleanup")
    RESOLVE(url_set, "curl_url_set")
    RESOLVE(url_get, "curl_url_get")
    RESOLVE(url_strerror, "curl_url_strerror")
    RESOLVE(free, "curl_free")
#undef RESOLVE
    loaded = 1;
}

int tds_curl_load(char *error, size_t capacity) {
    pthread_once(&load_once, load);
    if (loaded) return 0;
    snprintf(error, capacity, "%s", load_error);
    return -1;
}

// The table, opened if it was not: a process that cannot open libcurl ends here, with the reason
// (the daemon opens it at its start, and stops with the reason when it cannot).
#define API (*require())
static inline __typeof__(api) *require(void) {
    pthread_once(&load_once, load);
    if (!loaded) {
        fprintf(stderr, "%s: cannot load libcurl: %s\n", program_invocation_short_name, load_error);
        exit(1);
    }
    return &api;
}

CURLcode tds_curl_global_init(long flags) { return API.global_init(flags); }
CURL *tds_curl_easy_init(void) { return API.easy_init(); }
void tds_curl_easy_cleanup(CURL *easy) { API.easy_cleanup(easy); }
CURLcode tds_curl_easy_pause(CURL *easy, int bitmask) { return API.easy_pause(easy, bitmask); }
CURLcode tds_curl_easy_perform(CURL *easy) { return API.easy_perform(easy); }
const char *tds_curl_easy_strerror(CURLcode code) { return API.easy_strerror(code); }
CURLM *tds_curl_multi_init(void) { return API.multi_init(); }
CURLMcode tds_curl_multi_cleanup(CURLM *multi) { return API.multi_cleanup(multi); }
CURLMcode tds_curl_multi_add_handle(CURLM *multi, CURL *easy) { return API.multi_add_handle(multi, easy); }
CURLMcode tds_curl_multi_remove_handle(CURLM *multi, CURL *easy) { return API.multi_remove_handle(multi, easy); }
CURLMcode tds_curl_multi_assign(CURLM *multi, curl_socket_t socket, void *pointer) {
    return API.multi_assign(multi, socket, pointer);
}
CURLMcode tds_curl_multi_socket_action(CURLM *multi, curl_socket_t socket, int mask, int *running) {
    return API.multi_socket_action(multi, socket, mask, running);
}
CURLMsg *tds_curl_multi_info_read(CURLM *multi, int *remaining) { return API.multi_info_read(multi, remaining); }
const char *tds_curl_multi_strerror(CURLMcode code) { return API.multi_strerror(code); }
CURLSHcode tds_curl_share_cleanup(CURLSH *share) { return API.share_cleanup(share); }
struct curl_slist *tds_curl_slist_append(struct curl_slist *list, const char *string) {
    return API.slist_append(list, string);
}
void tds_curl_slist_free_all(struct curl_slist *list) { API.slist_free_all(list); }
CURLU *tds_curl_url(void) { return API.url(); }
void tds_curl_url_cleanup(CURLU *handle) { API.url_cleanup(handle); }
CURLUcode tds_curl_url_set(CURLU *handle, CURLUPart what, const char *part, unsigned int flags) {
    return API.url_set(handle, what, part, flags);
}
CURLUcode tds_curl_url_get(const CURLU *handle, CURLUPart what, char **part, unsigned int flags) {
    return API.url_get(handle, what, part, flags);
}
const char *tds_curl_url_strerror(CURLUcode code) { return API.url_strerror(code); }
void tds_curl_free(void *pointer) { API.free(pointer); }

CURLcode tds_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return API.easy_setopt(easy, option, value);
}
CURLcode tds_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value) {
    return API.easy_setopt(easy, option, value);
}
CURLcode tds_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return API.easy_setopt(easy, option, value);
}
CURLcode tds_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return API.easy_setopt(easy, option, value);
}
CURLcode tds_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return API.easy_setopt(easy, option, value);
}
CURLcode tds_easy_setopt_data_callback(CURL *easy, CURLoption option,
                                       size_t (*callback)(char *, size_t, size_t, void *)) {
    return API.easy_setopt(easy, option, callback);
}

CURLcode tds_easy_setopt_seek_callback(CURL *easy, int (*callback)(void *, curl_off_t, int)) {
    return API.easy_setopt(easy, CURLOPT_SEEKFUNCTION, callback);
}
CURLcode tds_easy_set_any_auth(CURL *easy) {
    return API.easy_setopt(easy, CURLOPT_HTTPAUTH, CURLAUTH_ANY);
}
CURLSH *tds_share_dns(void) {
    CURLSH *share = API.share_init();
    if (share != NULL && API.share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK) {
        API.share_cleanup(share);
        return NULL;
    }
    return share;
}

CURLcode tds_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return API.easy_getinfo(easy, info, value);
}
CURLcode tds_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value) {
    return API.easy_getinfo(easy, info, value);
}
CURLcode tds_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value) {
    return API.easy_getinfo(easy, info, value);
}

CURLMcode tds_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return API.multi_setopt(multi, option, value);
}

CURLMcode tds_multi_set_maxconnects(CURLM *multi, long max) {
    return API.multi_setopt(multi, CURLMOPT_MAXCONNECTS, max);
}
CURLMcode tds_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback callback) {
    return API.multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}
CURLMcode tds_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback callback) {
    return API.multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

size_t tds_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
size_t tds_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
size_t tds_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
int tds_seekfunc_ok(void) { return CURL_SEEKFUNC_OK; }
int tds_seekfunc_cantseek(void) { return CURL_SEEKFUNC_CANTSEEK; }
int tds_pause_cont(void) { return CURLPAUSE_CONT; }

// Opens a transfer's socket as libcurl would (and close-on-exec); when socket(2) fails, its
// errno goes to the int at `clientp`, so that a shortage of descriptors is told apart from a
// host that refuses connections (libcurl reports both as CURLE_COULDNT_CONNECT).
static curl_socket_t tds_open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    curl_socket_t fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd == CURL_SOCKET_BAD && clientp != NULL) *(int *)clientp = errno;
    return fd;
}

CURLcode tds_easy_record_socket_errors(CURL *easy, int *socket_errno) {
    CURLcode code = API.easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, tds_open_socket);
    if (code == CURLE_OK) code = API.easy_setopt(easy, CURLOPT_OPENSOCKETDATA, (void *)socket_errno);
    return code;
}
