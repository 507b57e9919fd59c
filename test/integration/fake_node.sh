#!/bin/sh
# Runs one rank of an MPI job as if it were on a node of its own, so that
# Tremor sees several nodes through the code path it takes on a cluster: a
# UTS namespace whose host name is node-N, the launcher's node-local rank
# variables of that node, and optionally a CPU list and a turbo switch.
#
#   FAKE_NODES=K          ranks go round-robin to nodes node-0 .. node-(K-1)
#                         (rank r on node r mod K, as `--map-by node` would)
#   FAKE_NODE_CPUS=L0/L1/..  node i's ranks are bound to CPU list Li (taskset)
#   FAKE_TURBO_NODE=i     node i reads turbo as on (a tmpfs over
#                         /sys/devices/system/cpu/cpufreq holding boost=1)
#
# The rank comes from PMI_RANK (MPICH's Hydra) or OMPI_COMM_WORLD_RANK (Open
# MPI). Needs root (unshare). usage: fake_node.sh PROGRAM ARGS...
set -eu
rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:?fake_node.sh: no rank from the launcher}}
size=${PMI_SIZE:-${OMPI_COMM_WORLD_SIZE:?fake_node.sh: no size from the launcher}}
nodes=${FAKE_NODES:?fake_node.sh: FAKE_NODES not set}
node=$((rank % nodes))
local_rank=$((rank / nodes))
local_size=$(((size - node + nodes - 1) / nodes))
export MPI_LOCALRANKID=$local_rank MPI_LOCALNRANKS=$local_size
export OMPI_COMM_WORLD_LOCAL_RANK=$local_rank OMPI_COMM_WORLD_LOCAL_SIZE=$local_size
bind=""
if [ -n "${FAKE_NODE_CPUS:-}" ]; then
  bind="taskset -c $(echo "$FAKE_NODE_CPUS" | cut -d/ -f$((node + 1)))"
fi
turbo=""
if [ "${FAKE_TURBO_NODE:-}" = "$node" ]; then
  turbo="mount -t tmpfs fake-cpufreq /sys/devices/system/cpu/cpufreq &&
         echo 1 > /sys/devices/system/cpu/cpufreq/boost &&"
fi
# Only the rank gets the preload: helpers such as unshare, with a sanitizer
# runtime preloaded into them, can deadlock.
export FAKE_NODE_PRELOAD="${LD_PRELOAD:-}"
unset LD_PRELOAD
# shellcheck disable=SC2086
exec unshare --uts --mount sh -c \
  "hostname node-$node && $turbo export LD_PRELOAD=\"\$FAKE_NODE_PRELOAD\" && exec $bind \"\$@\"" fake_node "$@"
