-- Lmod modulefile for Tremor (docs/slurm.md): `module load tremor` puts the
-- tools on PATH and preloads the profiler into the jobs' MPI programs,
-- unless TREMOR_DISABLE=1 when the module is loaded (the library honours
-- TREMOR_DISABLE as well, for a job that sets it after loading the module).
-- The MPICH build; a site whose jobs run Open MPI names
-- libtremor-openmpi.so instead.
local root = "/opt/tremor"
local disable = os.getenv("TREMOR_DISABLE") or ""

whatis("Tremor: MPI interference profiler")
prepend_path("PATH", pathJoin(root, "bin"))
if disable == "" or disable == "0" then
  prepend_path("LD_PRELOAD", pathJoin(root, "lib", "libtremor-mpich.so"), " ")
end
