#!/usr/bin/env bash
# The lab: Debian 12's own kernel booted under QEMU (TCG) with emulated
# SATA, NVMe and SAS drives behind the real ahci, nvme, sd, megaraid_sas and
# mptsas drivers, and arrayburn on PATH inside with the real smartctl,
# nvme-cli, sg3_utils, hdparm, mdadm and dmsetup,
# udevd making the /dev/disk/by-id links.
#
#   scripts/lab.sh [--drives SPEC] [--out DIR] [--binary PATH] [--keep] -- COMMAND ...
#
# Runs COMMAND (a shell line) in the guest, prints what it printed and
# exits with its exit status. A guest that does not boot, or does not end
# within LAB_TIMEOUT seconds (300), is one line on stderr and exit 2.
# Files the command writes under /out in the guest are in DIR afterwards
# (a 9p share; without --out, a folder that is removed). --binary: the
# arrayburn to put on PATH (default: this checkout's release build, built
# first). Installs what it needs from Debian's packages when missing (as
# root); the guest's initramfs is built under target/lab/ in layers: the
# kernel's modules and the tools (again when the kernel or this script
# changes), arrayburn (again when the binary changes), the command.
# Several labs may run at once (each its own drives and folder): one
# builds the shared layers while the others wait for it.
#
# --drives SPEC: the drives, items separated by commas, each
#   KIND[=COUNT][:size=SIZE][:model=M][:serial=S][:rpm=N][:read-bps=N]
# (read-bps: QEMU's throttle of its reads; an nvme drive also takes
# :block=512|4096, :ms=BYTES of metadata, :pi=TYPE of protection and
# :ns=N namespaces, each SIZE), or scsi_debug:K=V:... or null_blk:K=V:...,
# the module loaded with those parameters once the drives are named
# (scsi_debug:sector_size=4096:medium_error_start=6000:opts=2, null_blk:nr_devices=2:gb=1).
# KIND: sata (ahci), nvme, zns (a zoned NVMe namespace), megaraid (SAS
# behind a MegaRAID, megasas-gen2),
# hba (SAS behind an LSI SAS1068 HBA, mptsas; each drive with a SAS
# address of its own, and named after the other kinds'), or none. SIZE in MiB (256,
# or with M/G). Each drive is a filled file in /dev/shm, removed at the end
# unless --keep; serials are distinct unless given. The default: two SATA
# disks of one model (5400 rpm), one SATA disk of another, two NVMe drives,
# two SAS drives behind the MegaRAID, two behind the HBA. Speeds in the guest are the
# emulator's: no timed verdict is tested here.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/lab.sh [--drives SPEC] [--out DIR] [--binary PATH] [--keep] -- COMMAND ..."
keep= out_dir= bin=
spec_all="sata=2:model=LAB HDD 5400:rpm=5400,sata:model=LAB OTHER HDD:rpm=7200,nvme=2,megaraid=2,hba=2"
while [ $# -gt 0 ]; do
    case "$1" in
        --keep) keep=1; shift ;;
        --drives) spec_all=${2:?--drives needs a SPEC: $usage}; shift 2 ;;
        --out) out_dir=${2:?--out needs a folder: $usage}; shift 2 ;;
        --binary) bin=${2:?--binary needs a path: $usage}; shift 2 ;;
        --) shift; break ;;
        *) echo "scripts/lab.sh: unknown option $1: $usage" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "scripts/lab.sh: no command: $usage" >&2; exit 2; }
if [ -n "$bin" ] && [ ! -x "$bin" ]; then
    echo "scripts/lab.sh: --binary $bin is not an executable file: give arrayburn's path" >&2
    exit 2
fi

need=()
source scripts/lab-needs.sh
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "scripts/lab.sh: needs ${need[*]} (Debian packages): run as root to install them" >&2
        exit 2
    fi
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${need[@]}") >/dev/null 2>&1 ||
        { echo "scripts/lab.sh: could not install ${need[*]}" >&2; exit 2; }
fi

kernel=$(ls /boot/vmlinuz-* | sort -V | tail -n 1)
kver=${kernel#/boot/vmlinuz-}
if [ -z "$bin" ]; then
    cargo build --release --quiet
    bin=target/release/arrayburn
fi
lab=target/lab
mkdir -p "$lab"
# Two labs may start at once (tests/lab.rs boots two guests): the first
# builds the layers and the initramfs, the other waits and uses them.
exec 9>"$lab/layers.lock"
flock 9

# Layer 1: busybox, the kernel's modules, the tools and udev.
stamp="$kver $(sha1sum <"$0" | cut -c1-12)"
base="$lab/base.cpio.gz"
if [ ! -f "$base" ] || [ "$(cat "$lab/base.stamp" 2>/dev/null)" != "$stamp" ]; then
    root="$lab/root"
    rm -rf "$root"
    mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,proc,sys,dev,tmp,out,etc,run}
    cp /bin/busybox "$root/bin/busybox"
    # The kernel's module folders the drives' drivers need (sd_mod and
    # nvme need kernel/block's t10_pi), 9p for /out, and its module index.
    mods="/lib/modules/$kver"
    for d in kernel/block kernel/lib kernel/crypto kernel/drivers/ata kernel/drivers/nvme \
        kernel/drivers/scsi kernel/drivers/block kernel/drivers/md kernel/drivers/message \
        kernel/drivers/base kernel/drivers/virtio kernel/fs/configfs kernel/fs/9p \
        kernel/fs/netfs kernel/fs/fscache kernel/net/9p; do
        [ -d "$mods/$d" ] && mkdir -p "$root/$mods/$d" && cp -a "$mods/$d/." "$root/$mods/$d/"
    done
    cp "$mods"/modules.* "$root/$mods/"
    # The tools arrayburn asks, and udev, with the libraries they load.
    for t in smartctl nvme lsscsi sg_readcap sg_start sg_inq hdparm mdadm dmsetup udevadm blkid; do
        p=$(command -v "$t") || continue
        cp "$p" "$root/usr/bin/"
        for l in $(ldd "$p" | grep -o '/[^ ]*'); do
            mkdir -p "$root$(dirname "$l")"
            cp -L "$l" "$root$l"
        done
    done
    mkdir -p "$root/lib/systemd" "$root/lib/udev/rules.d" "$root/etc/udev"
    ln -s /usr/bin/udevadm "$root/lib/systemd/systemd-udevd"
    cp /lib/udev/ata_id /lib/udev/scsi_id "$root/lib/udev/" 2>/dev/null || true
    for r in 50-udev-default 60-block 60-persistent-storage 55-dm 60-persistent-storage-dm \
        95-dm-notify 63-md-raid-arrays 64-md-raid-assembly; do
        [ -f "/lib/udev/rules.d/$r.rules" ] && cp "/lib/udev/rules.d/$r.rules" "$root/lib/udev/rules.d/"
    done
    echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
    printf 'root:x:0:\ndisk:x:6:\n' >"$root/etc/group"
    cat >"$root/init" <<'INIT'
#!/bin/busybox sh
echo LAB-INIT
/bin/busybox --install -s /bin
export PATH=/usr/bin:/usr/sbin:/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
# The kernel's own module requests (md's personalities, dm's targets) go
# to busybox's modprobe.
echo /bin/modprobe >/proc/sys/kernel/modprobe
# The kernel's own lines go to dmesg, not into what the command prints.
dmesg -n 1
for m in ahci nvme sd_mod sg megaraid_sas virtio_pci 9pnet_virtio 9p; do modprobe "$m" 2>/dev/null; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out 2>/dev/null ||
    echo "lab: /out is not shared (no 9p): what is written there stays in the guest"
# The drives appear as their controllers find them: wait (60 s at most)
# until as many as the lab gave are there. The HBA's come last, its
# driver loaded once the others are named, so that names do not depend
# on which controller's scan ends first.
arg() { sed -n "s/.*lab.$1=\([0-9]*\).*/\1/p" /proc/cmdline; }
want=$(arg drives) hba=$(arg hba) modded=$(arg modded)
i=0
wait_for() {
    while [ "$(ls /sys/block | grep -c -E '^(sd|nvme|nullb)')" -lt "$1" ] && [ $i -lt 600 ]; do
        sleep 0.1; i=$((i + 1))
    done
}
wait_for $((${want:-0} - ${hba:-0} - ${modded:-0}))
modprobe mptsas 2>/dev/null
wait_for $((${want:-0} - ${modded:-0}))
# Then the disks of kernel modules asked for (--drives scsi_debug:...,
# null_blk:...), with their parameters.
while read -r m params; do
    [ -z "$m" ] || modprobe "$m" $params || echo "lab: modprobe $m $params failed"
done </lab-modules
wait_for "${want:-0}"
/lib/systemd/systemd-udevd --daemon --resolve-names=never 2>/dev/null
udevadm trigger --action=add --subsystem-match=block 2>/dev/null
udevadm settle --timeout=30 2>/dev/null
cd /tmp
echo; echo LAB-BEGIN
sh /cmd
code=$?
sync
echo; echo "LAB-EXIT $code"
poweroff -f
INIT
    chmod 755 "$root/init"
    (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$base"
    rm -rf "$root"
    echo "$stamp" >"$lab/base.stamp"
fi

# Layer 2: arrayburn, its debug information left out.
bstamp="$(realpath "$bin") $(stat -c '%Y %s' "$bin")"
layer="$lab/arrayburn.cpio"
if [ ! -f "$layer" ] || [ "$(cat "$lab/arrayburn.stamp" 2>/dev/null)" != "$bstamp" ]; then
    broot="$lab/broot"
    rm -rf "$broot"
    mkdir -p "$broot/usr/bin"
    strip -o "$broot/usr/bin/arrayburn" "$bin"
    (cd "$broot" && find . | cpio -o -H newc --quiet) >"$layer"
    rm -rf "$broot"
    echo "$bstamp" >"$lab/arrayburn.stamp"
fi

work=$(mktemp -d)
files=()
qemu_pid=
# QEMU itself ended (not only the timeout around it: a QEMU left would
# hold its drives' files).
stop_qemu() {
    [ -n "$qemu_pid" ] || return 0
    [ ! -s "$work/qemu.pid" ] || kill -9 "$(cat "$work/qemu.pid")" 2>/dev/null || true
    kill -9 "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
    qemu_pid=
}
cleanup() {
    stop_qemu
    rm -rf "$work"
    [ -n "$keep" ] || [ ${#files[@]} -eq 0 ] || rm -f "${files[@]}"
}
trap cleanup EXIT
# The layers built so far, this run's own copy: the lock let go.
cp "$base" "$work/initrd"
truncate --size=%512 "$work/initrd"
cat "$layer" >>"$work/initrd"
exec 9>&-
# Drive NAME SIZE_MIB: a filled file in /dev/shm (kept in `files`, for the
# clean-up: not made in a subshell), given to QEMU as `-drive` `$spec`.
drive() {
    # A name no one can have planted a link at: /dev/shm is everyone's.
    local f
    f=$(mktemp "/dev/shm/arrayburn-lab-$1-XXXXXXXX.img")
    files+=("$f")
    # 16 MiB of random bytes over and over, the drive's own: random to
    # whatever reads it, at a copy's speed (the random generator's 300
    # MB/s took 9 s over the 2.7 GB of the tests' drives).
    head -c 16M /dev/urandom >"$work/seed"
    for _ in $(seq $((($2 + 15) / 16))); do cat "$work/seed"; done >"$f"
    truncate --size=$(($2 << 20)) "$f"
    spec="file=$f,format=raw,if=none,id=$1,cache=none"
}
bad_spec() {
    echo "scripts/lab.sh: --drives: $1: each item is KIND[=COUNT][:size=MiB][:model=M][:serial=S][:rpm=N][:read-bps=N] (nvme also [:block=512|4096][:ms=BYTES][:pi=N][:ns=N]), KIND sata, nvme, zns, megaraid, hba or none; or scsi_debug:K=V:... or null_blk:K=V:... (the module's parameters)" >&2
    exit 2
}
args=(-smp 1 -m 1024 -nographic -no-reboot -net none -kernel "$kernel")
n=0 sata=0 nvme=0 mr=0 hba=0
# Kernel modules the guest loads with their parameters after the
# controllers' drives are named (scsi_debug, null_blk): "NAME K=V ...".
modules=() modded=0
# How many disks module parameters P (K=V words) make: the product of
# those of NAMES given (each 1 unless given).
disks_of() {
    local names=$1 total=1 kv
    shift
    for kv in "$@"; do
        [[ " $names " == *" ${kv%%=*} "* ]] && total=$((total * ${kv#*=}))
    done
    echo "$total"
}
IFS=, read -r -a items <<<"$spec_all"
for item in "${items[@]}"; do
    IFS=: read -r -a f <<<"$item"
    kind=${f[0]%%=*} count=1
    [[ ${f[0]} == *=* ]] && count=${f[0]#*=}
    [[ $count =~ ^[0-9]+$ ]] || bad_spec "$item: COUNT $count is not a number"
    case "$kind" in
        scsi_debug | null_blk)
            # The module's own parameters, as modinfo names them.
            [ "$count" = 1 ] || bad_spec "$item: no COUNT for $kind (its parameters give it: add_host, num_tgts, nr_devices)"
            for kv in "${f[@]:1}"; do
                [[ $kv =~ ^[a-z_0-9]+=[A-Za-z0-9_.-]+$ ]] || bad_spec "$item: $kv is no module parameter K=V"
            done
            modules+=("$kind ${f[*]:1}")
            if [ "$kind" = scsi_debug ]; then
                m=$(disks_of "add_host num_tgts max_luns" "${f[@]:1}")
            else
                m=$(disks_of nr_devices "${f[@]:1}")
            fi
            n=$((n + m)) modded=$((modded + m))
            continue ;;
    esac
    size=256 model= serial= rpm= bps= block= ms= pi= ns=1
    for kv in "${f[@]:1}"; do
        case "$kv" in
            size=*[Gg]) size=$((${kv:5:-1} << 10)) ;;
            size=*[Mm]) size=${kv:5:-1} ;;
            size=*) size=${kv#size=} ;;
            model=*) model=${kv#model=} ;;
            serial=*) serial=${kv#serial=} ;;
            rpm=*) rpm=${kv#rpm=} ;;
            read-bps=*) bps=${kv#read-bps=} ;;
            block=512 | block=4096) block=${kv#block=} ;;
            ms=*) ms=${kv#ms=} ;;
            pi=[0-3]) pi=${kv#pi=} ;;
            ns=*) ns=${kv#ns=} ;;
            *) bad_spec "$item: $kv" ;;
        esac
    done
    [[ $size =~ ^[0-9]+$ ]] || bad_spec "$item: size $size"
    [[ $ns =~ ^[1-9]$ ]] || bad_spec "$item: ns=$ns (1 to 9 namespaces)"
    [[ -z $ms || $ms =~ ^(0|8|16|64)$ ]] || bad_spec "$item: ms=$ms (metadata bytes: 0, 8, 16 or 64)"
    [[ -z $pi || $pi = 0 || ${ms:-0} -ge 8 ]] || bad_spec "$item: pi=$pi needs ms=8 or more"
    [[ $kind = nvme || -z $block$ms$pi || $ns != 1 ]] || bad_spec "$item: block, ms, pi and ns are an nvme drive's"
    [ "$kind" = none ] && continue
    for ((c = 0; c < count; c++)); do
        id="d$n"
        drive "$id" "$size"
        [ -z "$bps" ] || spec+=",throttling.bps-read=$bps"
        args+=(-drive "$spec")
        case "$kind" in
            sata)
                [ $sata = 0 ] && args+=(-device ahci,id=ahci)
                [ $sata -lt 6 ] || bad_spec "$item: at most 6 SATA drives (one AHCI controller)"
                args+=(-device "ide-hd,drive=$id,bus=ahci.$sata,serial=${serial:-LABSATA0$sata}$([ -z "$serial" ] || echo "$c"),model=${model:-LAB HDD},rotation_rate=${rpm:-7200}")
                sata=$((sata + 1)) ;;
            nvme)
                nserial=${serial:-LABNVME0$nvme}$([ -z "$serial" ] || echo "$c")
                if [ -z "$block$ms$pi" ] && [ "$ns" = 1 ]; then
                    args+=(-device "nvme,serial=$nserial,drive=$id")
                else
                    # Namespaces of their own: the LBA format (block,
                    # metadata, protection) each is made with, and more
                    # than one, each SIZE.
                    args+=(-device "nvme,id=nv$nvme,serial=$nserial")
                    fmt=${block:+,logical_block_size=$block,physical_block_size=$block}${ms:+,ms=$ms}${pi:+,pi=$pi}
                    args+=(-device "nvme-ns,drive=$id,bus=nv$nvme,nsid=1$fmt")
                    for ((j = 2; j <= ns; j++)); do
                        n=$((n + 1))
                        drive "d$n" "$size"
                        args+=(-drive "$spec" -device "nvme-ns,drive=d$n,bus=nv$nvme,nsid=$j$fmt")
                    done
                fi
                nvme=$((nvme + 1)) ;;
            zns)
                # A zoned namespace (NVMe ZNS) of 4 MiB zones on a
                # controller of its own.
                args+=(-device "nvme,id=zns$nvme,serial=${serial:-LABZNS0$nvme}$([ -z "$serial" ] || echo "$c")")
                args+=(-device "nvme-ns,drive=$id,bus=zns$nvme,nsid=1,zoned=true,zoned.zone_size=4M")
                nvme=$((nvme + 1)) ;;
            megaraid)
                [ $mr = 0 ] && args+=(-device megasas-gen2,id=mr0)
                args+=(-device "scsi-hd,drive=$id,bus=mr0.0,scsi-id=$mr,vendor=SEAGATE,product=${model:-LAB SAS MR},serial=${serial:-LABMR0$mr}$([ -z "$serial" ] || echo "$c")")
                mr=$((mr + 1)) ;;
            hba)
                [ $hba -lt 8 ] || bad_spec "$item: an LSI SAS1068 has 8 ports: at most 8 hba drives"
                [ $hba = 0 ] && args+=(-device mptsas1068,id=hba0)
                # A SAS drive needs its own SAS address (its WWN): mptsas
                # leaves a phy whose attached address is 0 without a port.
                args+=(-device "scsi-hd,drive=$id,bus=hba0.0,scsi-id=$hba,wwn=$(printf '0x5000c5000%07x' $((hba + 1))),vendor=SEAGATE,product=${model:-LAB SAS HBA},serial=${serial:-LABHBA0$hba}$([ -z "$serial" ] || echo "$c")")
                hba=$((hba + 1)) ;;
            *) bad_spec "$item: no kind $kind" ;;
        esac
        n=$((n + 1))
    done
done
# Layer 3: the command. The kernel unpacks archives one after another,
# skipping the zeros between them: each padded to a 512-byte boundary.
mkdir -p "$work/cmd"
printf '%s\n' "$*" >"$work/cmd/cmd"
printf '%s\n' "${modules[@]}" >"$work/cmd/lab-modules"
(cd "$work/cmd" && printf 'cmd\nlab-modules\n' | cpio -o -H newc --quiet) >"$work/cmd.cpio"
truncate --size=%512 "$work/initrd"
cat "$work/cmd.cpio" >>"$work/initrd"

out_tmp=
if [ -z "$out_dir" ]; then
    out_dir="$work/out"
    out_tmp=1
fi
mkdir -p "$out_dir"
args+=(-virtfs "local,path=$out_dir,mount_tag=out,security_model=none,id=out")
# NVMe commands wait up to 255 s (the kernel's default is 30): under TCG
# on a loaded host the emulator can take longer than 30 s over a command,
# and the kernel would time it out and reset a drive that did nothing (a
# scenario's own timeouts set theirs: the scsi_debug disk's 2 s).
args+=(-initrd "$work/initrd" -append "console=ttyS0 quiet panic=-1 nvme_core.io_timeout=255 lab.drives=$n lab.hba=$hba lab.modded=$modded")

console="$work/console"
# QEMU under a bound, its console in a file; KVM where it answers within
# a few seconds (where it does not, as under nested virtualisation here, the
# answer is kept in target/lab/kvm and TCG used from then on).
run_qemu() {
    : >"$console"
    rm -f "$work/qemu.pid"
    # At the caller's priority: a guest starved of its CPU times out its
    # own drives' commands (the emulator answers them, late), and those
    # would be the kernel's findings about drives that did nothing.
    timeout --kill-after=10 "$2" qemu-system-x86_64 -accel "$1" -pidfile "$work/qemu.pid" \
        "${args[@]}" </dev/null >"$console" 2>&1 &
    qemu_pid=$!
}
status=0
accel=tcg
if [ -c /dev/kvm ] && [ "$(cat "$lab/kvm" 2>/dev/null)" != no ]; then
    run_qemu kvm "${LAB_TIMEOUT:-300}"
    for _ in $(seq 50); do
        grep -q LAB-INIT "$console" 2>/dev/null && break
        kill -0 "$qemu_pid" 2>/dev/null || break
        sleep 0.1
    done
    if grep -q LAB-INIT "$console" 2>/dev/null; then
        accel=kvm
        echo yes >"$lab/kvm"
    else
        stop_qemu
        echo no >"$lab/kvm"
    fi
fi
if [ "$accel" = tcg ]; then
    run_qemu tcg "${LAB_TIMEOUT:-300}"
fi
wait "$qemu_pid" || status=$?
qemu_pid=
# What the command printed, between the markers, without the console's
# carriage returns and escapes.
text=$(tr -d '\r' <"$console" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g')
if ! grep -q 'LAB-BEGIN$' <<<"$text"; then
    echo "scripts/lab.sh: the guest did not boot (qemu status $status): $(tail -n 3 <<<"$text" | tr '\n' ' ')" >&2
    exit 2
fi
code=$(sed -n 's/^.*LAB-EXIT \([0-9][0-9]*\)$/\1/p' <<<"$text" | tail -n 1)
# (All it printed, also when it did not end: where it stopped shows.)
awk '/LAB-EXIT [0-9]+$/ { on = 0 } on { print } /LAB-BEGIN$/ { on = 1 }' <<<"$text" | sed -e '1{/^$/d}' -e '${/^$/d}'
if [ -z "$code" ]; then
    echo "scripts/lab.sh: the guest's command did not end within ${LAB_TIMEOUT:-300} s" >&2
    exit 2
fi
exit "$code"
