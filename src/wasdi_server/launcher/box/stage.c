/* The world's stage, compiled: what bubblewrap starts inside a boxed run's world, in place of the Python
 * stage (supervisor.inside) when `make` has built it.  It does the same, in the same order, without an
 * interpreter to start:
 *
 *   wasdi-box-stage JOB_FD
 *
 * reads the job the supervisor wrote on JOB_FD (records "<tag><value>\0", written by box.stage_job), listens
 * on the run's loopback for each door and leaves a door keeper process splicing every connection to the
 * door's Unix socket (the server answers it), then confines itself (capabilities emptied, no new privileges,
 * the seccomp filter the server compiled, Landlock) and becomes the program.  A step that fails ends the
 * stage with a line on stderr and the exit code 126: the program never runs unconfined.
 *
 * Linux only; no library beyond the C library.  The Landlock and capability structures are declared here:
 * the machine's headers may predate the ABI the box needs (6: signal and abstract-socket scoping). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>

#define JOB_VERSION "1"
#define MARKS_FD 4
#define EXIT_NOT_STARTED 126
#define MAX_JOB (16 << 20)
#define BACKLOG 64
#define CHUNK 65536
#define MAX_PENDING (CHUNK * 4)
#define DOORS_NAME "wasdi-doors"

/* Landlock (include/uapi/linux/landlock.h); the system call numbers are the same on x86_64 and aarch64. */
#define SYS_LL_CREATE 444
#define SYS_LL_ADD 445
#define SYS_LL_RESTRICT 446
#define LL_VERSION 1u
#define LL_RULE_PATH 1
#define LL_RULE_PORT 2
#define FS_EXECUTE (1ull << 0)
#define FS_WRITE_FILE (1ull << 1)
#define FS_READ_FILE (1ull << 2)
#define FS_READ_DIR (1ull << 3)
#define FS_REMOVE_DIR (1ull << 4)
#define FS_REMOVE_FILE (1ull << 5)
#define FS_MAKE_DIR (1ull << 7)
#define FS_MAKE_REG (1ull << 8)
#define FS_MAKE_SOCK (1ull << 9)
#define FS_MAKE_FIFO (1ull << 10)
#define FS_MAKE_SYM (1ull << 12)
#define FS_REFER (1ull << 13)
#define FS_TRUNCATE (1ull << 14)
#define FS_IOCTL_DEV (1ull << 15)
#define NET_BIND (1ull << 0)
#define NET_CONNECT (1ull << 1)
#define SCOPE_ABSTRACT_UNIX (1ull << 0)
#define SCOPE_SIGNAL (1ull << 1)
#define REQUIRED_ABI 6
#define READ_RIGHTS (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)
#define WRITE_RIGHTS (READ_RIGHTS | FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG \
                      | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_SYM | FS_REFER | FS_TRUNCATE)
#define DEVICE_RIGHTS (FS_READ_FILE | FS_WRITE_FILE | FS_IOCTL_DEV)
#define FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

struct ll_ruleset_attr { uint64_t fs, net, scoped; };
struct ll_path_rule { uint64_t allowed; int32_t parent_fd; } __attribute__((packed));
struct ll_port_rule { uint64_t allowed, port; };

/* Capabilities (include/uapi/linux/capability.h, version 3). */
#define CAP_VERSION_3 0x20080522
#define SECURE_ALL 0xEF
struct cap_header { uint32_t version; int pid; };
struct cap_data { uint32_t effective, permitted, inheritable; };

struct list { char **items; size_t count, size; };

struct job {
    const char *program, *cwd, *filter_hex;
    struct list argv, env, read, write, devices, connect_ports, bind_ports, forwards;
    int confine, trace, versioned;
};

static const char *program_name = "the program";

static void fail(const char *what, int code) {
    char line[1024];
    int n = snprintf(line, sizeof line, "box: cannot start %s: %s%s%s\n", program_name, what, code ? ": " : "",
                     code ? strerror(code) : "");
    if (n > 0 && write(2, line, (size_t)n) < 0) { /* nothing more to tell */ }
    _exit(EXIT_NOT_STARTED);
}

static void mark(const struct job *job, const char *name, const struct timespec *when) {
    struct timespec now;
    char line[128];
    if (!job->trace) return;
    if (when == NULL) { clock_gettime(CLOCK_MONOTONIC, &now); when = &now; }
    int n = snprintf(line, sizeof line, "%s\t%lld.%09ld\n", name, (long long)when->tv_sec, when->tv_nsec);
    if (n > 0 && write(MARKS_FD, line, (size_t)n) < 0) { /* a mark lost is no reason to stop a run */ }
}

static void add(struct list *list, char *item) {
    if (list->count + 2 > list->size) {
        list->size = list->size ? list->size * 2 : 16;
        list->items = realloc(list->items, list->size * sizeof(char *));
        if (list->items == NULL) fail("out of memory", 0);
    }
    list->items[list->count++] = item;
    list->items[list->count] = NULL;
}

static void read_job(int fd, struct job *job) {
    size_t size = 0, room = 1 << 16;
    char *data = malloc(room);
    if (data == NULL) fail("out of memory", 0);
    for (;;) {
        if (size + 1 >= room) {
            if (room >= MAX_JOB) fail("the job is too large", 0);
            room *= 2;
            data = realloc(data, room);
            if (data == NULL) fail("out of memory", 0);
        }
        ssize_t n = read(fd, data + size, room - size - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("reading the job", errno);
        if (n == 0) break;
        size += (size_t)n;
    }
    close(fd);
    data[size] = '\0';
    memset(job, 0, sizeof *job);
    for (char *record = data; record < data + size; record += strlen(record) + 1) {
        char *value = record + 1;
        switch (record[0]) {
        case 'V': job->versioned = strcmp(value, JOB_VERSION) == 0; break;
        case 'P': job->program = value; break;
        case 'A': add(&job->argv, value); break;
        case 'E': add(&job->env, value); break;
        case 'C': job->cwd = value; break;
        case 'K': job->confine = strcmp(value, "1") == 0; break;
        case 'M': job->trace = strcmp(value, "1") == 0; break;
        case 'R': add(&job->read, value); break;
        case 'W': add(&job->write, value); break;
        case 'D': add(&job->devices, value); break;
        case 'T': add(&job->connect_ports, value); break;
        case 'B': add(&job->bind_ports, value); break;
        case 'F': add(&job->forwards, value); break;
        case 'S': job->filter_hex = value; break;
        default: fail("the job holds an unknown record (a stage older than the server: run make)", 0);
        }
    }
    if (!job->versioned) fail("the job is not of this stage's version (a stage older than the server: run make)", 0);
    if (job->program == NULL || job->cwd == NULL || job->argv.count == 0) fail("the job is incomplete", 0);
    if (job->env.items == NULL) { /* no variable at all: execve still wants an (empty) list */
        add(&job->env, NULL);
        job->env.count = 0;
    }
    program_name = job->argv.items[0];
}

/* -- confining ------------------------------------------------------------------------------------------- */
static int has_capabilities(void) {
    FILE *status = fopen("/proc/self/status", "re");
    char line[256];
    int found = 0;
    if (status == NULL) return geteuid() == 0;
    while (fgets(line, sizeof line, status)) {
        if (strncmp(line, "CapEff:", 7) == 0 || strncmp(line, "CapPrm:", 7) == 0 || strncmp(line, "CapBnd:", 7) == 0
            || strncmp(line, "CapAmb:", 7) == 0) {
            if (strtoull(line + 7, NULL, 16) != 0) found = 1;
        }
    }
    fclose(status);
    return found;
}

static void drop_capabilities(void) {
    int last = 40;
    FILE *file = fopen("/proc/sys/kernel/cap_last_cap", "re");
    if (file != NULL) {
        if (fscanf(file, "%d", &last) != 1) last = 40;
        fclose(file);
    }
    int privileged = has_capabilities();
    for (int cap = 0; cap <= last; cap++) {
        if (prctl(PR_CAPBSET_DROP, (unsigned long)cap, 0UL, 0UL, 0UL) < 0 && privileged && errno != EINVAL)
            fail("dropping a capability from the bounding set", errno);
    }
    prctl(PR_CAP_AMBIENT, (unsigned long)PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL);
    /* root keeps its uid: without these bits an execve would hand it a full permitted set again */
    if (privileged) prctl(PR_SET_SECUREBITS, (unsigned long)SECURE_ALL, 0UL, 0UL, 0UL);
    struct cap_header header = {CAP_VERSION_3, 0};
    struct cap_data data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) < 0) fail("capset", errno);
    if (has_capabilities()) fail("capabilities are still held after dropping them", EPERM);
}

static void set_no_new_privileges(void) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0) fail("PR_SET_NO_NEW_PRIVS", errno);
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static void install_socket_filter(const char *hex) {
    size_t length = hex ? strlen(hex) : 0;
    if (length == 0 || length % 16 != 0) fail("no seccomp filter in the job", 0);
    unsigned char *code = malloc(length / 2);
    if (code == NULL) fail("out of memory", 0);
    for (size_t i = 0; i < length / 2; i++) {
        int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
        if (high < 0 || low < 0) fail("the job's seccomp filter is not hexadecimal", 0);
        code[i] = (unsigned char)(high << 4 | low);
    }
    struct sock_fprog program = {(unsigned short)(length / 16), (struct sock_filter *)code};
    if (prctl(PR_SET_SECCOMP, 2UL /* SECCOMP_MODE_FILTER */, &program, 0UL, 0UL) < 0) fail("seccomp", errno);
}

static uint64_t handled_fs(long abi) {
    if (abi <= 1) return (1ull << 13) - 1;
    if (abi == 2) return (1ull << 14) - 1;
    if (abi <= 4) return (1ull << 15) - 1;
    return (1ull << 16) - 1;
}

static void add_path_rules(int ruleset, const struct list *paths, uint64_t rights) {
    for (size_t i = 0; i < paths->count; i++) {
        int fd = open(paths->items[i], O_PATH | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) continue;
        if (fd < 0) fail(paths->items[i], errno);
        struct stat info;
        if (fstat(fd, &info) < 0) fail(paths->items[i], errno);
        struct ll_path_rule rule = {S_ISDIR(info.st_mode) ? rights : rights & FILE_RIGHTS, fd};
        if (syscall(SYS_LL_ADD, ruleset, LL_RULE_PATH, &rule, 0u) < 0) fail("a Landlock rule for a path", errno);
        close(fd);
    }
}

static void add_port_rules(int ruleset, const struct list *ports, uint64_t right) {
    for (size_t i = 0; i < ports->count; i++) {
        struct ll_port_rule rule = {right, strtoull(ports->items[i], NULL, 10)};
        if (syscall(SYS_LL_ADD, ruleset, LL_RULE_PORT, &rule, 0u) < 0) fail("a Landlock rule for a TCP port", errno);
    }
}

static void restrict_with_landlock(const struct job *job) {
    long abi = syscall(SYS_LL_CREATE, NULL, 0UL, LL_VERSION);
    if (abi < REQUIRED_ABI) fail("Landlock ABI below the 6 a box needs", abi < 0 ? errno : EOPNOTSUPP);
    uint64_t fs = handled_fs(abi);
    struct ll_ruleset_attr attr = {fs, NET_BIND | NET_CONNECT, SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL};
    long ruleset = syscall(SYS_LL_CREATE, &attr, sizeof attr, 0u);
    if (ruleset < 0) fail("landlock_create_ruleset", errno);
    add_path_rules((int)ruleset, &job->read, READ_RIGHTS & fs);
    add_path_rules((int)ruleset, &job->write, WRITE_RIGHTS & fs);
    add_path_rules((int)ruleset, &job->devices, DEVICE_RIGHTS & fs);
    add_port_rules((int)ruleset, &job->connect_ports, NET_CONNECT);
    add_port_rules((int)ruleset, &job->bind_ports, NET_BIND);
    if (syscall(SYS_LL_RESTRICT, (int)ruleset, 0u) < 0) fail("landlock_restrict_self", errno);
    close((int)ruleset);
}

/* -- the doors --------------------------------------------------------------------------------------------- */
struct door { int listener; const char *target; };
struct side { int fd; char *pending; size_t length; int said_all, shut, gone; };

static void serve_doors(struct door *doors, size_t count) {
    struct side *sides = NULL; /* pairs: 2k and 2k+1 are the two ends of one connection */
    size_t pairs = 0;
    struct pollfd *polled = NULL;
    size_t *owner = NULL;
    char buffer[CHUNK];
    for (;;) {
        size_t wanted = count + 2 * pairs;
        polled = realloc(polled, (wanted + 1) * sizeof *polled);
        owner = realloc(owner, (wanted + 1) * sizeof *owner);
        if (polled == NULL || owner == NULL) _exit(1);
        size_t n = 0;
        for (size_t i = 0; i < count; i++) {
            polled[n] = (struct pollfd){doors[i].listener, POLLIN, 0};
            owner[n++] = (size_t)-1 - i;
        }
        for (size_t s = 0; s < 2 * pairs; s++) {
            struct side *side = &sides[s], *other = &sides[s ^ 1];
            if (side->fd < 0 || side->gone) continue;
            short events = 0;
            if (!side->said_all && other->length < MAX_PENDING) events |= POLLIN;
            if (side->length) events |= POLLOUT;
            polled[n] = (struct pollfd){side->fd, events, 0};
            owner[n++] = s;
        }
        if (poll(polled, n, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(1);
        }
        for (size_t p = 0; p < n; p++) {
            short events = polled[p].revents;
            if (!events) continue;
            if (owner[p] > (size_t)-1 - count) {
                struct door *door = &doors[(size_t)-1 - owner[p]];
                int client = accept4(door->listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (client < 0) continue;
                int upstream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                struct sockaddr_un address = {.sun_family = AF_UNIX};
                strncpy(address.sun_path, door->target, sizeof address.sun_path - 1);
                if (upstream < 0 || connect(upstream, (struct sockaddr *)&address, sizeof address) < 0) {
                    close(client);
                    if (upstream >= 0) close(upstream);
                    continue;
                }
                fcntl(upstream, F_SETFL, fcntl(upstream, F_GETFL) | O_NONBLOCK);
                size_t slot = pairs;
                for (size_t k = 0; k < pairs; k++)
                    if (sides[2 * k].fd < 0) { slot = k; break; }
                if (slot == pairs) {
                    sides = realloc(sides, 2 * (pairs + 1) * sizeof *sides);
                    if (sides == NULL) _exit(1);
                    pairs++;
                }
                sides[2 * slot] = (struct side){client, NULL, 0, 0, 0, 0};
                sides[2 * slot + 1] = (struct side){upstream, NULL, 0, 0, 0, 0};
                continue;
            }
            size_t s = owner[p];
            struct side *side = &sides[s], *other = &sides[s ^ 1];
            if (side->fd < 0) continue;
            if ((events & (POLLIN | POLLHUP | POLLERR)) && !side->said_all) {
                ssize_t got = recv(side->fd, buffer, sizeof buffer, 0);
                if (got > 0) {
                    other->pending = realloc(other->pending, other->length + (size_t)got);
                    if (other->pending == NULL) _exit(1);
                    memcpy(other->pending + other->length, buffer, (size_t)got);
                    other->length += (size_t)got;
                } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                    side->said_all = 1;
                }
            }
            if ((events & POLLOUT) && side->length) {
                ssize_t sent = send(side->fd, side->pending, side->length, MSG_NOSIGNAL);
                if (sent > 0) {
                    memmove(side->pending, side->pending + sent, side->length - (size_t)sent);
                    side->length -= (size_t)sent;
                } else if (sent < 0 && errno != EAGAIN && errno != EINTR) {
                    side->gone = 1; /* nothing more can be written to it: what waits for it is dropped */
                    side->length = 0;
                }
            }
            if ((events & (POLLHUP | POLLERR)) && side->said_all) {
                side->gone = 1; /* hung up both ways: what it said is delivered, nothing can reach it */
                side->length = 0;
            }
            for (int k = 0; k < 2; k++) {
                struct side *one = k ? other : side, *peer = k ? side : other;
                if (peer->said_all && !one->length && !one->shut && !one->gone) {
                    shutdown(one->fd, SHUT_WR);
                    one->shut = 1;
                }
            }
            /* over: both told the other all; or one end gone and what it said delivered to the other */
            if ((side->shut && other->shut) || (side->gone && !other->length) || (other->gone && !side->length)) {
                for (int k = 0; k < 2; k++) {
                    struct side *one = k ? other : side;
                    close(one->fd);
                    free(one->pending);
                    *one = (struct side){-1, NULL, 0, 0, 0, 0};
                }
            }
        }
    }
}

static struct door *open_doors(const struct list *forwards) {
    struct door *doors = calloc(forwards->count + 1, sizeof *doors);
    if (doors == NULL) fail("out of memory", 0);
    for (size_t i = 0; i < forwards->count; i++) {
        char *record = forwards->items[i], *separator = strchr(record, ':');
        if (separator == NULL) fail("a door of the job has no socket", 0);
        *separator = '\0';
        int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), yes = 1;
        struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(record)),
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (listener < 0) fail("a door's socket", errno);
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        if (bind(listener, (struct sockaddr *)&address, sizeof address) < 0) fail("a door's port", errno);
        if (listen(listener, BACKLOG) < 0) fail("a door's port", errno);
        doors[i] = (struct door){listener, separator + 1};
    }
    return doors;
}

static void keep_doors(const struct job *job, struct door *doors, size_t count) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) _exit(EXIT_NOT_STARTED);
    for (int fd = 0; fd < 3; fd++) dup2(null, fd);
    if (job->trace) close(MARKS_FD);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_NAME, (unsigned long)DOORS_NAME, 0UL, 0UL, 0UL); /* the sweep tells the box's own from the app's */
    if (prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL) < 0) _exit(EXIT_NOT_STARTED);
    drop_capabilities();
    set_no_new_privileges();
    serve_doors(doors, count);
}

int main(int argc, char **argv) {
    struct timespec up;
    struct job job;
    clock_gettime(CLOCK_MONOTONIC, &up);
    if (argc != 2) fail("usage: wasdi-box-stage JOB_FD", 0);
    read_job(atoi(argv[1]), &job);
    mark(&job, "stage up", &up);
    if (chdir(job.cwd) < 0) fail(job.cwd, errno);
    size_t count = job.forwards.count;
    struct door *doors = open_doors(&job.forwards);
    if (count) {
        pid_t keeper = fork();
        if (keeper < 0) fail("starting the door keeper", errno);
        if (keeper == 0) keep_doors(&job, doors, count);
        for (size_t i = 0; i < count; i++) close(doors[i].listener);
    }
    mark(&job, "doors listening", NULL);
    signal(SIGPIPE, SIG_DFL);
    if (job.confine) {
        drop_capabilities();
        set_no_new_privileges();
        install_socket_filter(job.filter_hex);
        restrict_with_landlock(&job);
        mark(&job, "confined", NULL);
    }
    mark(&job, "program started", NULL);
    execve(job.program, job.argv.items, job.env.items);
    fail("execve", errno);
    return EXIT_NOT_STARTED;
}
