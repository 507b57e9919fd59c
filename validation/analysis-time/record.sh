#!/usr/bin/env bash
# Records one 2-rank run of each application under Tremor, for
# measure.py (docs/analysis-time.md): the bundled demo (MPICH), Quantum
# ESPRESSO, NWChem, LAMMPS and CP2K (Debian 12 packages, Open MPI).
# usage: record.sh MPICH_BUILD OPENMPI_BUILD OUT_DIR [APP...]
# APP: demo qe nwchem lammps cp2k (default: all). Each run's folder
# OUT_DIR/APP holds its run file and the profiler's stderr (finalize.log,
# with TREMOR_LOG_LEVEL=debug's "finalize:" line: the in-run analysis time).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
mpich_build=$(cd "$1" && pwd)
openmpi_build=$(cd "$2" && pwd)
out=$3
shift 3
apps=("$@")
[ ${#apps[@]} -gt 0 ] || apps=(demo qe nwchem lammps cp2k)
mkdir -p "$out"
out=$(cd "$out" && pwd)

openmpi_run() {  # DIR COMMAND...
  local dir=$1
  shift
  (cd "$dir" && mpirun.openmpi --oversubscribe --allow-run-as-root -np 2 \
    -x OMP_NUM_THREADS=1 -x TREMOR_OUTPUT_DIR="$dir" -x TREMOR_LOG_LEVEL=debug \
    -x LD_PRELOAD="$openmpi_build/interpose/libtremor-openmpi.so" "$@" >app.log 2>finalize.log)
}

for app in "${apps[@]}"; do
  dir="$out/$app"
  rm -rf "$dir"
  mkdir -p "$dir"
  case $app in
    demo)
      (cd "$dir" && env TREMOR_OUTPUT_DIR="$dir" TREMOR_LOG_LEVEL=debug \
        TREMOR_INJECT_MEAN_US=15000 TREMOR_INJECT_SD_US=5000 TREMOR_INJECT_PROBABILITY=0.1 \
        TREMOR_INJECT_CALLS=posix TREMOR_INJECT_RANKS=1 TREMOR_INJECT_SEED=7 \
        LD_PRELOAD="$mpich_build/interpose/libtremor-mpich.so $mpich_build/injector/libtremor-inject-mpich.so" \
        mpiexec.mpich -n 2 "$mpich_build/test/integration/bsp_demo" -n 300 -u 2000 -k 10 -t >app.log 2>finalize.log) ;;
    qe)
      cp "$top/validation/campaigns/apps/qe_si/"* "$dir/"
      # The deck's pseudopotential (pseudo_dir './'): Debian's quantum-espresso-data
      # copy when installed, else the one kept in the repository.
      packed=/usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz
      if [ ! -f "$dir/Si.pz-vbc.UPF" ]; then
        if [ -f "$packed" ]; then zcat "$packed" >"$dir/Si.pz-vbc.UPF"; else cp "$top/scripts/campaigns/apps/qe_si/Si.pz-vbc.UPF" "$dir/"; fi
      fi
      openmpi_run "$dir" pw.x -in si.scf.in ;;
    nwchem)
      cp "$here/water.nw" "$dir/"
      mkdir -p "$dir/scratch" "$dir/perm"
      openmpi_run "$dir" nwchem water.nw ;;
    lammps)
      cp "$here/in.melt" "$dir/"
      openmpi_run "$dir" lmp -in in.melt ;;
    cp2k)
      cp "$here/cp2k_h2o.inp" "$dir/"
      openmpi_run "$dir" cp2k.psmp -i cp2k_h2o.inp ;;
    *) echo "unknown application $app" >&2; exit 2 ;;
  esac
  echo "$app: $(ls "$dir"/*.h5)"
done
