#!/usr/bin/env bash
# Runs inside the qemu guest under systemd as PID 1 (systemd-stage2.sh):
# installs the build into the guest's throw-away root, starts zipperd.service
# with `systemctl start` (Type=notify: returns after READY=1), runs the
# mmpi_bytes job through it, checks zipperctl and /metrics against the
# job's bytes, reloads with a changed log level, stops, and checks that the
# unit ended clean. usage: systemd-guest-test.sh BUILD_DIR
set -euo pipefail
build=$1
fail() {
    echo "FAIL: $*"
    systemctl status zipperd --no-pager || true
    journalctl -u zipperd --no-pager | tail -40 || true
    exit 1
}
show() { systemctl show zipperd -p "$1" --value; }
t0=$(date +%s)
echo "guest: systemd $(systemctl --version | head -1 | awk '{print $2}') is PID 1: $(ps -o comm= -p 1)"
cmake --install "$build" --prefix /usr >/dev/null
systemd-sysusers zipper.conf
getent passwd zipper >/dev/null || fail "systemd-sysusers did not create user zipper"
cat >/etc/zipper/zipperd.toml <<TOML
[listen]
A = "127.0.0.1:7470"
B = "127.0.0.1:7471"
[log]
level = "info"
[control]
socket = "/run/zipper/zipperd.sock"
[metrics]
listen = "127.0.0.1:9479"
TOML
systemctl daemon-reload
systemctl start zipperd || fail "systemctl start zipperd"
echo "started in $(($(date +%s) - t0)) s: ActiveState=$(show ActiveState) SubState=$(show SubState) User=$(ps -o user= -p "$(show MainPID)")"
echo "StatusText: $(show StatusText)"
[[ $(show ActiveState) == active ]] || fail "not active after start"
[[ $(ps -o user= -p "$(show MainPID)") == zipper ]] || fail "not running as user zipper"
ls -l /run/zipper/zipperd.sock
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MMPI_CHUNK_SIZE=262144
job=5151
zipper-run --local --no-zipperd --forwarder-keys "$(zipperctl host-key)" --forwarder-a 127.0.0.1:7470 --forwarder-b 127.0.0.1:7471 \
    -x 1 -y 1 --job-id $job --timeout 300 -- "$build/bin/mmpi_bytes" | tee /tmp/job.out ||
    fail "the job failed"
grep -q '^PASS bytes' /tmp/job.out || fail "the job did not pass"
read -r _ _ up_bytes _ up_frames _ down_bytes _ down_frames < <(grep '^EXPECT' /tmp/job.out)
zipperctl jobs
j=$(zipperctl jobs --json | jq ".[] | select(.id == \"$job\")")  # the id is a string
[[ -n $j ]] || fail "job $job not listed by zipperctl jobs"
label=$(jq -r .job <<<"$j")  # the job's one label: journal, zipperctl, /metrics
[[ $label =~ ^[0-9a-f]{12}$ ]] || fail "job label '$label'"
got=$(jq -r '[.low_to_high.bytes, .low_to_high.frames, .high_to_low.bytes, .high_to_low.frames] | @tsv' <<<"$j")
want=$(printf '%s\t%s\t%s\t%s' "$up_bytes" "$up_frames" "$down_bytes" "$down_frames")
echo "zipperctl: $got / job sent: $want"
[[ $got == "$want" ]] || fail "zipperctl's counters differ from what the job sent"
curl -sf http://127.0.0.1:9479/metrics >/tmp/metrics.txt || fail "GET /metrics"
promtool check metrics </tmp/metrics.txt || fail "promtool"
grep -F "zipper_job_bytes_total{job=\"$label\"" /tmp/metrics.txt
grep -qF "zipper_job_bytes_total{job=\"$label\",direction=\"low_to_high\"} $up_bytes" /tmp/metrics.txt ||
    fail "/metrics job bytes"
echo "StatusText: $(show StatusText)"

# WATCHDOG=1 comes every WatchdogSec/2 = 15 s once the relay loops have moved;
# systemd records the last one.
for _ in $(seq 40); do [[ $(show WatchdogTimestampMonotonic) != 0 ]] && break; sleep 1; done
[[ $(show WatchdogTimestampMonotonic) != 0 ]] || fail "systemd saw no WATCHDOG=1 within 40 s of the job"
echo "watchdog: last WATCHDOG=1 at $(show WatchdogTimestamp), WatchdogUSec=$(show WatchdogUSec)"

pid=$(show MainPID)
sed -i 's/^level = "info"/level = "debug"/' /etc/zipper/zipperd.toml
systemctl reload zipperd || fail "systemctl reload"
sleep 1
journalctl -u zipperd --no-pager | grep "SIGHUP: applied log.level = debug" >/dev/null ||
    fail "reload did not apply log.level"
[[ $(show MainPID) == "$pid" && $(show ActiveState) == active ]] || fail "reload restarted zipperd"
echo "reloaded: same pid $pid, log.level applied"

systemctl stop zipperd || fail "systemctl stop"
res="ActiveState=$(show ActiveState) Result=$(show Result) ExecMainStatus=$(show ExecMainStatus) NRestarts=$(show NRestarts)"
echo "stopped: $res"
[[ $res == "ActiveState=inactive Result=success ExecMainStatus=0 NRestarts=0" ]] ||
    fail "the unit did not end clean"
journalctl -u zipperd --no-pager -o cat | grep -E "listening|SIGHUP|watchdog|stopped:|Started|Stopped|Reload|Deactivated"
journalctl -u zipperd --no-pager -o cat | grep "Deactivated successfully" >/dev/null || fail "no clean deactivation in the journal"
echo "PASS systemd_service ($(($(date +%s) - t0)) s in the guest)"
