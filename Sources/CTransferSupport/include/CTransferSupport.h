#ifndef CTRANSFERSUPPORT_H
#define CTRANSFERSUPPORT_H

// CURL_STRICTER makes CURL* and CURLM* distinct opaque types in Swift.
#define CURL_STRICTER
#include <curl/curl.h>
#include <uv.h>
#include <sqlite3.h>
#include <sys/types.h>
#include <malloc.h>

// libcurl is opened at run time, not linked (curl_library.c): a process that never transfers
// starts without it and the thirty libraries it brings. Its functions are called through these.

/// Opens libcurl if it is not open yet; 0, or -1 with the reason in `error`. Any function below
/// opens it too, and ends the process with the reason when it cannot.
int tds_curl_load(char *error, size_t capacity);

CURLcode tds_curl_global_init(long flags);
CURL *tds_curl_easy_init(void);
void tds_curl_easy_cleanup(CURL *easy);
CURLcode tds_curl_easy_pause(CURL *easy, int bitmask);
CURLcode tds_curl_easy_perform(CURL *easy);
const char *tds_curl_easy_strerror(CURLcode code);
CURLM *tds_curl_multi_init(void);
CURLMcode tds_curl_multi_cleanup(CURLM *multi);
CURLMcode tds_curl_multi_add_handle(CURLM *multi, CURL *easy);
CURLMcode tds_curl_multi_remove_handle(CURLM *multi, CURL *easy);
CURLMcode tds_curl_multi_assign(CURLM *multi, curl_socket_t socket, void *pointer);
CURLMcode tds_curl_multi_socket_action(CURLM *multi, curl_socket_t socket, int mask, int *running);
CURLMsg *tds_curl_multi_info_read(CURLM *multi, int *remaining);
const char *tds_curl_multi_strerror(CURLMcode code);
CURLSHcode tds_curl_share_cleanup(CURLSH *share);
struct curl_slist *tds_curl_slist_append(struct curl_slist *list, const char *string);
void tds_curl_slist_free_all(struct curl_slist *list);
CURLU *tds_curl_url(void);
void tds_curl_url_cleanup(CURLU *handle);
CURLUcode tds_curl_url_set(CURLU *handle, CURLUPart what, const char *part, unsigned int flags);
CURLUcode tds_curl_url_get(const CURLU *handle, CURLUPart what, char **part, unsigned int flags);
const char *tds_curl_url_strerror(CURLUcode code);
void tds_curl_free(void *pointer);

// libcurl's setopt/getinfo are variadic; Swift cannot call them. These are typed, non-variadic.
CURLcode tds_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode tds_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value);
CURLcode tds_easy_setopt_pointer(CURL *easy, CURLoption option, void *value);
CURLcode tds_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
CURLcode tds_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value);
CURLcode tds_easy_setopt_data_callback(CURL *easy, CURLoption option,
                                       size_t (*callback)(char *, size_t, size_t, void *));

/// CURLOPT_SEEKFUNCTION: how libcurl rewinds a request body (to send it again after an
/// authentication round trip).
CURLcode tds_easy_setopt_seek_callback(CURL *easy, int (*callback)(void *, curl_off_t, int));
/// CURLOPT_HTTPAUTH = CURLAUTH_ANY (curl's --anyauth): the safest method the server offers.
CURLcode tds_easy_set_any_auth(CURL *easy);
/// A share handle that shares only a DNS cache: a transfer with CURLOPT_RESOLVE entries keeps
/// them in a cache of its own instead of the multi handle's. NULL when it cannot be made.
CURLSH *tds_share_dns(void);

CURLcode tds_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode tds_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value);
CURLcode tds_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value);

CURLMcode tds_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
/// CURLMOPT_MAXCONNECTS: how many idle connections the multi handle's cache keeps.
CURLMcode tds_multi_set_maxconnects(CURLM *multi, long max);
CURLMcode tds_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback callback);
CURLMcode tds_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback callback);

/// Opens the transfer's sockets itself; the errno of a socket(2) that failed is stored at
/// `socket_errno`, which must outlive the handle.
CURLcode tds_easy_record_socket_errors(CURL *easy, int *socket_errno);

/// Macro constants that do not import into Swift as usable values.
size_t tds_writefunc_pause(void);
size_t tds_readfunc_pause(void);
size_t tds_readfunc_abort(void);
int tds_seekfunc_ok(void);
int tds_seekfunc_cantseek(void);
int tds_pause_cont(void);

/// The uid of the process on the other end of a connected Unix socket (SO_PEERCRED), or -1.
int tds_peer_uid(int fd, uid_t *uid);

/// renameat2 of `from` (relative to `from_directory`, a descriptor or AT_FDCWD) to `to` (relative
/// to `to_directory`); `replacing` 0 adds RENAME_NOREPLACE: it fails with EEXIST instead of
/// replacing the target.
int tds_rename_at(int from_directory, const char *from, int to_directory, const char *to, int replacing);

/// open(2) of a new file without a name in `directory` (O_TMPFILE | O_RDWR | O_CLOEXEC), with
/// `mode`: its bytes go with its last descriptor unless `tds_link_unnamed` names it. -1 with
/// errno (EOPNOTSUPP, EISDIR or EINVAL where the file system or the kernel has no such files).
int tds_open_unnamed(const char *directory, unsigned int mode);

/// linkat(2) of the file open as `fd` (a `tds_open_unnamed` one) to `to`, relative to
/// `to_directory`: by the descriptor itself (AT_EMPTY_PATH), or through /proc/self/fd where the
/// kernel wants a capability for that. Fails with EEXIST rather than replace `to`.
int tds_link_unnamed(int fd, int to_directory, const char *to);

/// sync_file_range(SYNC_FILE_RANGE_WRITE) over `length` bytes from `offset` (0: to the end of
/// the file): starts writing those dirty pages back without waiting for them (an fdatasync
/// afterwards still makes them, and the size, durable).
int tds_start_writeback(int fd, long long offset, long long length);

/// No core dump of this process (RLIMIT_CORE 0) and not dumpable (PR_SET_DUMPABLE 0: no core,
/// no ptrace by the same uid): its memory holds AWS secrets, proxy passwords and header-command
/// tokens. 0, or -1 with errno.
int tds_forbid_core_dumps(void);

/// syncfs(2): writes back every dirty page and inode of the file system `fd` is on and flushes
/// the device once; fails with a writeback error that file system saw since `fd` was opened.
int tds_syncfs(int fd);

/// The `f_type` fstatfs(2) tells for the file system `fd` is on (EXT4_SUPER_MAGIC, ...), or -1.
long long tds_file_system_type(int fd);

/// sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) (variadic in C): SQLite stops counting its
/// memory, which took a process-wide mutex around every one of its mallocs and frees. Only
/// before SQLite is initialized (the first open); returns SQLITE_MISUSE after.
int tds_sqlite_disable_memstatus(void);

/// Runs `/bin/sh -c command` as the leader of its own process group, with stdin from /dev/null,
/// stdout and stderr into one pipe, environment `envp` and default SIGPIPE, SIGXFSZ, SIGTERM,
/// SIGINT and SIGCHLD dispositions and an empty signal mask. Blocks until the shell exits
/// (a background grandchild that keeps the pipe open does not hold it up) or `timeout_ms`
/// (0 or less: no limit) have passed since the spawn, when the whole group gets SIGKILL and
/// *timed_out is 1. Keeps the first `capacity` bytes of output (*output_length); *truncated is
/// 1 when more came. *wait_status is waitpid's raw status. Returns 0, or an errno value when
/// /bin/sh could not be started or watched (poll failed: the group is killed; SIGCHLD ignored:
/// ECHILD, the status is lost). Descriptors above stderr are not inherited. The shell is always
/// reaped and no descriptor is left open. Thread: any; blocks.
int tds_run_hook(const char *command, char *const envp[], int timeout_ms,
                 char *output, size_t capacity, size_t *output_length,
                 int *truncated, int *wait_status, int *timed_out);

#endif
