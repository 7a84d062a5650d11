#!/usr/bin/env bash
# Removes what an earlier test run left behind, and only that: loop
# devices, files, mounts and cgroups whose names carry the test suite's own
# mark, `arrayburn-test-PID-`, where PID is a test process that is gone (no
# such process, or one that is not a test binary: a pid reused since). It
# says what it removed, one line each; anything else is never touched, nor
# a file of that name another user made.
# scripts/test.sh runs it before and after the tests (a test killed at its
# deadline cannot run its own clean-up). Needs root; without it, it does
# nothing. It also removes the lab's drive files that no process holds.
set -uo pipefail
[ "$(id -u)" = 0 ] || exit 0
blkio=${ARRAYBURN_BLKIO_ROOT:-/sys/fs/cgroup/blkio}
say() { echo "scripts/leftovers.sh: $*" >&2; }

# The pid in a name marked as the suite's, or nothing.
pid_of() { [[ $1 =~ arrayburn-test-([0-9]+)- ]] && echo "${BASH_REMATCH[1]}"; }
# Whether that test process still runs (a test binary is `tests-HASH`).
alive() { [[ $(readlink "/proc/$1/exe" 2>/dev/null) == */tests-* ]]; }
gone() { local pid; pid=$(pid_of "$1") && ! alive "$pid"; }
# Made by root (the tests run as root): a name planted by another user is
# not ours, whatever it says. `stat` does not follow a link.
roots() { [ "$(stat -c %u "$1" 2>/dev/null)" = 0 ]; }
# The pids of a gone test's FUSE daemons (their command line names its
# mount point).
daemons() {
    local proc cmd
    for proc in /proc/[0-9]*; do
        cmd=$(tr '\0' ' ' 2>/dev/null < "$proc/cmdline") || continue
        [[ $cmd == *faultdisk* ]] && gone "$cmd" && echo "${proc#/proc/} $cmd"
    done
}

# 1. A gone test's FUSE daemons thawed: whatever reads their disks can end.
while read -r pid _; do kill -CONT "$pid" 2>/dev/null; done < <(daemons)

# 2. Processes still inside a leftover cgroup (runs the gone test started;
#    they read or write its devices): ended, then the group removed.
for group in "$blkio"/arrayburn-test-*; do
    [ -d "$group" ] && gone "$group" || continue
    while read -r pid; do
        [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    done < "$group/cgroup.procs"
    for _ in $(seq 50); do [ -s "$group/cgroup.procs" ] || break; sleep 0.1; done
    rmdir "$group" 2>/dev/null && say "removed cgroup $group (its test, pid $(pid_of "$group"), is gone)"
done

# 3. Loop devices over a marked file (or a file under a marked mount).
while read -r dev back; do
    [ -n "$back" ] && gone "$back" || continue
    losetup -d "$dev" 2>/dev/null && say "detached $dev ($back)"
done < <(losetup -l -n --raw -O NAME,BACK-FILE 2>/dev/null)

# 4. Mounts on a marked directory (a FUSE disk, an ext4 on a loop disk).
while read -r _ mnt _; do
    mnt=$(printf '%b' "$mnt")
    [[ $mnt == */arrayburn-test-* ]] && gone "$mnt" || continue
    { umount "$mnt" || umount -l "$mnt"; } 2>/dev/null && say "unmounted $mnt"
done < <(tac /proc/self/mounts)
while read -r pid cmd; do
    kill -KILL "$pid" 2>/dev/null && say "ended FUSE daemon $pid ($cmd)"
done < <(daemons)

# 5. Marked files and directories in the places the tests make them.
for f in /dev/shm/arrayburn-test-* /tmp/arrayburn-test-* /var/tmp/arrayburn-test-*; do
    [ -e "$f" ] && roots "$f" && gone "$f" || continue
    mountpoint -q "$f" 2>/dev/null && continue
    rm -rf --one-file-system "$f" && say "removed $f"
done

# 6. The lab's drive files (scripts/lab.sh, root's) that no process holds
#    open: a lab ended by a signal could not remove them.
held=$(find /proc/[0-9]*/fd -lname '/dev/shm/arrayburn-lab-*' -printf '%l\n' 2>/dev/null | sort -u)
for f in /dev/shm/arrayburn-lab-*.img; do
    [ -f "$f" ] && roots "$f" || continue
    grep -qxF "$f" <<<"$held" && continue
    rm -f "$f" && say "removed $f (no lab runs on it)"
done
exit 0
