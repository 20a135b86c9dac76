#!/usr/bin/env bash
# Proves deploy/slurm/sweep.sbatch end to end on this one machine: installs a single-node Slurm
# from Debian's packages (slurm-wlm, munge), starts munge and the Slurm daemons with a minimal
# config, submits a sweep as a 4-shard job array (whose first task submits the merge), waits,
# and compares the merged folder with an unsharded run of the same config, byte for byte.
# Needs root. Stops the daemons it started when it ends. CI does not run it.
#
#   deploy/slurm/end-to-end.sh [CONFIG] [SHARDS]     (default: configs/duplicate-curve.toml, 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
config=${1:-configs/duplicate-curve.toml}
count=${2:-4}
work=$(mktemp -d /tmp/retrysim-slurm.XXXXXX)

step() { echo "== $*"; }

step "installing slurm-wlm and munge (Debian packages)"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
slurmctld -V

step "building retrysim"
cargo build --release --locked --quiet
bin=$PWD/target/release/retrysim

step "starting munge and a one-node Slurm"
host=$(hostname -s)
cpus=$(nproc)
memory=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge /etc/slurm \
    /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge
chmod 0400 /etc/munge/munge.key
cat >/etc/slurm/slurm.conf <<CONF
ClusterName=retrysim
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
cleanup() {
    pkill -x slurmd 2>/dev/null || true
    pkill -x slurmctld 2>/dev/null || true
    pkill -x munged 2>/dev/null || true
}
trap cleanup EXIT
cleanup
sleep 1
su -s /bin/sh munge -c /usr/sbin/munged
slurmctld -c -i
slurmd -c
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
rm -rf "$work"
