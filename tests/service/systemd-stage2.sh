#!/bin/bash
# Stage 2 for tests/verbs/rxe-guest.sh --stage2: boots systemd as PID 1 on
# the guest's overlay root, with a target that runs /zipper-io/cmd.sh as a
# oneshot service and powers the guest off with the command's status in
# /zipper-io/rc (the harness's contract). Only what that target pulls in
# starts, not the host's enabled services.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
io=/zipper-io
: >$io/started
mkdir -p /etc/systemd/system
cat >/etc/systemd/system/zipper-guest-test.service <<UNIT
[Unit]
Description=zipper guest test command
Requires=basic.target
After=basic.target systemd-journald.service

[Service]
Type=oneshot
Environment=HOME=/root PATH=$PATH
ExecStart=/bin/bash $io/cmd.sh
StandardOutput=append:$io/stdout
StandardError=append:$io/stderr
ExecStopPost=/bin/sh -c 'echo \$EXIT_STATUS >$io/rc; sync; echo o >/proc/sysrq-trigger'
UNIT
cat >/etc/systemd/system/zipper-guest.target <<UNIT
[Unit]
Description=zipper guest test
Requires=basic.target zipper-guest-test.service
After=basic.target
AllowIsolate=yes
UNIT
# Keep the overlay's /tmp (the host's /tmp): a checkout or build under /tmp
# (CI clones there) must stay visible, so systemd must not mount a fresh
# tmpfs over it, nor empty it at boot (tmpfiles.d/tmp.conf: "D /tmp").
ln -sf /dev/null /etc/systemd/system/tmp.mount
mkdir -p /etc/tmpfiles.d
ln -sf /dev/null /etc/tmpfiles.d/tmp.conf
# No login prompts or host services: only the target above.
echo "zipper-guest" >/etc/hostname
exec /lib/systemd/systemd --unit=zipper-guest.target
