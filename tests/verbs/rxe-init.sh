#!/bin/sh
# Stage 1 (initramfs /init, static busybox): mounts the host's / read-only over
# virtio 9p with a tmpfs overlay on top, mounts the per-run share, and hands
# over to stage 2 (rxe-stage2.sh, bash from the host). Any failure powers off;
# the host then reports "guest ended without an exit status".
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "rxe-init: loading 9p/overlay modules"
for m in $(cat /modlist); do insmod /lib/modules/$m || echo "init: insmod $m failed"; done
mkdir -p /mnt/lower /mnt/rw
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /mnt/lower ||
    { echo "init: cannot mount hostroot"; poweroff -f; }
mount -t tmpfs -o size=1g tmpfs /mnt/rw
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay overlay -o lowerdir=/mnt/lower,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work /newroot ||
    { echo "init: cannot mount the overlay"; poweroff -f; }
mkdir -p /newroot/zipper-io
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 zipperio /newroot/zipper-io ||
    { echo "init: cannot mount zipperio"; poweroff -f; }
echo "rxe-init: switching to stage 2"
umount /proc /sys /dev 2>/dev/null
exec switch_root /newroot /bin/bash /zipper-io/stage2.sh
