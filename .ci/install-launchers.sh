#!/usr/bin/env bash
# Installs the launchers that the tests in tests/launch run the examples
# under, and starts a one-host Slurm: an explicit step, which .ci/run takes
# before the tests; `go test` itself installs and starts nothing, and those
# tests skip, saying why, where a launcher is missing.
#
#   .ci/install-launchers.sh            all of the below (what .ci/run does)
#   .ci/install-launchers.sh mpi        Open MPI's mpirun (openmpi-bin)
#   .ci/install-launchers.sh mpicc      and its compiler wrapper with mpi.h
#                                       (libopenmpi-dev; for the benchmark
#                                       comlib/alltoall/mpi)
#   .ci/install-launchers.sh hydra      MPICH's Hydra mpiexec (mpich)
#   .ci/install-launchers.sh slurm      slurm-wlm and munge, and starts munged,
#                                       slurmctld and slurmd on localhost,
#                                       configured in /var/tmp/charmgo-launch
#   .ci/install-launchers.sh stop NAMES stops the daemons NAMES (a comma-
#                                       separated list) by their pid files
#
# It installs Debian's packages (apt-get update once per machine, then
# apt-get install -y) as root or through password-less sudo, and does
# nothing that is already done. For slurm it prints SLURM_CONF=... and
# CHARMGO_STARTED=... (the daemons it started, for `stop`). On failure it
# exits non-zero with the reason on stderr.
set -euo pipefail

what=${1:-all}
state=/var/tmp/charmgo-launch # conf, spool and logs of the test Slurm
conf=$state/slurm.conf

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo -n "$@"
  else echo "install-launchers.sh: not root and no password-less sudo: cannot run $*" >&2; return 1
  fi
}

install() { # install PACKAGE... unless COMMAND (the first argument) exists
  local cmd=$1; shift
  command -v "$cmd" >/dev/null && return 0
  apt_install "$@"
  command -v "$cmd" >/dev/null || { echo "install-launchers.sh: $cmd is still missing after installing $*" >&2; return 1; }
}

apt_install() { # install PACKAGE...
  command -v apt-get >/dev/null || { echo "install-launchers.sh: no apt-get to install $*" >&2; return 1; }
  # One update per machine: the stamp says it was done.
  if [ ! -e /var/tmp/charmgo-apt-updated ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -q >&2 || {
      echo "install-launchers.sh: apt-get update failed" >&2; return 1; }
    as_root touch /var/tmp/charmgo-apt-updated
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "$@" >&2 || {
    echo "install-launchers.sh: apt-get install $* failed" >&2; return 1; }
}

has_mpi_h() { echo '#include <mpi.h>' | mpicc -E -x c - >/dev/null 2>&1; }

running() { pgrep -x "$1" >/dev/null; }

case $what in
all)
  self=$0
  bash "$self" mpi
  bash "$self" hydra
  bash "$self" slurm
  ;;
mpi)
  install mpirun.openmpi openmpi-bin
  ;;
mpicc)
  install mpirun.openmpi openmpi-bin
  # openmpi-bin ships the mpicc wrapper too; the headers come with
  # libopenmpi-dev, so mpicc alone does not say that it can compile.
  if ! has_mpi_h; then
    apt_install libopenmpi-dev
    has_mpi_h || { echo "install-launchers.sh: mpicc cannot find mpi.h after installing libopenmpi-dev" >&2; exit 1; }
  fi
  ;;
hydra)
  install mpiexec.hydra mpich
  ;;
slurm)
  install srun slurm-wlm munge
  install munged munge
  # munge: its key is made when the package is installed; make one if not.
  if [ ! -s /etc/munge/munge.key ]; then as_root mungekey --create >&2; fi
  started=()
  if ! running munged; then
    started+=(munged)
    as_root mkdir -p /run/munge
    as_root chown munge:munge /run/munge /etc/munge/munge.key 2>/dev/null || true
    as_root runuser -u munge -- /usr/sbin/munged >&2 || as_root /usr/sbin/munged --force >&2
  fi
  as_root mkdir -p "$state/ctld" "$state/d"
  cpus=$(nproc)
  cat > "$state/slurm.conf.new" <<CONF
# A one-host Slurm for charmgo's launcher tests (.ci/install-launchers.sh).
ClusterName=charmgo
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
SlurmdParameters=config_overrides
NodeName=charmgo NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  if ! cmp -s "$state/slurm.conf.new" "$conf"; then as_root mv "$state/slurm.conf.new" "$conf"; else rm -f "$state/slurm.conf.new"; fi
  export SLURM_CONF=$conf
  if ! running slurmctld; then started+=(slurmctld); as_root env SLURM_CONF="$conf" slurmctld >&2; fi
  if ! running slurmd; then started+=(slurmd); as_root env SLURM_CONF="$conf" slurmd -N charmgo >&2; fi
  (IFS=,; echo "CHARMGO_STARTED=${started[*]}")
  # Wait (at most 30 s) for the node to take jobs.
  for _ in $(seq 60); do
    st=$(sinfo -h -N -o %t 2>/dev/null | head -n1 || true)
    case $st in idle|mix|alloc) echo "SLURM_CONF=$conf"; exit 0 ;;
    down*|drain*) as_root env SLURM_CONF="$conf" scontrol update nodename=charmgo state=resume >&2 || true ;;
    esac
    sleep 0.5
  done
  echo "install-launchers.sh: the test Slurm did not come up (node state '${st:-none}'; see $state/slurmctld.log, $state/slurmd.log)" >&2
  exit 1
  ;;
stop)
  # Stop the daemons an `install-launchers.sh slurm` started (a comma-separated list),
  # each by the pid in its pid file, slurmd first.
  for n in slurmd slurmctld munged; do
    case ",${2:-}," in *",$n,"*) ;; *) continue ;; esac
    case $n in
      munged) pidf=/run/munge/munged.pid ;;
      *) pidf=$state/$n.pid ;;
    esac
    [ -s "$pidf" ] || continue
    pid=$(cat "$pidf")
    as_root kill "$pid" 2>/dev/null || continue
    # Wait (at most 10 s) for it to go: a new start must not find it.
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  ;;
*) echo "install-launchers.sh: unknown launcher $what (want all, mpi, mpicc, hydra, slurm or stop NAMES)" >&2; exit 2 ;;
esac
