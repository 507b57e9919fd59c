#!/bin/sh
# Runs one rank of an MPI job as if it were on a named node of its own (the
# fleet campaign, issue 52): a UTS namespace whose host name is the rank's
# node, and the launcher's node-local rank variables of that node.
#
#   FLEET_NODE_NAMES=n1/n4/n3/n7   rank r runs on node number r mod K of this
#                                  list of K names (one rank per node when
#                                  the job has K ranks)
#
# fake_node.sh does the same with the names node-0 .. node-(K-1); the fleet
# needs the same names in many jobs. The rank comes from PMI_RANK (MPICH's
# Hydra) or OMPI_COMM_WORLD_RANK (Open MPI). Needs root (unshare).
# usage: fleet_campaign_node.sh PROGRAM ARGS...
set -eu
rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:?fleet_campaign_node.sh: no rank from the launcher}}
size=${PMI_SIZE:-${OMPI_COMM_WORLD_SIZE:?fleet_campaign_node.sh: no size from the launcher}}
names=${FLEET_NODE_NAMES:?fleet_campaign_node.sh: FLEET_NODE_NAMES not set}
nodes=$(echo "$names" | tr '/' '\n' | wc -l)
node=$((rank % nodes))
name=$(echo "$names" | cut -d/ -f$((node + 1)))
local_rank=$((rank / nodes))
local_size=$(((size - node + nodes - 1) / nodes))
export MPI_LOCALRANKID=$local_rank MPI_LOCALNRANKS=$local_size
export OMPI_COMM_WORLD_LOCAL_RANK=$local_rank OMPI_COMM_WORLD_LOCAL_SIZE=$local_size
# Only the rank gets the preload: helpers such as unshare, with a sanitizer
# runtime preloaded into them, can deadlock.
export FLEET_NODE_PRELOAD="${LD_PRELOAD:-}"
unset LD_PRELOAD
export FLEET_NODE_NAME="$name"
exec unshare --uts --mount sh -c \
  "hostname \"\$FLEET_NODE_NAME\" && export LD_PRELOAD=\"\$FLEET_NODE_PRELOAD\" && exec \"\$@\"" fleet_node "$@"
