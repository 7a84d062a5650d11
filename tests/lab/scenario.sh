# The lab's scenario (tests/lab.rs): run in the guest by scripts/lab.sh
# with its default drives (sda sdb: SATA, one model; sdc: SATA, another;
# nvme0n1 nvme1n1; sdd sde: SAS behind a MegaRAID; sdf sdg: SAS behind
# an LSI HBA), a zoned NVMe namespace (nvme2n1) and an NVMe controller
# of two namespaces. Each step writes
# /out/NAME.json (where the command has one), NAME.txt (its stdout and
# stderr), NAME.code (its exit status) and NAME.secs (how long it took,
# for docs/benchmarks.md); the test reads them back. Burn-ins write a
# range of each drive, without the SMR probe: its timing would be the
# emulator's.
now() { cut -d' ' -f1 /proc/uptime; }
step() {
    name=$1
    shift
    t=$(now)
    "$@" >"/out/$name.txt" 2>&1
    echo $? >"/out/$name.code"
    echo "$t $(now)" | awk '{ printf "%.1f\n", $2 - $1 }' >"/out/$name.secs"
}
# The kernel's own lines about a disk, from here on, for each step that
# reads one.
kernel_lines() { dmesg -c >"/out/$1.dmesg"; }
# A burn-in of a range of a drive.
burn="arrayburn burnin --destructive --yes --range 0..32m --smr-probe 0"
# The kernel's lines before the part's first step (a file a part).
dmesg -c >"/out/boot-${LAB_PART:-all}.dmesg"

# scsi_debug loaded with parameters "$@" as $dev (its name in /out/$1.dev).
sdebug_load() {
    name=$1
    shift
    modprobe scsi_debug "$@" || echo "modprobe scsi_debug $*: failed" >"/out/$name.txt"
    udevadm settle --timeout=10
    dev=/dev/$(ls /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/ | head -n 1)
    echo "$dev" >"/out/$name.dev"
}
# scsi_debug unloaded, once udev's look at its disk has let it go.
sdebug_unload() {
    udevadm settle --timeout=10
    for _ in $(seq 50); do
        rmmod scsi_debug 2>/dev/null && return
        sleep 0.2
    done
    echo "scsi_debug stayed loaded (its disk still open)" >&2
}
sdebug() {
    # $1: a name; the rest: scsi_debug's parameters.
    sdebug_load "$@"
    step "$1" arrayburn check --full --mode parallel --json "/out/$1.json" "$dev"
    kernel_lines "$1"
    # Written whole, then read back: the same blocks fail, exact.
    step "$1-burnin" $burn --json "/out/$1-burnin.json" "$dev"
    sdebug_unload
}

part_drives() {
    # Every kind: what the kernel and the drives say of themselves.
    step list arrayburn list --json /out/list.json
    step list-table arrayburn list
    ls -l /dev/disk/by-id >/out/by-id.txt
    # A controller of two namespaces (serial LABNS0): the kernel's names of
    # its namespaces, first then second, by their own links.
    for j in 1 2; do readlink -f /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABNS0_$j; done >/out/namespaces.txt
    step inspect arrayburn inspect --json /out/inspect.json /dev/sda /dev/sdb /dev/sdc /dev/nvme0n1 \
        /dev/nvme1n1 /dev/sdd /dev/sde /dev/sdf /dev/sdg

    # Self-tests before and after a burn-in: QEMU's ATA drive runs them; its
    # NVMe drive says whether it has them.
    step burnin-sata $burn --smart-test short --smart-test-after short --json /out/burnin-sata.json \
        /dev/sda /dev/sdb
    # NVMe: left trimmed after (--discard: write zeroes with deallocate,
    # read back), its endurance read before and after.
    step burnin-nvme $burn --smart-test short --discard --json /out/burnin-nvme.json /dev/nvme0n1 \
        /dev/nvme1n1
    # The MegaRAID's drives answer smartctl with their identity only; the
    # HBA's, that they have no SMART.
    step burnin-sas $burn --smart-test short --json /out/burnin-sas.json /dev/sdd /dev/sde /dev/sdf \
        /dev/sdg
    kernel_lines burnin

    # The two namespaces of one controller share its serial: inspected
    # together, not "one serial on two drives"; burned one at a time, each
    # its own checkpoint.
    ns1=$(sed -n 1p /out/namespaces.txt) ns2=$(sed -n 2p /out/namespaces.txt)
    step ns-inspect arrayburn inspect --json /out/ns-inspect.json "$ns1" "$ns2"
    step ns-burnin-1 $burn --json /out/ns-burnin-1.json "$ns1"
    step ns-burnin-2 $burn --json /out/ns-burnin-2.json "$ns2"
    ls /var/lib/arrayburn/burnin >/out/ns-state.txt

    # NVMe formats: 8 bytes of metadata, then with protection information:
    # named, and refused in one line with the command that makes them plain;
    # 4096-byte blocks burned through.
    reformat() {
        nvme format /dev/nvme1n1 --force "$@" >/dev/null
        sleep 1
        udevadm settle --timeout=10
    }
    reformat --lbaf=1
    step nvme-meta-list arrayburn list --json /out/nvme-meta-list.json
    step nvme-meta-burnin $burn /dev/nvme1n1
    step nvme-meta-check arrayburn check -s 2s /dev/nvme1n1
    reformat --lbaf=5 --pi=1
    step nvme-pi-burnin $burn /dev/nvme1n1
    reformat --lbaf=4
    step nvme-4k-burnin $burn --json /out/nvme-4k-burnin.json /dev/nvme1n1

    # md RAID1 of the two SATA drives of one model: the volume said to be one,
    # over its members; a member refused a burn-in while it runs.
    mdadm --create /dev/md0 --level=1 --raid-devices=2 --run --assume-clean --metadata=1.2 \
        /dev/sda /dev/sdb >/out/md-create.txt 2>&1
    udevadm settle --timeout=10
    step md-list arrayburn list --json /out/md-list.json
    step md-inspect arrayburn inspect --json /out/md-inspect.json /dev/md0
    step md-burnin-member $burn /dev/sda
    step md-check arrayburn check -s 2s --mode serial --json /out/md-check.json /dev/md0
    # In service: the members' pool from the kernel's holders, their failed
    # commands from the SCSI layer's count.
    step md-watch arrayburn watch --once --interval 2s --progress lines -j /out/md-watch.jsonl \
        /dev/sda /dev/sdb /dev/sdc
    mdadm --stop /dev/md0 >/dev/null 2>&1
    # (md's lines kept apart: the next disk's file holds only its own.)
    kernel_lines md

    # A 4Kn disk with medium errors (the 512-byte one is the other part's).
    sdebug medium-4k dev_size_mb=64 sector_size=4096 medium_error_start=6000 medium_error_count=3 opts=2
}

part_faults() {
    # Medium errors at known blocks (scsi_debug), 512-byte here, 4Kn in
    # the other part: read whole, then burned, every bad range exact to
    # the block. (In one guest the two waited 6 s between them for the
    # kernel's rate limit of 10 lines of a kind in 5 s.)
    sdebug medium-512 dev_size_mb=64 sector_size=512 medium_error_start=50000 medium_error_count=8 opts=2

    # Commands that time out (scsi_debug, every 100th command ignored until
    # the kernel's timer, set to 2 s, runs out): the kernel's timeouts named
    # on that disk by a check and a burn-in, none on the SATA peer the check
    # reads first. (Nothing of another drive runs while the error handler
    # does: under TCG the emulator has lost other drives' completions then, a
    # SATA read's timed out after 30 s and an NVMe read's waited for the
    # kernel's 255 s, holding every later step that opened the drive.)
    # (The faults begin once udev has looked at the disk: its probe would
    # wait out 30 s timers and hold the disk.)
    sdebug_load timeout dev_size_mb=32 every_nth=0
    echo 2 >"/sys/block/${dev#/dev/}/device/timeout"
    echo 100 >/sys/bus/pseudo/drivers/scsi_debug/every_nth
    echo 4 >/sys/bus/pseudo/drivers/scsi_debug/opts
    step timeout-check arrayburn check -s 3s --mode serial --json /out/timeout-check.json /dev/sdc "$dev"
    # (Fewer for the burn-in: each write that times out holds the queue for
    # the error handler.)
    echo 120 >/sys/bus/pseudo/drivers/scsi_debug/every_nth
    step timeout-burnin $burn --json /out/timeout-burnin.json "$dev"
    kernel_lines timeout
    echo 0 >/sys/bus/pseudo/drivers/scsi_debug/opts
    sdebug_unload

    # Zoned drives the kernel knows (scsi_debug, one conventional zone then
    # 4 MiB sequential ones): said so; a host-managed drive read whole and
    # refused a burn-in in one line (its zone rules would fail the writes);
    # a host-aware one, which takes writes anywhere, burned.
    sdebug_load zoned-hm dev_size_mb=64 zbc=host-managed zone_size_mb=4 zone_nr_conv=1
    step zoned-hm-inspect arrayburn inspect --json /out/zoned-hm-inspect.json "$dev"
    step zoned-hm-check arrayburn check --full --mode parallel --json /out/zoned-hm-check.json "$dev"
    step zoned-hm-burnin $burn "$dev"
    sdebug_unload
    # A zoned NVMe namespace (ZNS): named as one, not as SMR; refused a burn-in.
    step zns-inspect arrayburn inspect --json /out/zns-inspect.json /dev/nvme2n1
    step zns-burnin $burn /dev/nvme2n1
    sdebug_load zoned-ha dev_size_mb=64 zbc=host-aware zone_size_mb=4 zone_nr_conv=1
    step zoned-ha-burnin $burn --json /out/zoned-ha-burnin.json "$dev"
    sdebug_unload

    # Device-mapper: a disk 100 ms late on every request (dm-delay) beside two
    # that are not; then 8 MiB at 64 MiB that never read (dm-flakey, never
    # up) inside a disk that does. (No udev sync: the guest's udev has not
    # dm's rules that answer it.)
    s=$(blockdev --getsz /dev/sdc)
    echo "0 $s linear /dev/sdc 0" | dmsetup create --noudevsync lab-a
    echo "0 $s linear /dev/sdd 0" | dmsetup create --noudevsync lab-b
    echo "0 $s delay /dev/sde 0 100" | dmsetup create --noudevsync lab-slow
    udevadm settle --timeout=10
    step dm-delay arrayburn check -s 2s --mode serial --json /out/dm-delay.json \
        /dev/mapper/lab-a /dev/mapper/lab-b /dev/mapper/lab-slow
    # The same three in service, each read twice a second (64 KiB, then half
    # a second's rest): the late one named fail-slow from the kernel's
    # counters alone (the watch reads none of the disks), the others not.
    # The readers end with the watch's window (at most one read and rest
    # later), not after their 40 reads: 16 s of the lab's waiting.
    rm -f /tmp/dm-readers-stop
    for d in lab-a lab-b lab-slow; do
        (i=0; while [ $i -lt 40 ] && [ ! -e /tmp/dm-readers-stop ]; do
            dd if=/dev/mapper/$d of=/dev/null bs=64k count=1 skip=$((i * 16)) iflag=direct 2>/dev/null
            sleep 0.5; i=$((i + 1))
        done) &
    done
    sleep 1
    step dm-watch arrayburn watch --once --interval 6s --progress lines -j /out/dm-watch.jsonl \
        /dev/mapper/lab-a /dev/mapper/lab-b /dev/mapper/lab-slow
    touch /tmp/dm-readers-stop
    wait
    for d in lab-a lab-b lab-slow; do dmsetup remove --noudevsync $d; done
    a=131072
    b=16384
    printf "0 $a linear /dev/sdc 0\n$a $b flakey /dev/sdc $a 0 3600\n$((a + b)) $((s - a - b)) linear /dev/sdc $((a + b))\n" |
        dmsetup create --noudevsync lab-flaky
    udevadm settle --timeout=10
    step dm-flakey arrayburn check --full --mode parallel --random-time 1s --json /out/dm-flakey.json /dev/mapper/lab-flaky
    dmsetup remove --noudevsync lab-flaky
}

t0=$(now)
case ${LAB_PART:-all} in
    drives) part_drives ;;
    faults) part_faults ;;
    *) part_drives; part_faults ;;
esac
# How long the part took in the guest (for docs/benchmarks.md).
echo "$t0 $(now)" | awk '{ printf "%.1f\n", $2 - $1 }' >"/out/part-${LAB_PART:-all}.secs"

# Each step's status is in its own file: the scenario itself succeeded.
exit 0
