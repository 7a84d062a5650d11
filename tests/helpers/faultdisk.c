/*
 * faultdisk: a one-file FUSE filesystem for arrayburn's tests. It serves
 * /disk.img, a read-only file whose every 8-byte word holds its own offset,
 * answers EIO to any read that touches one of the given bad ranges, and
 * delays by USEC any read that touches a slow range (a failing read too). A loop device
 * (losetup --direct-io=on) over it is a disk with bad or slow sectors.
 *
 *   faultdisk SIZE BAD SLOW MOUNTPOINT [fuse options]
 *     BAD  = START:LEN[,START:LEN...] or -
 *     SLOW = START:LEN:USEC[,...] or -
 *   With FAULTDISK_SEEK_USEC=N in the environment, a read that does not
 *   start where the previous one ended waits N µs more: a head seek (run
 *   with -s, one request at a time, to make it one head).
 *   With FAULTDISK_RW=1 the file is a writable disk in memory (zeros at
 *   first) for write-verify tests: BAD ranges then fail writes (EIO), and
 *   FAULTDISK_LOSE=START:LEN[,...] keeps the first write there and drops
 *   every later one (lost writes: a re-write reads back the old data),
 *   FAULTDISK_FLIP=START:LEN[,...] flips bit 0 of byte 100 of every 4 KiB
 *   block there on each read (bit rot the drive does not notice), and
 *   FAULTDISK_ALIAS=START:LEN:TO maps [START, START+LEN) onto TO for reads
 *   and writes (fake capacity: the upper part wraps onto the lower).
 *   FAULTDISK_FLIP_EVERY=START:LEN[,...] flips bit 0 of every byte there on
 *   each read (a cable or controller that garbles everything it carries),
 *   FAULTDISK_DROP=START:LEN[,...] drops every write there (a write cache
 *   that says done and keeps nothing: a fresh disk reads back zeros), and
 *   FAULTDISK_TEAR=START:LEN[,...] keeps only the first 512 bytes of each
 *   4 KiB block a write brings there (a torn write).
 *   FAULTDISK_CACHE=BYTES:FAST:SLOW:DRAIN paces writes as a drive-managed
 *   SMR disk does: while its media cache of BYTES has room, writes go at
 *   FAST MB/s and fill it; once it is full, at SLOW MB/s; after 200 ms
 *   without a write it drains at DRAIN MB/s (the drive cleaning its cache
 *   while idle). One write at a time. BYTES 0 is a steady disk that
 *   writes at SLOW MB/s.
 *   Two more fields, FAULTDISK_CACHE=BYTES:FAST:SLOW:DRAIN:BAND_USEC:DIRECT,
 *   make the cache take scattered writes too, as a DM-SMR disk's media
 *   cache does: a write that does not continue the previous one lands there
 *   without a seek while it has room; once full, it waits BAND_USEC more
 *   (the drive rewriting a band). DIRECT 1: sequential writes go straight
 *   to their bands at FAST MB/s and never fill the cache (a drive that
 *   spots a stream). Without room in a cache (or without one),
 *   FAULTDISK_SEEK_USEC delays a scattered write as it does a read.
 *
 *   FAULTDISK_TRIM=zero takes a hole punched in the file (a loop device's
 *   discard) and zeroes it; FAULTDISK_TRIM=keep takes it and keeps the
 *   data (a drive whose TRIM does not zero what it says it does); without
 *   it a hole is refused (EOPNOTSUPP), as before.
 *
 *   SIGUSR1 makes every read from then on fail (EIO): a drive that dies
 *   in the middle of a run.
 *
 * Build: gcc -O2 -o faultdisk faultdisk.c $(pkg-config --cflags --libs fuse3)
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RANGES 32
static off_t size_bytes;
static off_t bad_from[MAX_RANGES], bad_to[MAX_RANGES];
static int bad_count;
static off_t slow_from[MAX_RANGES], slow_to[MAX_RANGES];
static long slow_usec[MAX_RANGES];
static int slow_count;
static long seek_usec;
static off_t next_off;
static int rw;
static volatile sig_atomic_t dead;

static void die(int sig)
{
    (void)sig;
    dead = 1;
}
static char *mem;
static off_t lose_from[MAX_RANGES], lose_to[MAX_RANGES];
static int lose_count;
static int lose_written[MAX_RANGES];
static off_t flip_from[MAX_RANGES], flip_to[MAX_RANGES];
static int flip_count;
static off_t alias_from = -1, alias_len, alias_to;
static off_t every_from[MAX_RANGES], every_to[MAX_RANGES];
static int every_count;
static off_t drop_from[MAX_RANGES], drop_to[MAX_RANGES];
static int drop_count;
static off_t tear_from[MAX_RANGES], tear_to[MAX_RANGES];
static int cache_on;
static double cache_bytes, cache_fast, cache_slow, cache_drain, cache_used, last_write = -1;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static double cache_band_usec, cache_direct;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether a write of len bytes at off does not continue the previous
 * request (the head, or the cache, takes it elsewhere). */
static int scattered(off_t off, size_t len)
{
    return __atomic_exchange_n(&next_off, off + (off_t)len, __ATOMIC_SEQ_CST) != off;
}

/* Paces a write of len bytes through the media cache (FAULTDISK_CACHE),
 * or the head (FAULTDISK_SEEK_USEC) where there is none. */
static void cache_pace(size_t len, int apart)
{
    if (!cache_on) {
        if (apart && seek_usec > 0)
            usleep(seek_usec);
        return;
    }
    pthread_mutex_lock(&cache_lock);
    double t = now_s();
    if (last_write >= 0 && t - last_write > 0.2) {
        cache_used -= cache_drain * 1e6 * (t - last_write);
        if (cache_used < 0)
            cache_used = 0;
    }
    double rate = cache_slow, wait = 0;
    if (cache_direct && !apart) {
        rate = cache_fast;
    } else if (cache_used + (double)len <= cache_bytes) {
        rate = cache_fast;
        cache_used += (double)len;
    } else if (apart) {
        wait = cache_band_usec > 0 ? cache_band_usec : (double)seek_usec;
    }
    usleep((useconds_t)((double)len / (rate * 1e6) * 1e6 + wait));
    last_write = now_s();
    pthread_mutex_unlock(&cache_lock);
}
static int tear_count;

static int in_ranges(off_t pos, const off_t *from, const off_t *to, int n)
{
    for (int i = 0; i < n; i++)
        if (pos >= from[i] && pos < to[i])
            return 1;
    return 0;
}

/* Where byte `pos` of the disk is kept (the alias folds it back). */
static off_t place(off_t pos)
{
    if (alias_from >= 0 && pos >= alias_from && pos < alias_from + alias_len)
        return alias_to + (pos - alias_from);
    return pos;
}

static int parse_ranges(char *list, off_t *from, off_t *to)
{
    int n = 0;
    for (char *tok = strtok(list, ","); tok && n < MAX_RANGES; tok = strtok(NULL, ",")) {
        long long a = 0, len = 0;
        if (sscanf(tok, "%lld:%lld", &a, &len) == 2) {
            from[n] = a;
            to[n++] = a + len;
        }
    }
    return n;
}

static int fd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    memset(st, 0, sizeof *st);
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        return 0;
    }
    if (strcmp(path, "/disk.img") == 0) {
        st->st_mode = S_IFREG | (rw ? 0644 : 0444);
        st->st_nlink = 1;
        st->st_size = size_bytes;
        return 0;
    }
    return -ENOENT;
}

static int fd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off, (void)fi, (void)flags;
    if (strcmp(path, "/") != 0)
        return -ENOENT;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    fill(buf, "disk.img", NULL, 0, 0);
    return 0;
}

static int fd_open(const char *path, struct fuse_file_info *fi)
{
    if (strcmp(path, "/disk.img") != 0)
        return -ENOENT;
    if (!rw && (fi->flags & O_ACCMODE) != O_RDONLY)
        return -EROFS;
    fi->direct_io = 1; /* no FUSE page cache: every read reaches us */
    return 0;
}

static int fd_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
    (void)path, (void)fi;
    if (off >= size_bytes)
        return 0;
    if ((off_t)len > size_bytes - off)
        len = size_bytes - off;
    /* The delay comes first: a dying drive also takes its time to fail. */
    for (int i = 0; i < slow_count; i++)
        if (off < slow_to[i] && slow_from[i] < off + (off_t)len)
            usleep(slow_usec[i]);
    /* A dead drive answers nothing, written in memory or not. */
    if (dead)
        return -EIO;
    if (rw) {
        if (__atomic_exchange_n(&next_off, off + (off_t)len, __ATOMIC_SEQ_CST) != off && seek_usec > 0)
            usleep(seek_usec);
        for (size_t i = 0; i < len; i++)
            buf[i] = mem[place(off + (off_t)i)];
        for (int i = 0; i < flip_count; i++)
            for (off_t b = (off + 4095) / 4096 * 4096; b < off + (off_t)len; b += 4096)
                if (b >= flip_from[i] && b < flip_to[i] && b + 100 < off + (off_t)len)
                    buf[b - off + 100] ^= 1;
        for (size_t i = 0; i < len; i++)
            if (in_ranges(off + (off_t)i, every_from, every_to, every_count))
                buf[i] ^= 1;
        return (int)len;
    }
    for (int i = 0; i < bad_count; i++)
        if (off < bad_to[i] && bad_from[i] < off + (off_t)len)
            return -EIO;
    if (__atomic_exchange_n(&next_off, off + (off_t)len, __ATOMIC_SEQ_CST) != off && seek_usec > 0)
        usleep(seek_usec);
    for (size_t i = 0; i < len; i++) {
        uint64_t pos = (uint64_t)off + i;
        buf[i] = (char)((pos & ~7ULL) >> (8 * (pos & 7)));
    }
    return (int)len;
}

static int fd_write(const char *path, const char *buf, size_t len, off_t off,
                    struct fuse_file_info *fi)
{
    (void)path, (void)fi;
    if (!rw)
        return -EROFS;
    if (off >= size_bytes)
        return -ENOSPC;
    if ((off_t)len > size_bytes - off)
        len = size_bytes - off;
    for (int i = 0; i < bad_count; i++)
        if (off < bad_to[i] && bad_from[i] < off + (off_t)len)
            return -EIO;
    cache_pace(len, scattered(off, len));
    for (size_t i = 0; i < len; i++) {
        off_t pos = off + (off_t)i;
        int lost = 0;
        for (int k = 0; k < lose_count && !lost; k++)
            lost = lose_written[k] && pos >= lose_from[k] && pos < lose_to[k];
        if (in_ranges(pos, drop_from, drop_to, drop_count))
            lost = 1;
        if (in_ranges(pos, tear_from, tear_to, tear_count) && pos % 4096 >= 512)
            lost = 1;
        if (!lost)
            mem[place(pos)] = buf[i];
    }
    for (int k = 0; k < lose_count; k++)
        if (off < lose_to[k] && lose_from[k] < off + (off_t)len)
            lose_written[k] = 1;
    return (int)len;
}

static int fd_fallocate(const char *path, int mode, off_t off, off_t len,
                        struct fuse_file_info *fi)
{
    (void)path, (void)fi;
    const char *trim = getenv("FAULTDISK_TRIM");
    if (!rw)
        return -EROFS;
    if (!trim || !(mode & FALLOC_FL_PUNCH_HOLE))
        return -EOPNOTSUPP;
    if (off >= size_bytes)
        return 0;
    if (len > size_bytes - off)
        len = size_bytes - off;
    if (strcmp(trim, "zero") == 0)
        for (off_t i = 0; i < len; i++)
            mem[place(off + i)] = 0;
    return 0;
}

static const struct fuse_operations ops = {
    .fallocate = fd_fallocate,
    .getattr = fd_getattr,
    .readdir = fd_readdir,
    .open = fd_open,
    .read = fd_read,
    .write = fd_write,
};

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: faultdisk SIZE BAD SLOW MOUNTPOINT [fuse options]\n");
        return 2;
    }
    size_bytes = strtoll(argv[1], NULL, 10);
    if (getenv("FAULTDISK_SEEK_USEC"))
        seek_usec = strtol(getenv("FAULTDISK_SEEK_USEC"), NULL, 10);
    if (getenv("FAULTDISK_RW")) {
        rw = 1;
        /* Reserved lazily: a 16 TiB disk costs only the pages written. */
        mem = mmap(NULL, size_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mem == MAP_FAILED)
            return 1;
    }
    if (getenv("FAULTDISK_LOSE"))
        lose_count = parse_ranges(getenv("FAULTDISK_LOSE"), lose_from, lose_to);
    if (getenv("FAULTDISK_ALIAS")) {
        long long a = 0, l = 0, t = 0;
        if (sscanf(getenv("FAULTDISK_ALIAS"), "%lld:%lld:%lld", &a, &l, &t) == 3) {
            alias_from = a;
            alias_len = l;
            alias_to = t;
        }
    }
    if (getenv("FAULTDISK_FLIP"))
        flip_count = parse_ranges(getenv("FAULTDISK_FLIP"), flip_from, flip_to);
    if (getenv("FAULTDISK_FLIP_EVERY"))
        every_count = parse_ranges(getenv("FAULTDISK_FLIP_EVERY"), every_from, every_to);
    if (getenv("FAULTDISK_DROP"))
        drop_count = parse_ranges(getenv("FAULTDISK_DROP"), drop_from, drop_to);
    if (getenv("FAULTDISK_TEAR"))
        tear_count = parse_ranges(getenv("FAULTDISK_TEAR"), tear_from, tear_to);
    if (getenv("FAULTDISK_CACHE"))
        cache_on = sscanf(getenv("FAULTDISK_CACHE"), "%lf:%lf:%lf:%lf:%lf:%lf", &cache_bytes,
                          &cache_fast, &cache_slow, &cache_drain, &cache_band_usec,
                          &cache_direct) >= 4 && cache_slow > 0 &&
                   (cache_bytes == 0 || cache_fast > 0);
    for (char *tok = strtok(argv[2], ","); tok && bad_count < MAX_RANGES; tok = strtok(NULL, ",")) {
        long long from = 0, len = 0;
        if (sscanf(tok, "%lld:%lld", &from, &len) == 2) {
            bad_from[bad_count] = from;
            bad_to[bad_count++] = from + len;
        }
    }
    for (char *tok = strtok(argv[3], ","); tok && slow_count < MAX_RANGES; tok = strtok(NULL, ",")) {
        long long from = 0, len = 0, usec = 0;
        if (sscanf(tok, "%lld:%lld:%lld", &from, &len, &usec) == 3) {
            slow_from[slow_count] = from;
            slow_to[slow_count] = from + len;
            slow_usec[slow_count++] = usec;
        }
    }
    signal(SIGUSR1, die);
    argv[3] = argv[0];
    return fuse_main(argc - 3, argv + 3, &ops, NULL);
}
