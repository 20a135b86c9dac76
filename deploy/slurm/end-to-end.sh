#!/usr/bin/env bash
# Proves deploy/slurm/sweep.sbatch end to end on this one machine: installs slurm-wlm and munge
# from Debian's packages if missing, starts a private munged and a one-node Slurm with their own
# config (SLURM_CONF), key, socket, spool, logs and free high ports under a temporary folder,
# submits a sweep as a 4-shard job array (whose first task submits the merge), waits, and
# compares the merged folder with an unsharded run of the same config, byte for byte.
# It never touches a system Slurm: it refuses, changing nothing, where a slurmctld, slurmd or
# munged runs or one is configured (/etc/slurm/slurm.conf, /etc/munge/munge.key, SLURM_CONF),
# writes nothing in /etc, and stops only the processes it started, by their ids. Installing munge
# creates /etc/munge/munge.key, so a later run on the same machine refuses too.
# Needs root. RETRYSIM=path uses that binary instead of building one. CI does not run it.
#
#   deploy/slurm/end-to-end.sh [CONFIG] [SHARDS]     (default: configs/duplicate-curve.toml, 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
config=${1:-configs/duplicate-curve.toml}
count=${2:-4}

step() { echo "== $*"; }
refuse() { echo "end-to-end.sh: $*; refusing to start, nothing changed" >&2; exit 1; }
running() {
    if command -v pgrep >/dev/null; then pgrep -x "$1" >/dev/null
    else grep -qx "$1" /proc/[0-9]*/comm 2>/dev/null; fi
}

# Before anything is installed or written: the munge package itself creates /etc/munge/munge.key.
[ "$(id -u)" -eq 0 ] || refuse "needs root"
[ -z "${SLURM_CONF+set}" ] || refuse "SLURM_CONF is set ($SLURM_CONF): a Slurm is configured here"
for file in /etc/slurm/slurm.conf /etc/slurm-llnl/slurm.conf /etc/munge/munge.key; do
    [ ! -e "$file" ] || refuse "$file exists: a Slurm or munge is configured here"
done
for daemon in slurmctld slurmd slurmdbd munged; do
    ! running "$daemon" || refuse "a $daemon is running here"
done
if [ -n "${RETRYSIM:-}" ]; then
    [ -x "$RETRYSIM" ] || refuse "RETRYSIM=$RETRYSIM is not an executable file"
fi

step "installing slurm-wlm and munge (Debian packages)"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
slurmctld -V

if [ -n "${RETRYSIM:-}" ]; then
    bin=$(readlink -f "$RETRYSIM")
    step "using $bin"
else
    step "building retrysim"
    cargo build --release --locked --quiet
    bin=$PWD/target/release/retrysim
fi

step "starting a private munge and a one-node Slurm"
work=$(mktemp -d /tmp/retrysim-slurm.XXXXXX)
chmod 0711 "$work" # munged wants every folder above its socket searchable by all
run=$work/run
mkdir -p "$run/munge" "$run/slurmctld" "$run/slurmd" "$run/log"
pids=()
stop() {
    local status=$? pid state _ i
    trap - EXIT
    set +e
    # Jobs first (through our own controller only), then the daemons, munged last.
    [ "${#pids[@]}" -gt 1 ] && scancel --quiet --user=root 2>/dev/null
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        pid=${pids[i]}
        kill "$pid" 2>/dev/null
        for _ in $(seq 20); do
            { read -r _ _ state _ <"/proc/$pid/stat"; } 2>/dev/null || break
            [ "$state" = Z ] && break
            sleep 0.5
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [ "$status" -eq 0 ]; then
        rm -rf "$work"
    else
        echo "end-to-end.sh: failed; its folder (logs in $run/log) is kept: $work" >&2
    fi
    exit "$status"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Two high ports nothing listens on (nor on each other).
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        [ "$port" != "${1:-}" ] || continue
        if command -v ss >/dev/null; then
            [ -z "$(ss -Hltn "sport = :$port")" ] && break
        else
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
        fi
    done
    echo "$port"
}
ctld_port=$(free_port)
slurmd_port=$(free_port "$ctld_port")

socket=$run/munge/munge.socket
(umask 077 && dd if=/dev/urandom of="$run/munge/munge.key" bs=1024 count=1 status=none)
chmod 0400 "$run/munge/munge.key"
munged --foreground --socket="$socket" --key-file="$run/munge/munge.key" \
    --pid-file="$run/munge/munged.pid" --log-file="$run/log/munged.log" \
    --seed-file="$run/munge/munged.seed" >"$run/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 30); do [ -S "$socket" ] && break; sleep 0.5; done
[ -S "$socket" ] || { echo "munged did not start; see $run/log" >&2; exit 1; }

host=$(hostname -s)
cpus=$(nproc)
memory=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
export SLURM_CONF=$run/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=retrysim
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$run/slurmctld
SlurmdSpoolDir=$run/slurmd
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$run/log/slurmctld.log
SlurmdLogFile=$run/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
chmod 0644 "$SLURM_CONF"
slurmctld -D -c -i -f "$SLURM_CONF" >"$run/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$run/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 30); do
    sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed)' && break
    sleep 1
done
sinfo

step "submitting $config as $count shards, the merge held until they all succeed"
(
    cd "$work"
    cp -r "$OLDPWD/configs" .
    RETRYSIM=$bin SHARDS=$work/shards OUT=$work/merged \
        sbatch --array=0-$((count - 1)) --cpus-per-task=1 "$OLDPWD/deploy/slurm/sweep.sbatch" "$config"
)
for _ in $(seq 600); do
    sleep 2
    jobs=$(squeue -h | wc -l)
    [ "$jobs" -eq 0 ] && [ -n "$(ls "$work"/merged 2>/dev/null)" ] && break
done
squeue
step "the jobs' logs"
tail -n 3 "$work"/retrysim-*.log

step "the merged folder against an unsharded run"
(cd "$work" && "$bin" run "$config" --out "$work/whole" --quiet)
name=$(ls "$work/whole")
ls "$work/shards"/*/
diff -r "$work/whole/$name" "$work/merged/$name"
echo "the merged $name is the unsharded run, byte for byte ($(find "$work/merged/$name" -type f | wc -l) files)"
