#!/usr/bin/env bash
# zipperd with a settings file, its control socket and /metrics, on loopback
# (no root): runs the mmpi_bytes job through it and checks that zipperctl
# and /metrics report exactly the bytes and frames the job sent; then checks
# promtool, drain (a new job is refused, status says draining), `zipperctl
# set log-level`, SIGHUP (applied vs needs-restart) and a clean SIGTERM;
# and the alerts of docs/operations.md against the metrics served (promtool).
# usage: service_loopback.sh BIN_DIR
set -euo pipefail
bin=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
for t in jq curl promtool; do
    command -v "$t" >/dev/null || { echo "SKIP: $t not installed (deploy/install-deps.sh)"; exit 77; }
done
dir=$(mktemp -d)
zpid=
cleanup() {
    [[ -z $zpid ]] || kill "$zpid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- zipperd log"
    cat "$dir/zipperd.log" || true
    exit 1
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MMPI_CHUNK_SIZE=262144
ctl() { "$bin/zipperctl" --socket "$dir/ctl.sock" "$@"; }

cat >"$dir/zipperd.toml" <<TOML
[listen]
A = "127.0.0.1:0"
B = "127.0.0.1:0"
[flow]
conn_credits = 64
max_memory = "64MiB"
[log]
level = "info"
[service]
pid_file = "$dir/zipperd.pid"
[control]
socket = "$dir/ctl.sock"
[metrics]
listen = "127.0.0.1:0"
TOML
"$bin/zipperd" --config "$dir/zipperd.toml" >"$dir/zipperd.log" 2>&1 &
zpid=$!
for _ in $(seq 100); do [[ -s $dir/zipperd.pid ]] && break; sleep 0.1; done
[[ -s $dir/zipperd.pid ]] || fail "zipperd wrote no pid file within 10 s"
metrics=$(sed -n 's|.*metrics at \(http://[^ ]*\)|\1|p' "$dir/zipperd.log")
[[ -n $metrics ]] || fail "no metrics address in the log"
ctl status
addr() { ctl status --json | jq -r ".sides[] | select(.name == \"$1\") | .address"; }
fa=$(addr A) fb=$(addr B)
key=$(ctl host-key) # a site zipperd is used with its key only
echo "listeners: A=$fa B=$fb, metrics: $metrics"

# ---- the job, then the counters against what it sent
job=4242
"$bin/zipper-run" --local --no-zipperd --forwarder-keys "$key" --forwarder-a "$fa" --forwarder-b "$fb" -x 1 -y 1 \
    --job-id $job --timeout 120 -- "$bin/mmpi_bytes" | tee "$dir/job.out" ||
    fail "the job failed"
grep -q '^PASS bytes' "$dir/job.out" || fail "the job did not pass"
read -r _ _ up_bytes _ up_frames _ down_bytes _ down_frames < <(grep '^EXPECT' "$dir/job.out")
ctl jobs
j=$(ctl jobs --json | jq ".[] | select(.id == \"$job\")")  # the id is a string
[[ -n $j ]] || fail "job $job not listed by zipperctl jobs"
label=$(jq -r .job <<<"$j")  # the job's one label: log, zipperctl, /metrics
[[ $label =~ ^[0-9a-f]{12}$ ]] || fail "job label '$label'"
grep -q "job $label: ended after" "$dir/zipperd.log" || fail "the job's end was not logged with its label"
got=$(jq -r '[.state, .low_to_high.bytes, .low_to_high.frames, .high_to_low.bytes, .high_to_low.frames] | @tsv' <<<"$j")
want=$(printf 'finished\t%s\t%s\t%s\t%s' "$up_bytes" "$up_frames" "$down_bytes" "$down_frames")
echo "zipperctl jobs --json: $got"
echo "job sent:              $want"
[[ $got == "$want" ]] || fail "zipperctl's counters differ from what the job sent"
st=$(ctl status --json)
[[ $(jq '.relayed.bytes' <<<"$st") == $((up_bytes + down_bytes)) ]] || fail "status relayed bytes"
[[ $(jq '[.sides[] | .received.bytes] | add' <<<"$st") == $((up_bytes + down_bytes)) ]] ||
    fail "per-side bytes"
[[ $(jq '.sides[] | select(.name == "A") | .received.bytes' <<<"$st") == "$up_bytes" ]] ||
    fail "side A received bytes"
ctl pools
ctl links

curl -sf "$metrics" >"$dir/metrics.txt" || fail "GET $metrics failed"
promtool check metrics <"$dir/metrics.txt" || fail "promtool check metrics"
echo "promtool check metrics: clean"
m() { grep -F "$1" "$dir/metrics.txt" | awk '{print $2}'; }
[[ $(m "zipper_job_bytes_total{job=\"$label\",direction=\"low_to_high\"}") == "$up_bytes" ]] ||
    fail "/metrics low_to_high bytes"
[[ $(m "zipper_job_bytes_total{job=\"$label\",direction=\"high_to_low\"}") == "$down_bytes" ]] ||
    fail "/metrics high_to_low bytes"
[[ $(m "zipper_job_frames_total{job=\"$label\",direction=\"low_to_high\"}") == "$up_frames" ]] ||
    fail "/metrics low_to_high frames"
! grep -q "job=\"$job\"" "$dir/metrics.txt" || fail "/metrics shows the raw job id"

# ---- the alerts of docs/operations.md: valid rules, and every metric they
# name is one zipperd serves
sed -n '/<!-- alerts:begin -->/,/<!-- alerts:end -->/p' "$src/docs/operations.md" |
    sed '/^```/d; /^<!--/d' >"$dir/alerts.yml"
[[ -s $dir/alerts.yml ]] || fail "no alerts block in docs/operations.md"
promtool check rules "$dir/alerts.yml" || fail "promtool check rules (docs/operations.md alerts)"
for name in $(grep -o 'zipper_[a-z_]*' "$dir/alerts.yml" | sort -u); do
    grep -q "^# TYPE $name " "$dir/metrics.txt" || fail "alert names $name, which /metrics does not serve"
done
echo "alerts: promtool check rules clean, every metric served"
[[ $(m 'zipper_side_received_bytes_total{side="A"}') == "$up_bytes" ]] || fail "/metrics side A"
grep -E '^zipper_(job|side_received)_bytes_total' "$dir/metrics.txt"
grep '^zipper_build_info' "$dir/metrics.txt"
ctl metrics | promtool check metrics || fail "zipperctl metrics (textfile) is not clean"

# ---- drain: a new job is refused, status says so; resume admits again
ctl drain
[[ $(ctl status --json | jq -r .state) == draining ]] || fail "status does not say draining"
if "$bin/zipper-run" --local --no-zipperd --forwarder-keys "$key" --forwarder-a "$fa" --forwarder-b "$fb" -x 1 -y 1 \
    --job-id 4343 --timeout 60 -- "$bin/mmpi_bytes" >"$dir/refused.out" 2>&1; then
    fail "a new job ran while draining"
fi
grep -q draining "$dir/refused.out" || fail "the refused job was not told why: $(tail -3 "$dir/refused.out")"
# Counted once per job (its two ranks), and no protocol error.
[[ $(ctl status --json | jq .jobs_refused_draining) -eq 1 ]] || fail "refused jobs not counted as jobs"
[[ $(ctl status --json | jq .protocol_errors) -eq 0 ]] || fail "a drain refusal counted as a protocol error"
# Whole text first: `grep -q` quitting early would fail curl (SIGPIPE) under pipefail.
text=$(curl -sf "$metrics") || fail "GET $metrics after a drain"
grep -q '^zipper_protocol_errors_total 0$' <<<"$text" || fail "/metrics protocol errors after a drain"
ctl drain --wait --timeout 10 >/dev/null || fail "drain --wait with no job running"
ctl resume
[[ $(ctl status --json | jq -r .state) == running ]] || fail "resume"

# ---- run-time settings: zipperctl set, then SIGHUP
ctl set log-level debug
grep -q "log level set to debug" "$dir/zipperd.log" || fail "set log-level"
sed -i 's/^level = "info"/level = "warn"/; s/^conn_credits = 64/conn_credits = 128/' \
    "$dir/zipperd.toml"
kill -HUP "$zpid"
for _ in $(seq 50); do grep -q "needs a restart" "$dir/zipperd.log" && break; sleep 0.1; done
grep -q "SIGHUP: applied log.level = warn" "$dir/zipperd.log" || fail "SIGHUP did not apply log.level"
grep -q "SIGHUP: flow.conn_credits changed to '128' but needs a restart" "$dir/zipperd.log" ||
    fail "SIGHUP did not name flow.conn_credits as needing a restart"
echo 'bogus = 1' >>"$dir/zipperd.toml"
kill -HUP "$zpid"
for _ in $(seq 50); do grep -q "keeping the running settings" "$dir/zipperd.log" && break; sleep 0.1; done
grep -q "zipperd.toml:[0-9]*: unknown key 'metrics.bogus'.*keeping the running settings" \
    "$dir/zipperd.log" || fail "a bad file at SIGHUP was not refused with its line"

kill -TERM "$zpid"
rc=0
wait "$zpid" || rc=$?
zpid=
((rc == 0)) || fail "zipperd exited with $rc after SIGTERM"
[[ ! -e $dir/ctl.sock ]] || fail "control socket left behind"
grep "SIGHUP\|stopped:" "$dir/zipperd.log"
echo "PASS service_loopback"
