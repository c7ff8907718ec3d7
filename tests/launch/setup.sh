#!/usr/bin/env bash
# Installs and starts the launchers the tests in this folder use, once per
# machine: Open MPI's mpirun (`setup.sh mpi`; with its compiler wrapper
# mpicc, for the benchmark comlib/alltoall/mpi, `setup.sh mpicc`), MPICH's
# Hydra mpiexec
# (`setup.sh hydra`) and a one-host Slurm with
# munge, slurmctld and slurmd on localhost (`setup.sh slurm`). It installs
# Debian's packages (apt-get update once, then apt-get install -y) as root
# or through sudo, and does nothing that is already done. For slurm it
# prints SLURM_CONF=... and CHARMGO_STARTED=... (the daemons it started,
# which `setup.sh stop NAMES` stops again, by their pid files). On failure
# it exits non-zero with the reason on stderr; the tests then skip,
# printing it.
set -euo pipefail

what=${1:?usage: setup.sh mpi|mpicc|hydra|slurm|stop NAMES}
state=/var/tmp/charmgo-launch # conf, spool and logs of the test Slurm
conf=$state/slurm.conf

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo -n "$@"
  else echo "setup.sh: not root and no password-less sudo: cannot run $*" >&2; return 1
  fi
}

install() { # install PACKAGE... unless COMMAND (the first argument) exists
  local cmd=$1; shift
  command -v "$cmd" >/dev/null && return 0
  apt_install "$@"
  command -v "$cmd" >/dev/null || { echo "setup.sh: $cmd is still missing after installing $*" >&2; return 1; }
}

apt_install() { # install PACKAGE...
  command -v apt-get >/dev/null || { echo "setup.sh: no apt-get to install $*" >&2; return 1; }
  # One update per machine: the stamp says it was done.
  if [ ! -e /var/tmp/charmgo-apt-updated ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -q >&2 || {
      echo "setup.sh: apt-get update failed" >&2; return 1; }
    as_root touch /var/tmp/charmgo-apt-updated
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "$@" >&2 || {
    echo "setup.sh: apt-get install $* failed" >&2; return 1; }
}

has_mpi_h() { echo '#include <mpi.h>' | mpicc -E -x c - >/dev/null 2>&1; }

running() { pgrep -x "$1" >/dev/null; }

case $what in
mpi)
  install mpirun.openmpi openmpi-bin
  ;;
mpicc)
  install mpirun.openmpi openmpi-bin
  # openmpi-bin ships the mpicc wrapper too; the headers come with
  # libopenmpi-dev, so mpicc alone does not say that it can compile.
  if ! has_mpi_h; then
    apt_install libopenmpi-dev
    has_mpi_h || { echo "setup.sh: mpicc cannot find mpi.h after installing libopenmpi-dev" >&2; exit 1; }
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
# A one-host Slurm for charmgo's launcher tests (tests/launch/setup.sh).
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
  echo "setup.sh: the test Slurm did not come up (node state '${st:-none}'; see $state/slurmctld.log, $state/slurmd.log)" >&2
  exit 1
  ;;
stop)
  # Stop the daemons a `setup.sh slurm` started (a comma-separated list),
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
    # Wait (at most 10 s) for it to go: a new setup.sh must not find it.
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  ;;
*) echo "setup.sh: unknown launcher $what" >&2; exit 2 ;;
esac
