"""The table of hostile inputs (issue: never overwrite, never hang, never print
nonsense). One row per case: the command it runs, the input it gets, the
expected exit status and a fragment of the one message expected on stderr.
run_hostile.py builds the inputs, runs every row of one command and checks
each one; see its docstring for the checks every row gets.

Rows of RUN_FILE_CASES are run for every command that reads run files
(analyze, analyze --json, analyze --check, compare as either file, plot):
one loader and one set of rules, so one expected answer.

Arguments: {input} is the hostile input, {run} a valid run file, {run2}
another valid run of the same program, {io_run} a valid run whose wide
prediction intervals reached below 0 s, {other_program} the valid run
relabelled as another program, {own_page}/{own_compare_page} a page the
command wrote before, {foreign} an existing file of the user's, {out} the
scratch output directory, {sample} a valid sample of maxima.
"""

# Exit statuses (estimators/cli/exit_codes.hpp; run_hostile.py checks they agree
# with `tremor config --markdown exit-codes` and scripts/tremor_plot/exit_codes.py).
OK, USAGE, BAD_INPUT, GATE, OUTPUT = 0, 1, 2, 3, 4

NOT_REGULAR = "does not exist or is not a regular file"
NOT_HDF5 = "is not an HDF5 file"

# (input, expected status, message fragment): run for every run-file command.
RUN_FILE_CASES = [
    ("missing", BAD_INPUT, NOT_REGULAR),
    ("directory", BAD_INPUT, NOT_REGULAR),
    ("fifo", BAD_INPUT, NOT_REGULAR),
    ("dev_zero", BAD_INPUT, NOT_REGULAR),
    ("empty_file", BAD_INPUT, NOT_HDF5),
    ("text_file", BAD_INPUT, NOT_HDF5),
    ("huge_sparse_file", BAD_INPUT, NOT_HDF5),
    ("truncated", BAD_INPUT, "truncated or corrupted"),
    ("flipped_header_byte", BAD_INPUT, "damaged: HDF5 cannot read its structure (incorrect metadata checksum"),
    ("not_a_run_file", BAD_INPUT, "no 'schema_version' attribute"),
    ("schema_version_99", BAD_INPUT, "unsupported schema version 99"),
    ("world_size_0", BAD_INPUT, "root attribute 'world_size' = 0"),
    ("node_count_0", BAD_INPUT, "root attribute 'node_count' = 0"),
    ("negative_run_time", BAD_INPUT, "root attribute 'run_time_s' = -5"),
    ("nan_start_time", BAD_INPUT, "root attribute 'start_time_unix' = nan"),
    ("no_detail", BAD_INPUT, "missing dataset '/detail/ranks'"),
    ("nan_duration", BAD_INPUT, "/segments/duration_s[7] = nan"),
    ("inf_duration", BAD_INPUT, "/segments/duration_s[7] = inf"),
    ("negative_duration", BAD_INPUT, "/segments/duration_s[7] = -0.25"),
    ("nan_upper_duration", BAD_INPUT, "/segments/duration_upper_s[3] = nan"),
    ("negative_io_time", BAD_INPUT, "/segments/io_time_s[2] = -1"),
    ("inf_bin", BAD_INPUT, "/bins/duration/value[0] = inf"),
    ("negative_bin", BAD_INPUT, "/bins/mpi_time/value[1] = -3"),
    ("late_rank_12345", BAD_INPUT, "/segments/late_rank[5] = 12345"),
    ("closing_call_out_of_range", BAD_INPUT, "/segments/closing_call[4] = 60000"),
    ("node_id_minus_1", BAD_INPUT, "/ranks/node_id[1] = -1"),
    ("rank_ids_swapped", BAD_INPUT, "/ranks/rank[0] = 1"),
    ("detail_rank_out_of_range", BAD_INPUT, "/detail/ranks[1] = 7"),
    ("negative_run_queue_delay", BAD_INPUT, "/ranks/run_queue_delay_s[0] = -2"),
    ("nan_total", BAD_INPUT, "/totals/io_time[1] = nan"),
    ("valid_copy", OK, ""),
]

# (command, arguments, expected status, message fragment[, check]): one row per case.
# A check names an extra predicate of run_hostile.py on the command's stdout.
CASES = [
    # analyze: every numeric option rejects NaN, infinities, out-of-range values and overflow.
    ("analyze", "{run} --mad-factor nan", USAGE, "--mad-factor: 'nan' is not a finite number"),
    ("analyze", "{run} --mad-factor inf", USAGE, "--mad-factor: 'inf' is not a finite number"),
    ("analyze", "{run} --mad-factor 1e999", USAGE, "--mad-factor: '1e999' is not a finite number"),
    ("analyze", "{run} --mad-factor 0", USAGE, "--mad-factor: '0' must be in (0, 100]"),
    ("analyze", "{run} --mad-factor 4x", USAGE, "--mad-factor: '4x' is not a number"),
    ("analyze", "{run} --cluster-threshold -0.1", USAGE, "--cluster-threshold: '-0.1' must be in (0, 10]"),
    ("analyze", "{run} --cluster-threshold nan", USAGE, "--cluster-threshold: 'nan' is not a finite number"),
    ("analyze", "{run} --min-group 99999999999999999999", USAGE, "--min-group: '99999999999999999999' is not a whole"),
    ("analyze", "{run} --min-group 2", USAGE, "--min-group: '2' is not a whole number in [3, 1000000]"),
    ("analyze", "{run} --min-group 5.5", USAGE, "--min-group: '5.5' is not a whole number"),
    ("analyze", "{run} --scales nan", USAGE, "--scales: 'nan' holds 'nan', which is not a finite number"),
    ("analyze", "{run} --scales 2,inf", USAGE, "holds 'inf', which is not a finite number"),
    ("analyze", "{run} --scales 1", USAGE, "holds '1', which must be in (1, 1e+09]"),
    ("analyze", "{run} --scales 2,,4", USAGE, "holds '', which is not a number"),
    ("analyze", "{run} --replicas 0", USAGE, "--replicas: '0' is not a whole number in [1, 1000000]"),
    ("analyze", "{run} --replicas -1", USAGE, "--replicas: '-1' is not a whole number"),
    ("analyze", "{run} --seed -1", USAGE, "--seed: '-1' is not a whole number in [0, 18446744073709551615]"),
    ("analyze", "{run} --seed 99999999999999999999999", USAGE, "--seed: '99999999999999999999999' is not a whole"),
    ("analyze", "{run} --seed 0x10", USAGE, "--seed: '0x10' is not a whole number"),
    ("analyze", "{run} --bins 0", USAGE, "--bins: '0' is not a whole number in [1, 65536]"),
    ("analyze", "{run} --bins inf", USAGE, "--bins: 'inf' is not a whole number"),
    ("analyze", "{run} --read-timeout 0", USAGE, "--read-timeout: '0' is not a whole number in [1, 86400]"),
    ("analyze", "{run} --fail-on extreme", USAGE, "--fail-on"),
    ("analyze", "{run} --no-such-option", USAGE, "--no-such-option"),
    ("analyze", "{run} {run2}", USAGE, "give one run file"),
    ("analyze", "--check {fifo} ", BAD_INPUT, NOT_REGULAR),
    ("analyze", "--recover {out}/nothing-here", BAD_INPUT, "spill"),
    ("analyze", "{run} --seed 18446744073709551615 --replicas 20", OK, "", "report_without_nan"),
    # A wide interval at 10^9 times the processes stops at 0 s.
    ("analyze", "{io_run} --scales 1e9 --replicas 200 --json", OK, "", "run_time_bounds_non_negative"),
    ("analyze", "{io_run} --scales 1e10", USAGE, "holds '1e10', which must be in (1, 1e+09]"),
    # compare: options, a list option that must not swallow the files, outputs.
    ("compare", "{run} {run2} --tolerance nan", USAGE, "--tolerance: 'nan' is not a finite number"),
    ("compare", "{run} {run2} --tolerance -1", USAGE, "--tolerance: '-1' must be in [0, 100]"),
    ("compare", "{run} {run2} --tolerance 101", USAGE, "--tolerance: '101' must be in [0, 100]"),
    ("compare", "{run} {run2} --mad-factor nan", USAGE, "--mad-factor: 'nan' is not a finite number"),
    ("compare", "{run} {run2} --seed -1", USAGE, "--seed: '-1' is not a whole number"),
    ("compare", "{run} {run2} --replicas 0", USAGE, "--replicas: '0' is not a whole number"),
    ("compare", "--scales 2 {run} {run2} --replicas 20", OK, "", "compare_has_two_runs"),
    ("compare", "{run}", USAGE, "give at least two run files"),
    ("compare", "", USAGE, "give at least two run files"),
    ("compare", "{run} {run2} --html {run}", OUTPUT, "is the input"),
    ("compare", "{run} {run2} --html {foreign}", OUTPUT, "is not a page this command wrote"),
    ("compare", "{run} {run2} --html {out}", OUTPUT, "is not a regular file"),
    ("compare", "{run} {run2} --html /dev/full", OUTPUT, "is not a regular file"),
    ("compare", "{run} {run2} --html {out}/no/such/dir/page.html --replicas 20", OUTPUT, "cannot write"),
    ("compare", "{run} {run2} --html {own_compare_page} --replicas 20", OK, "", "page_replaced"),
    ("compare", "{run} {run2} --html {out}/full.html --replicas 20 [fsize]", OUTPUT, "File too large",
     "nothing_half_written"),
    # Runs of another program: a warning and no intrinsic verdict.
    ("compare", "{run} {other_program} --replicas 20", OK, "", "different_program_no_verdict"),
    ("compare", "{run} {run2} --replicas 20", OK, "", "same_program_verdict"),
    # plot: the same rules as analyze (RUN_FILE_CASES), its outputs, its usage errors.
    ("plot", "{run} -o {run}", OUTPUT, "is the input"),
    ("plot", "{run} -o {foreign}", OUTPUT, "is not tremor-plot's own output"),
    ("plot", "{run} -o {out}", OUTPUT, "is not a regular file"),
    ("plot", "{run} -o /dev/full", OUTPUT, "is not a regular file"),
    ("plot", "{run} --png {foreign}", OUTPUT, "is not a directory"),
    ("plot", "{run} --png {foreign_png_dir}", OUTPUT, "timeline.png: it exists and is not tremor-plot's own"),
    ("plot", "{run} -o {own_page}", OK, "", "page_replaced"),
    ("plot", "{run_beside_page}", OUTPUT, "exists; name the output with -o"),
    ("plot", "{run} -o {out}/full.html [fsize]", OUTPUT, "File too large", "nothing_half_written"),
    ("plot", "{run} --bogus", USAGE, "unrecognized arguments: --bogus"),
    ("plot", "", USAGE, "the following arguments are required: run_file"),
    ("plot", "{run} [no tremor]", 127, "the tremor tool is not installed"),
    # fit and predict: sample files and their options.
    ("fit", "{fifo}", BAD_INPUT, "not a regular file"),
    ("fit", "/dev/zero", BAD_INPUT, "not a regular file"),
    ("fit", "{out}", BAD_INPUT, "not a regular file"),
    ("fit", "{out}/missing.txt", BAD_INPUT, "cannot open the file"),
    ("fit", "{nul_sample}", BAD_INPUT, "line longer than 4096 characters"),
    ("fit", "{sample} --method mle", USAGE, "--method"),
    ("predict", "{sample} --scales nan", USAGE, "--scales: 'nan' holds 'nan', which is not a finite number"),
    ("predict", "{sample} --scales -2", USAGE, "holds '-2', which must be in (0, 1e+12]"),
    ("predict", "{sample} --scales 2 --ci nan", USAGE, "--ci: 'nan' is not a finite number"),
    ("predict", "{sample} --ci 0", USAGE, "--ci: '0' must be in (0, 1]"),
    ("predict", "{sample} --ci 1.5", USAGE, "--ci: '1.5' must be in (0, 1]"),
    ("predict", "{sample} --replicas 0", USAGE, "--replicas: '0' is not a whole number"),
    ("predict", "{sample} --seed -1", USAGE, "--seed: '-1' is not a whole number"),
    ("predict", "{sample} --seed 99999999999999999999999", USAGE, "--seed: '99999999999999999999999'"),
    ("predict", "--scales 2 {sample}", OK, "", "predict_median_inside"),
    ("predict", "{fifo}", BAD_INPUT, "not a regular file"),
    ("predict", "/dev/zero", BAD_INPUT, "not a regular file"),
    # Huge values: the median stays inside its interval, or the command says the numbers overflow.
    ("predict", "{huge_sample} --scales 2,8 --method nonparametric", BAD_INPUT, "leaves the range of double precision numbers"),
    ("predict", "{huge_sample} --scales 2,8 --method pwm", BAD_INPUT, "leaves the range of double precision numbers"),
    ("predict", "{huge_sample} --scales 1e12 --method pwm", BAD_INPUT, "leaves the range of double precision numbers"),
    ("config", "--markdown nope", USAGE, "--markdown"),
]

# Settings of the profiler and the injector in a real MPI run (run_hostile.py
# --group profiler): (environment, message fragment on rank 0's stderr,
# whether the injector is preloaded too). The application's stdout and exit
# status must stay those of a run without Tremor, and the run must end.
SETTINGS_CASES = [
    ({"TREMOR_CONFIG": "{fifo}"}, "TREMOR_CONFIG='{fifo}' is not a regular file", False),
    ({"TREMOR_CONFIG": "/dev/zero"}, "TREMOR_CONFIG='/dev/zero' is not a regular file", False),
    ({"TREMOR_CONFIG": "{out}"}, "TREMOR_CONFIG='{out}' is not a regular file", False),
    ({"TREMOR_CONFIG": "{big_config}"}, "is larger than 1 MiB", False),
    ({"TREMOR_CONFIG": "{out}/missing.conf"}, "cannot be opened (No such file or directory)", False),
    ({"TREMOR_MAD_FACTOR": "nan"}, "TREMOR_MAD_FACTOR='nan' is not a number", False),
    ({"TREMOR_SCALES": "2,inf"}, "TREMOR_SCALES='2,inf' must be a comma-separated list", False),
    ({"TREMOR_SEED": "-1"}, "TREMOR_SEED='-1' must be a non-negative whole number", False),
    ({"TREMOR_SEED": "99999999999999999999999"}, "TREMOR_SEED='99999999999999999999999'", False),
    ({"TREMOR_MIN_GROUP": "99999999999999999999"}, "TREMOR_MIN_GROUP='99999999999999999999' is not a whole", False),
    # A list naming an unknown format: one line at MPI_Finalize, then the text report.
    ({"TREMOR_REPORT": "text,htm"}, "TREMOR_REPORT='text,htm' names an unknown format 'htm'", False),
    ({"TREMOR_REPORT": "TEXT"}, "TREMOR_REPORT='TEXT' must be a comma-separated list of report formats", False),
    ({"TREMOR_INJECT_MEAN_US": "500", "TREMOR_INJECT_RANKS": "99"},
     "TREMOR_INJECT_RANKS='99' names rank 99, but this run has 2 processes (ranks 0-1)", True),
    ({"TREMOR_INJECT_MEAN_US": "500", "TREMOR_INJECT_RANKS": "0-5"},
     "TREMOR_INJECT_RANKS='0-5' names rank 5", True),
    ({"TREMOR_INJECT_MEAN_US": "nan"}, "TREMOR_INJECT_MEAN_US='nan' is invalid", True),
    ({"TREMOR_INJECT_SEED": "-1", "TREMOR_INJECT_MEAN_US": "500"}, "TREMOR_INJECT_SEED='-1' is invalid", True),
    ({"TREMOR_INJECT_AFTER_S": "inf", "TREMOR_INJECT_MEAN_US": "500"}, "TREMOR_INJECT_AFTER_S='inf' is invalid",
     True),
]
