#!/usr/bin/env bash
# make slurm-check: the sharded sweep on a real Slurm, on this machine.
#
# Starts a private single-node cluster (its own MUNGE daemon and key, a
# slurm.conf for this host, slurmctld and slurmd on free ports, all under
# one temporary directory), submits deploy/slurm/sweep.sbatch as a job
# array of $SHARDS tasks and deploy/slurm/merge.sbatch after it, waits,
# runs the same sweep on one machine (no Slurm) and compares the two
# directories byte for byte. It stops what it started (by PID) and removes
# the directory (KEEP=1 keeps it, for its logs).
#
# Needs root (slurmd starts each job as its user) and Debian's packages:
#   apt-get install -y slurmctld slurmd slurm-client munge
# It does not touch a system Slurm or MUNGE: its daemons use their own
# sockets, ports and spool directories, and SLURM_CONF points the
# commands at its slurm.conf.
#
# Settings: SHARDS (default 4), SCENARIO, PARAM and FLAGS (the sweep;
# default tiny, a threshold from 5 to 60 ms, 3 replications), TIMEOUT
# (seconds for the jobs, default 900).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

SHARDS=${SHARDS:-4}
SCENARIO=${SCENARIO:-tiny}
PARAM=${PARAM:-policies.static-20ms.threshold_ms=5:60:5}
FLAGS=${FLAGS:---replications 3}
TIMEOUT=${TIMEOUT:-900}
KEEP=${KEEP:-0}

say() { printf 'slurm-check: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

for cmd in go munged mungekey slurmctld slurmd sbatch sinfo squeue scancel; do
  command -v "$cmd" >/dev/null ||
    { say "$cmd not found; install Slurm and MUNGE (Debian, Ubuntu: apt-get install -y slurmctld slurmd slurm-client munge)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { say "run as root: slurmd starts each job as its user" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/hedgesim-slurm.XXXXXX")
chmod 755 "$work" # munged wants its socket's directories searchable by all
mkdir -p "$work"/{bin,munge,state,spool,log,parts}
chmod 755 "$work/munge"

pids=() # daemons started, in order
jobs_submitted=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ ${#jobs_submitted[@]} -gt 0 ]; then
    scancel --quiet "${jobs_submitted[@]}" 2>/dev/null || true
    for _ in $(seq 20); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 1
    done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  if [ "$rc" != 0 ]; then
    for f in "$work"/log/*; do
      [ -f "$f" ] && { echo "--- $f (last lines)"; tail -n 15 "$f"; }
    done
  fi
  if [ "$KEEP" = 1 ]; then
    say "kept $work"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds.
wait_for() {
  local secs=$1 what=$2
  shift 2
  for _ in $(seq "$((secs * 4))"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  die "timed out after ${secs}s waiting for $what"
}

# free_port FROM: the first port from FROM on which nothing listens.
free_port() {
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

say "building hedgesim"
go build -o "$work/bin/hedgesim" ./cmd/hedgesim
hedgesim=$work/bin/hedgesim

say "starting munged"
mungekey --create --keyfile="$work/munge/munge.key"
munged --foreground --socket="$work/munge/munge.socket" --key-file="$work/munge/munge.key" \
  --log-file="$work/log/munged.log" --pid-file="$work/munge/munged.pid" \
  --seed-file="$work/munge/munged.seed" >"$work/log/munged.out" 2>&1 &
pids+=($!)
wait_for 10 "munged's socket" test -S "$work/munge/munge.socket"

host=$(hostname -s)
ctld_port=$(free_port 16817)
d_port=$(free_port $((ctld_port + 1)))
cpus=$(nproc)
cat >"$work/slurm.conf" <<EOF
# Written by scripts/slurm-check.sh: a single-node cluster on $host.
ClusterName=hedgesim-check
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf

say "starting slurmctld (port $ctld_port) and slurmd (port $d_port) on $host, $cpus CPUs"
slurmctld -D -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
wait_for 30 slurmctld scontrol ping
slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { sinfo -h -n "$host" -o %t | grep -qx idle; }
wait_for 60 "node $host to be idle" node_idle

args="sweep $SCENARIO --param $PARAM $FLAGS"
say "submitting hedgesim $args as an array of $SHARDS shards, then the merge"
export HEDGESIM=$hedgesim HEDGESIM_ARGS="$args" PARTS=$work/parts OUT=$work/merged
cpt=$(( cpus / SHARDS > 0 ? cpus / SHARDS : 1 ))
sweep=$(sbatch --parsable --array="0-$((SHARDS - 1))" --cpus-per-task="$cpt" --chdir="$work" \
  --output="$work/log/shard-%a.out" "$repo/deploy/slurm/sweep.sbatch")
jobs_submitted+=("$sweep")
say "array job $sweep submitted"
start=$(date +%s)
merge=$(timeout "$TIMEOUT" sbatch --parsable --wait --dependency="afterok:$sweep" --kill-on-invalid-dep=yes \
  --chdir="$work" --output="$work/log/merge.out" "$repo/deploy/slurm/merge.sbatch") ||
  die "the merge job did not succeed (a shard failed, or ${TIMEOUT}s passed)"
jobs_submitted+=("$merge")
say "array job $sweep and merge job $merge done in $(( $(date +%s) - start ))s"
for k in $(seq 0 $((SHARDS - 1))); do
  sed 's/^/  /' "$work/log/shard-$k.out" | head -n 1
done

say "running the same sweep on one machine"
# shellcheck disable=SC2086 # FLAGS is split at spaces on purpose
"$hedgesim" sweep "$SCENARIO" --param "$PARAM" $FLAGS -q --out "$work/single"

n=$(find "$work/single" -type f | wc -l)
if diff -r "$work/single" "$work/merged" >"$work/log/diff.out"; then
  say "PASS: the merged sweep of $SHARDS Slurm shards equals the single-machine sweep, byte for byte ($n files: $(cd "$work/single" && ls | tr '\n' ' '))"
else
  cat "$work/log/diff.out"
  die "FAIL: the merged sweep differs from the single-machine sweep"
fi
