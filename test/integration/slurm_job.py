#!/usr/bin/env python3
"""A real single-host Slurm (issue 52): the test starts munged, slurmctld and
slurmd from a slurm.conf of its own in a temporary folder, submits with
sbatch the README's batch lines (the demo MPI program under Tremor with
mpiexec.mpich), with LD_PRELOAD set by the site's TaskProlog
(scripts/site/tremor-taskprolog.sh) and TREMOR_OUTPUT_DIR by the job, and
checks that the run file (/@job_*) and the JSON report ("job") carry the id
sbatch printed, the job's name, its user and node list. A second job with
TREMOR_DISABLE=1 must leave no run file. Every daemon it started is stopped,
also on failure.

The truth is sbatch's own answer and the slurm.conf written here, never
Tremor's output. A recorder that leaves the job out of the run file or the
report, takes another variable for a field, or ignores TREMOR_DISABLE fails.

It skips (capability no-slurm) only when the daemons cannot start: a
missing binary, no root (slurmd runs jobs as their user), munged refusing,
or slurmctld/slurmd exiting at start-up; it prints why.

usage: slurm_job.py --preload LIB --program BSP_DEMO --site-dir scripts/site
"""
import argparse
import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from tremor_testing import skip_for  # noqa: E402

JOB_NAME = "tremor-slurm-check"
DAEMONS = ["munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol"]


class DaemonsDidNotStart(Exception):
    """The machine cannot run the daemons: a skip, with the reason."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_tail(path, lines=8):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().splitlines()[-lines:])
    except OSError as error:
        return f"(no log: {error})"


def slurm_conf(tmp, host, site, epilog):
    """A one-node cluster in `tmp`, with the site's TaskProlog (and Epilog)."""
    epilog_line = f"Epilog={site}/tremor-epilog.sh\n" if epilog else ""
    return f"""ClusterName=tremortest
SlurmctldHost={host}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={tmp}/munge.socket
CredType=cred/munge
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmi2
ReturnToService=2
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
TaskProlog={site}/tremor-taskprolog.sh
{epilog_line}NodeName={host} CPUs=2 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


class Cluster:
    """munged, slurmctld and slurmd of one temporary folder; stop() ends
    each one this object started, by its process id."""

    def __init__(self, tmp, site, epilog):
        self.tmp = tmp
        self.processes = []
        self.host = socket.gethostname().split(".")[0]
        for folder in ("state", "spool"):
            os.makedirs(os.path.join(tmp, folder))
        self.conf = os.path.join(tmp, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(slurm_conf(tmp, self.host, site, epilog))
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for name in list(self.env):
            if name.startswith(("SLURM_", "SBATCH_", "TREMOR_")) and name != "SLURM_CONF":
                del self.env[name]

    def start(self):
        key = os.path.join(self.tmp, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.spawn("munged", ["munged", "--foreground", "--force", f"--key-file={key}",
                              f"--socket={self.tmp}/munge.socket", f"--pid-file={self.tmp}/munged.pid",
                              f"--log-file={self.tmp}/munged.log", f"--seed-file={self.tmp}/munged.seed"],
                   f"{self.tmp}/munged.log", ready=lambda: os.path.exists(f"{self.tmp}/munge.socket"))
        self.spawn("slurmctld", ["slurmctld", "-D", "-i"], f"{self.tmp}/slurmctld.log",
                   ready=lambda: self.query(["scontrol", "ping"]).returncode == 0)
        self.spawn("slurmd", ["slurmd", "-D"], f"{self.tmp}/slurmd.log", ready=self.node_idle)

    def spawn(self, name, command, log, ready, seconds=20):
        with open(os.path.join(self.tmp, name + ".out"), "w") as out:
            process = subprocess.Popen(command, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        self.processes.append(process)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise DaemonsDidNotStart(f"{name} exited with {process.returncode} at start-up: "
                                         f"{log_tail(os.path.join(self.tmp, name + '.out'))} {log_tail(log)}")
            if ready():
                return
            time.sleep(0.2)
        raise DaemonsDidNotStart(f"{name} not ready within {seconds} s: {log_tail(log)}")

    def query(self, command):
        return subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=20)

    def node_idle(self):
        state = self.query(["sinfo", "-h", "-n", self.host, "-o", "%t"]).stdout.strip()
        return state == "idle"

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def readme_srun_line(readme):
    """The README's Slurm line (`srun --export=ALL,LD_PRELOAD=… ./app args`): the test
    runs it as written, with the build's library and the demo for /opt/tremor/lib and ./app."""
    with open(readme) as f:
        lines = [line.strip() for line in f if line.strip().startswith("srun --export=ALL,LD_PRELOAD=")]
    if len(lines) != 1:
        raise AssertionError(f"README.md: expected one `srun --export=ALL,LD_PRELOAD=` line, found {lines}")
    return lines[0]


def batch_script(opts, out):
    """The job: the demo under mpiexec.mpich with LD_PRELOAD and TREMOR_OUTPUT_DIR
    from the TaskProlog, again with TREMOR_DISABLE=1, then the README's srun line."""
    demo = f"{opts.program} -n 40 -u 300 -b 64 -k 0 -q"
    srun = readme_srun_line(opts.readme).replace("/opt/tremor/lib/libtremor-mpich.so", opts.preload)
    srun = srun.replace("./app args", demo)
    return f"""#!/bin/bash
#SBATCH --job-name={JOB_NAME}
#SBATCH --ntasks=2
#SBATCH --output={out}/job.out
echo "from the TaskProlog: LD_PRELOAD=${{LD_PRELOAD:-}} TREMOR_OUTPUT_DIR=${{TREMOR_OUTPUT_DIR:-}}"
mpiexec.mpich -n 2 {demo} || exit 1
TREMOR_DISABLE=1 TREMOR_OUTPUT_DIR={out}/disabled mpiexec.mpich -n 2 {demo} 2> {out}/disabled.err || exit 2
export TREMOR_OUTPUT_DIR={out}/srun
env -u LD_PRELOAD {srun} || exit 3
"""


def site_folder(opts, tmp):
    """scripts/site's TaskProlog and epilog as a site installs them, beside a
    site.conf naming this build and folders in `tmp`."""
    site = os.path.join(tmp, "site")
    os.makedirs(site)
    for name in ("tremor-taskprolog.sh", "tremor-epilog.sh"):
        shutil.copy(os.path.join(opts.site_dir, name), site)
    runs = os.path.join(tmp, "runs")
    os.makedirs(runs)
    os.chmod(runs, 0o1777)
    with open(os.path.join(site, "site.conf"), "w") as f:
        f.write(f"libdir={os.path.dirname(opts.preload)}\nflavour=mpich\nruns_dir={runs}\n"
                f"fleet_db={tmp}/fleet.db\ntremor={opts.tremor}\nepilog_log={tmp}/epilog.log\n")
    return site, runs


def wait_for_job(cluster, job_id, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        shown = cluster.query(["scontrol", "-o", "show", "job", job_id]).stdout
        state = next((f.split("=", 1)[1] for f in shown.split() if f.startswith("JobState=")), "")
        if state and state not in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING"):
            return state, shown
        time.sleep(0.3)
    return "TIMEOUT", cluster.query(["scontrol", "-o", "show", "job", job_id]).stdout


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def check_run(folder, expected, failures):
    """The run file's /@job_* and the JSON report's "job" against the truth."""
    runs = glob.glob(os.path.join(folder, "*.h5"))
    if len(runs) != 1:
        failures.append(f"{folder}: expected one run file, found {runs}")
        return None
    with h5py.File(runs[0], "r") as f:
        stored = {"id": text(f.attrs.get("job_id")), "scheduler": text(f.attrs.get("job_scheduler")),
                  "name": text(f.attrs.get("job_name")), "user": text(f.attrs.get("job_user")),
                  "nodelist": text(f.attrs.get("job_nodelist"))}
        step = text(f.attrs.get("job_step"))
    with open(runs[0][:-3] + ".json") as f:
        job = json.load(f).get("job")
    for field, value in expected.items():
        if stored[field] != value:
            failures.append(f"{runs[0]}: /@job_{field} is {stored[field]!r}, the job's is {value!r}")
        if not isinstance(job, dict) or job.get(field) != value:
            failures.append(f"{runs[0][:-3]}.json: job.{field} is "
                            f"{job.get(field) if isinstance(job, dict) else job!r}, the job's is {value!r}")
    print(f"{os.path.basename(runs[0])}: job {json.dumps(job)}")
    # Each run is one step of the job (mpiexec's proxies are started by srun).
    if not (step or "").isdigit() or not isinstance(job, dict) or job.get("step") != step:
        failures.append(f"{runs[0]}: job step {step!r} / {job.get('step') if isinstance(job, dict) else None!r}")
    return step


def check_fleet(opts, tmp, cluster, job_id, step, failures):
    """The epilog indexed the job's folder: `tremor fleet show <node> --json`
    lists the run keyed slurm:<id> (.<step> where the step is known)."""
    shown = subprocess.run([opts.tremor, "fleet", "show", cluster.host, "--db", os.path.join(tmp, "fleet.db"),
                            "--json"], capture_output=True, text=True, timeout=30)
    epilog = log_tail(os.path.join(tmp, "epilog.log"))
    if shown.returncode != 0:
        failures.append(f"tremor fleet show {cluster.host}: exit {shown.returncode}: {shown.stderr.strip()[-400:]}; "
                        f"epilog log: {epilog}")
        return
    keys = [row.get("run") for row in json.loads(shown.stdout)]
    print(f"tremor fleet show {cluster.host}: runs {keys}")
    wanted = {f"slurm:{job_id}", f"slurm:{job_id}.{step}"}
    if not wanted.intersection(keys):
        failures.append(f"the epilog's index does not key the job as slurm:{job_id}: runs {keys}; epilog log: {epilog}")


def run_checks(opts, cluster, tmp, runs):
    out = os.path.join(tmp, "job")
    for folder in ("disabled", "srun"):
        os.makedirs(os.path.join(out, folder))
    script = os.path.join(tmp, "job.sh")
    with open(script, "w") as f:
        f.write(batch_script(opts, out))
    submit_env = {k: v for k, v in cluster.env.items() if k != "LD_PRELOAD"}
    submitted = subprocess.run(["sbatch", "--parsable", script], env=submit_env, capture_output=True, text=True,
                               timeout=30, cwd=tmp)
    if submitted.returncode != 0:
        return [f"sbatch failed ({submitted.returncode}): {submitted.stderr.strip()}"]
    job_id = submitted.stdout.strip().split(";")[0]
    state, shown = wait_for_job(cluster, job_id, opts.timeout)
    failures = []
    if state != "COMPLETED":
        return [f"job {job_id} ended {state}: {shown.strip()[:600]}; output: "
                f"{log_tail(os.path.join(out, 'job.out'), 30)}"]
    with open(os.path.join(out, "job.out"), errors="replace") as f:
        said = f.readline().strip()
    prolog_said = f"from the TaskProlog: LD_PRELOAD={opts.preload} TREMOR_OUTPUT_DIR={runs}/{job_id}"
    if said != prolog_said:
        failures.append(f"the TaskProlog did not set LD_PRELOAD and TREMOR_OUTPUT_DIR: the job said {said!r}, "
                        f"expected {prolog_said!r}")
    expected = {"id": job_id, "scheduler": "slurm", "name": JOB_NAME, "user": pwd.getpwuid(os.getuid()).pw_name,
                "nodelist": cluster.host}
    step = check_run(os.path.join(runs, job_id), expected, failures)
    check_run(os.path.join(out, "srun"), expected, failures)
    left = os.listdir(os.path.join(out, "disabled"))
    if left:
        failures.append(f"TREMOR_DISABLE=1 left files: {left}")
    with open(os.path.join(out, "disabled.err")) as f:
        said = [line for line in f if "tremor" in line.lower()]
    if said:
        failures.append(f"TREMOR_DISABLE=1: Tremor still printed {said[:3]}")
    if opts.fleet:
        check_fleet(opts, tmp, cluster, job_id, step, failures)
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--preload", required=True, help="the build's libtremor-mpich.so")
    parser.add_argument("--program", required=True, help="the demo program (bsp_demo)")
    parser.add_argument("--site-dir", required=True, help="scripts/site")
    parser.add_argument("--readme", required=True, help="README.md, whose srun line the job runs")
    parser.add_argument("--tremor", required=True, help="the tremor tool (the epilog's tremor fleet index)")
    parser.add_argument("--fleet", action="store_true", help="run the site's epilog and check the fleet database")
    parser.add_argument("--timeout", type=float, default=45.0, help="seconds the job may take")
    opts = parser.parse_args()
    missing = [name for name in DAEMONS + ["mpiexec.mpich"] if shutil.which(name) is None]
    if missing:
        skip_for("no-slurm", f"not installed: {', '.join(missing)} (scripts/install-deps.sh --tests)")
    if os.geteuid() != 0:
        skip_for("no-slurm", "needs root: slurmd starts the job's processes as the job's user")
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="tremor-slurm-")
    os.chmod(tmp, 0o755)
    site, runs = site_folder(opts, tmp)
    cluster = Cluster(tmp, site, opts.fleet)
    try:
        try:
            cluster.start()
        except DaemonsDidNotStart as why:
            cluster.stop()
            skip_for("no-slurm", str(why))
        failures = run_checks(opts, cluster, tmp, runs)
    finally:
        cluster.stop()
    if failures:
        print("FAILED (daemon logs kept in " + tmp + "):")
        for failure in failures:
            print("  " + failure)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"slurm job checks passed in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
