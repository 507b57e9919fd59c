#!/bin/sh
# Runs one rank of an MPI job as if it were on a node of its own, so that
# Tremor sees several nodes through the code path it takes on a cluster: a
# UTS namespace whose host name is node-N, the launcher's node-local rank
# variables of that node, and optionally a CPU list, a turbo switch and CPU
# hogs.
#
#   FAKE_NODES=K          ranks go round-robin to nodes node-0 .. node-(K-1)
#                         (rank r on node r mod K, as `--map-by node` would)
#   FAKE_NODE_CPUS=L0/L1/..  node i's ranks are bound to CPU list Li (taskset)
#   FAKE_TURBO_NODE=i     node i reads turbo as on (a tmpfs over
#                         /sys/devices/system/cpu/cpufreq holding boost=1)
#   FAKE_HOG_NODE=i       beside each rank of node i, FAKE_NODE_HOGS (default
#                         3) busy loops bound to that node's CPUs, ended
#                         with the rank: the rank keeps 1/(hogs+1) of its CPU
#
# The hogs start here, in the rank's session, because Hydra (MPICH) gives
# each rank a session of its own and the kernel's autogroups share a CPU
# between sessions before they share it between processes: hogs started by
# the caller would take from the rank whatever share the caller's session
# has, from half the CPU (a login shell) to all but 1/258 of it (a CI
# runner's session, hogs at nice -20). Open MPI keeps its ranks in the
# caller's session; beside the rank, the hogs share its session either way.
#
# The rank comes from PMI_RANK (MPICH's Hydra) or OMPI_COMM_WORLD_RANK (Open
# MPI). Needs root (unshare). usage: fake_node.sh PROGRAM ARGS...
set -eu
if [ "${FAKE_NODE_INSIDE:-}" != 1 ]; then
  rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:?fake_node.sh: no rank from the launcher}}
  size=${PMI_SIZE:-${OMPI_COMM_WORLD_SIZE:?fake_node.sh: no size from the launcher}}
  nodes=${FAKE_NODES:?fake_node.sh: FAKE_NODES not set}
  node=$((rank % nodes))
  local_rank=$((rank / nodes))
  local_size=$(((size - node + nodes - 1) / nodes))
  export MPI_LOCALRANKID=$local_rank MPI_LOCALNRANKS=$local_size
  export OMPI_COMM_WORLD_LOCAL_RANK=$local_rank OMPI_COMM_WORLD_LOCAL_SIZE=$local_size
  cpus=""
  if [ -n "${FAKE_NODE_CPUS:-}" ]; then
    cpus=$(echo "$FAKE_NODE_CPUS" | cut -d/ -f$((node + 1)))
  fi
  # Only the rank gets the preload: helpers such as unshare, with a sanitizer
  # runtime preloaded into them, can deadlock.
  export FAKE_NODE_PRELOAD="${LD_PRELOAD:-}" FAKE_NODE_ID=$node FAKE_NODE_BIND=$cpus FAKE_NODE_INSIDE=1
  unset LD_PRELOAD
  exec unshare --uts --mount /bin/sh "$0" "$@"
fi

# Inside the rank's UTS and mount namespaces.
node=$FAKE_NODE_ID
bind=""
[ -n "$FAKE_NODE_BIND" ] && bind="taskset -c $FAKE_NODE_BIND"
unset FAKE_NODE_INSIDE FAKE_NODE_ID FAKE_NODE_BIND
hostname "node-$node"
if [ "${FAKE_TURBO_NODE:-}" = "$node" ]; then
  mount -t tmpfs fake-cpufreq /sys/devices/system/cpu/cpufreq
  echo 1 > /sys/devices/system/cpu/cpufreq/boost
fi
hogs=""
if [ "${FAKE_HOG_NODE:-}" = "$node" ]; then
  count=${FAKE_NODE_HOGS:-3}
  case $count in
    '' | *[!0-9]*) echo "fake_node.sh: FAKE_NODE_HOGS must be a whole number, not '$count'" >&2; exit 2 ;;
  esac
  while [ "$count" -gt 0 ]; do
    # A hog dies with this shell even when the shell is killed.
    # shellcheck disable=SC2086
    setpriv --pdeathsig KILL $bind sh -c 'while :; do :; done' &
    hogs="$hogs $!"
    count=$((count - 1))
  done
fi
export LD_PRELOAD="$FAKE_NODE_PRELOAD"
unset FAKE_NODE_PRELOAD
if [ -z "$hogs" ]; then
  # shellcheck disable=SC2086
  exec $bind "$@"
fi
status=0
# shellcheck disable=SC2086
$bind "$@" || status=$?
# shellcheck disable=SC2086
kill $hogs 2>/dev/null || true
exit "$status"
