// _GNU_SOURCE must come first so <sys/socket.h> exposes struct ucred and <stdio.h> renameat2.
#define _GNU_SOURCE
#include <sys/socket.h>
#include <stdio.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include "CTransferSupport.h"

int tds_peer_uid(int fd, uid_t *uid) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *uid = cred.uid;
    return 0;
}

int tds_rename_at(int from_directory, const char *from, int to_directory, const char *to, int replacing) {
    return renameat2(from_directory, from, to_directory, to, replacing ? 0 : RENAME_NOREPLACE);
}

int tds_open_unnamed(const char *directory, unsigned int mode) {
    return open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
}

int tds_link_unnamed(int fd, int to_directory, const char *to) {
    if (linkat(fd, "", to_directory, to, AT_EMPTY_PATH) == 0) return 0;
    if (errno != ENOENT && errno != EPERM) return -1;
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, to_directory, to, AT_SYMLINK_FOLLOW);
}

int tds_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}

int tds_syncfs(int fd) {
    return syncfs(fd);
}

int tds_sqlite_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

long long tds_file_system_type(int fd) {
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return -1;
    return (long long)info.f_type;
}

// Hooks: one shell command, its output, its exit.

static long long tds_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000 + now.tv_nsec;
}

/// A pipe end moved above stderr (if the daemon's stdio is closed), so that the child's
/// dup2 onto 1 and 2 never has source == target (which would keep FD_CLOEXEC).
static int tds_above_stderr(int fd) {
    if (fd > 2) return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int saved = errno;
    close(fd);
    errno = saved;
    return moved;
}

/// One read(2) of hook output: kept while there is room, counted as truncation after.
static ssize_t tds_read_hook_output(int fd, char *output, size_t capacity, size_t *length, int *truncated) {
    char discard[16384];
    ssize_t count;
    do {
        if (*length < capacity) count = read(fd, output + *length, capacity - *length);
        else count = read(fd, discard, sizeof discard);
    } while (count < 0 && errno == EINTR);
    if (count > 0) {
        if (*length < capacity) *length += (size_t)count;
        else *truncated = 1;
    }
    return count;
}

/// Once the shell is gone: takes what the pipe holds now (at most that much, so a grandchild
/// that keeps writing cannot hold the runner), never waiting for a writer that is left.
static void tds_drain_hook_output(int fd, char *output, size_t capacity, size_t *length, int *truncated) {
    int available = 0;
    if (ioctl(fd, FIONREAD, &available) != 0) available = 1 << 20;
    size_t budget = available > 0 ? (size_t)available : 0;
    while (budget > 0) {
        struct pollfd ready = {.fd = fd, .events = POLLIN};
        int polled = poll(&ready, 1, 0);
        if (polled < 0 && errno == EINTR) continue;
        if (polled <= 0 || !(ready.revents & POLLIN)) return;
        ssize_t count = tds_read_hook_output(fd, output, capacity, length, truncated);
        if (count <= 0) return;
        budget = (size_t)count >= budget ? 0 : budget - (size_t)count;
    }
}

static pid_t tds_waitpid(pid_t pid, int *status, int options) {
    pid_t reaped;
    do reaped = waitpid(pid, status, options); while (reaped < 0 && errno == EINTR);
    return reaped;
}

int tds_run_hook(const char *command, char *const envp[], int timeout_ms,
                 char *output, size_t capacity, size_t *output_length,
                 int *truncated, int *wait_status, int *timed_out) {
    *output_length = 0;
    *truncated = 0;
    *wait_status = 0;
    *timed_out = 0;
    long long deadline = timeout_ms > 0 ? tds_monotonic_ns() + (long long)timeout_ms * 1000000 : 0;

    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return errno;
    int reader = tds_above_stderr(ends[0]);
    int saved = errno;
    int writer = tds_above_stderr(ends[1]);
    if (writer < 0) saved = errno;
    if (reader < 0 || writer < 0) {
        if (reader >= 0) close(reader);
        if (writer >= 0) close(writer);
        return saved;
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) {
        close(reader);
        close(writer);
        return error;
    }
    error = posix_spawnattr_init(&attributes);
    if (error != 0) {
        posix_spawn_file_actions_destroy(&actions);
        close(reader);
        close(writer);
        return error;
    }
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGXFSZ);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGCHLD);
    error = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, writer, STDOUT_FILENO);
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, writer, STDERR_FILENO);
#ifdef __GLIBC__
#if __GLIBC_PREREQ(2, 34)
    // Descriptors some library opened without O_CLOEXEC must not reach the hook either.
    if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif
#endif
    if (error == 0) error = posix_spawnattr_setflags(&attributes,
        POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (error == 0) error = posix_spawnattr_setpgroup(&attributes, 0);
    if (error == 0) error = posix_spawnattr_setsigmask(&attributes, &empty);
    if (error == 0) error = posix_spawnattr_setsigdefault(&attributes, &defaults);
    pid_t pid = -1;
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)command, NULL};
    if (error == 0) error = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(writer);
    if (error != 0) {
        close(reader);
        return error;
    }

    // pidfd_open sets O_CLOEXEC itself; without it (kernel < 5.3) waitpid is polled every 50 ms.
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int status = 0, exited = 0, reader_open = 1, result = 0;
    while (!exited) {
        int wait_ms = -1;
        if (deadline != 0) {
            long long left = deadline - tds_monotonic_ns();
            if (left <= 0) break;
            // Rounded up, so the group is never killed before its time.
            long long left_ms = (left + 999999) / 1000000;
            wait_ms = left_ms > INT_MAX ? INT_MAX : (int)left_ms;
        }
        if (pidfd < 0 && (wait_ms < 0 || wait_ms > 50)) wait_ms = 50;
        struct pollfd watched[2] = {
            {.fd = reader_open ? reader : -1, .events = POLLIN},
            {.fd = pidfd, .events = POLLIN},
        };
        int polled = poll(watched, 2, wait_ms);
        if (polled < 0) {
            if (errno == EINTR) continue;
            result = errno;
            break;
        }
        if (watched[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t count = tds_read_hook_output(reader, output, capacity, output_length, truncated);
            if (count == 0 || (count < 0 && errno != EAGAIN)) reader_open = 0;
        }
        if (pidfd < 0 || watched[1].revents != 0) {
            pid_t reaped = tds_waitpid(pid, &status, WNOHANG);
            if (reaped == pid) exited = 1;
            else if (reaped < 0) {
                // ECHILD: SIGCHLD is ignored and the kernel reaped the shell; its status is lost.
                result = errno;
                exited = 1;
            }
        }
    }
    if (!exited) {
        // Out of time (or poll failed): unless the shell has just exited, the whole group
        // goes (the unreaped shell keeps its pid and group id from being reused), then it is reaped.
        pid_t reaped = tds_waitpid(pid, &status, WNOHANG);
        if (reaped == 0) {
            kill(-pid, SIGKILL);
            if (result == 0) *timed_out = 1;
            if (tds_waitpid(pid, &status, 0) < 0 && result == 0) result = errno;
        } else if (reaped < 0 && result == 0) {
            result = errno;
        }
    }
    if (reader_open) tds_drain_hook_output(reader, output, capacity, output_length, truncated);
    *wait_status = status;
    if (pidfd >= 0) close(pidfd);
    close(reader);
    return result;
}

int tds_forbid_core_dumps(void) {
    // The soft limit only: hooks may raise their own again.
    struct rlimit limit;
    if (getrlimit(RLIMIT_CORE, &limit) != 0) return -1;
    limit.rlim_cur = 0;
    if (setrlimit(RLIMIT_CORE, &limit) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
