#!/bin/bash
# Stage 2 (host bash on the overlay root): loads soft-RoCE, builds the two
# subnets with one rxe device per interface, runs /zipper-io/cmd.sh and leaves
# stdout, stderr and the exit status in /zipper-io for the host. Powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
io=/zipper-io
finish() { echo "$1" >$io/rc; sync; echo o >/proc/sysrq-trigger; sleep 10; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs tmpfs /dev/shm
# /tmp stays the overlay's (the host's /tmp, writes kept in the guest's
# tmpfs upper layer): a checkout or build under /tmp (CI clones there) must
# be visible to the command.
mount -t tmpfs tmpfs /run
exec 2>>$io/stderr >>$io/stdout
: >$io/started
kmods=$(sed -n 's/^export KMODS=//p' $io/cmd.sh)
kver=$(sed -n 's/^export KVER=//p' $io/cmd.sh)
t0=$(sed -n 's/^export ZIPPER_RXE_T0=//p' $io/cmd.sh)
bb=/bin/busybox
# busybox modprobe only looks in /lib/modules/KVER: point it at the cache.
mkdir -p /lib/modules && rm -rf "/lib/modules/$kver" && ln -s "$kmods/$kver" "/lib/modules/$kver"
# The host has no kmod: the kernel's module autoloader (e.g. rxe asking for
# "crypto-crc32") runs busybox instead.
[[ -e /sbin/modprobe ]] || ln -s /bin/busybox /sbin/modprobe
echo /sbin/modprobe >/proc/sys/kernel/modprobe
for m in crc32_generic ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe veth; do
    $bb modprobe "$m" ||
        { echo "rxe-guest: cannot load module $m" >&2; finish 125; }
done
hostname rxe-guest
ip link set lo up
sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.all.rp_filter=0 \
    net.ipv4.conf.default.rp_filter=0 net.ipv4.ip_forward=0
# The local rule moves behind the per-interface rules so that traffic between
# two local addresses leaves through the veth wire instead of lo (rxe drops lo).
ip rule add pref 1000 lookup local && ip rule del pref 0 lookup local
setup_pair() { # dev1 ip1 rxe1 dev2 ip2 rxe2 table1 table2 prio1 prio2 net
    ip link add "$1" type veth peer name "$4"
    for d in "$1" "$4"; do
        ip link set "$d" mtu 9000 up
        sysctl -qw "net.ipv4.conf.$d.accept_local=1" "net.ipv4.conf.$d.rp_filter=0"
    done
    ip addr add "$2/24" dev "$1"
    ip addr add "$5/24" dev "$4"
    ip route add "$5/32" dev "$1" src "$2" table "$7"
    ip route add unreachable default table "$7"
    ip route add "$2/32" dev "$4" src "$5" table "$8"
    ip route add unreachable default table "$8"
    ip rule add pref "$9" oif "$1" lookup "$7"
    ip rule add pref "${10}" oif "$4" lookup "$8"
    rdma link add "$3" type rxe netdev "$1"
    rdma link add "$6" type rxe netdev "$4"
}
setup_pair ethA 10.1.0.1 rxeA zipA 10.1.0.254 rxe_zA 101 102 100 101 ||
    { echo "rxe-guest: cannot build subnet A" >&2; finish 125; }
setup_pair zipB 10.2.0.254 rxe_zB ethB 10.2.0.1 rxeB 103 104 102 103 ||
    { echo "rxe-guest: cannot build subnet B" >&2; finish 125; }
for i in $(seq 1 50); do
    [[ $(cat /sys/class/infiniband/*/ports/1/state 2>/dev/null | grep -c ACTIVE) -ge 4 ]] && break
    sleep 0.1
done
now=$(date +%s.%N)
awk -v a="$t0" -v b="$now" 'BEGIN{printf "%.1f\n", b-a}' >$io/boot_s
export ZIPPER_RXE_GUEST=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bash $io/cmd.sh
finish $?
