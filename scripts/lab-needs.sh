# What the lab (scripts/lab.sh) needs from Debian's packages, said once:
# sourced by scripts/lab.sh and scripts/test.sh, it adds each package
# missing here to the array `need`.
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
compgen -G '/boot/vmlinuz-*' >/dev/null || need+=(linux-image-amd64)
[ -x /bin/busybox ] || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
command -v smartctl >/dev/null || need+=(smartmontools)
command -v nvme >/dev/null || need+=(nvme-cli)
command -v sg_readcap >/dev/null || need+=(sg3-utils)
command -v lsscsi >/dev/null || need+=(lsscsi)
command -v hdparm >/dev/null || need+=(hdparm)
command -v dmsetup >/dev/null || need+=(dmsetup)
[ -x /lib/systemd/systemd-udevd ] || need+=(udev)
command -v mdadm >/dev/null || need+=(mdadm)
