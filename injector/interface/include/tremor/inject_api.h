/* C API of libtremor-inject for the Tremor profiler (and any other tool).
 *
 * The profiler must not link against the injector: at its MPI_Finalize it
 * looks the functions up with dlsym(RTLD_DEFAULT, "tremor_inject_record_count")
 * etc.; a NULL result means the injector is not loaded. Example:
 *
 *   typedef size_t (*count_fn)(void);
 *   count_fn count = (count_fn)dlsym(RTLD_DEFAULT, TREMOR_INJECT_RECORD_COUNT_SYMBOL);
 *
 * Call tremor_inject_suspend() before the profiler's own finalize-time MPI
 * traffic so that its gathers are not delayed; then copy the records.
 * tremor_inject_get_totals() gives this process's running totals (the
 * profiler's truth line). All functions are thread-safe and never fail loudly.
 *
 * The same records are written at MPI_Finalize, one CSV file per rank, to
 * $TREMOR_OUTPUT_DIR/tremor-inject_<program>_<job id or start time>_r<rank>_<pid>-<n>.csv
 * (created with O_CREAT|O_EXCL, never overwritten), header line:
 *   rank,sequence,time_s,call,requested_us,spent_us,segment,entered_s,returned_s,
 *   queued_entered_s,queued_returned_s
 * sequence = index of the eligible call on that rank (aligns ranks call by
 * call), -1 for a traced call that was not eligible; time_s, requested_us,
 * spent_us, call and segment as in the record below; entered_s and returned_s
 * = CLOCK_MONOTONIC seconds (one clock for every process of a node) when the
 * call entered the injector and when it returned; queued_entered_s and
 * queued_returned_s = the thread's run-queue delay so far (schedstat, empty
 * where the kernel does not report it) when the call was forwarded and when
 * it returned: what the machine's other processes took. With TREMOR_INJECT_TRACE the
 * file also holds every traced call that was not delayed (requested_us and
 * spent_us 0); the functions below see the delays only. A trailing
 * "# log full ..." line means the 2^20-row bound was reached and that rank
 * stopped injecting. Configuration: tremor/inject_config.hpp.
 *
 * The other direction: when the Tremor profiler is loaded too, it exports
 * tremor_current_segment() (found by dlsym as well), and each record keeps the
 * profiler's segment the delay fell in, so the truth is known per segment and
 * rank.
 */
#ifndef TREMOR_INJECT_API_H
#define TREMOR_INJECT_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One injected delay on this process. */
typedef struct tremor_inject_record {
  double time_s;       /* start of the delay, seconds since MPI_Init returned */
  double requested_us; /* delay drawn from the truncated Normal, microseconds */
  double spent_us;     /* delay actually spent (>= requested_us), microseconds */
  char call[32];       /* intercepted call, NUL-terminated, e.g. "MPI_Send", "write" */
  long long segment;   /* the profiler's segment on this process when the delay started, -1 without it */
} tremor_inject_record;

/* Number of delays injected so far on this process (traced calls not delayed are not counted). */
size_t tremor_inject_record_count(void);

/* Copies up to max records, oldest first, into out; returns how many. */
int tremor_inject_copy_records(tremor_inject_record* out, size_t max);

/* 1 while delays can still be injected on this process, otherwise 0. */
int tremor_inject_is_active(void);

/* Stops all further injection on this process (the log is kept). */
void tremor_inject_suspend(void);

/* This process's running totals of injected delays: every delay counted when
 * it is spent, so the totals equal the sums over the log's delayed rows (the
 * CSV file's spent_us and requested_us) even when the records are not copied.
 * Traced calls that were not delayed count nothing. */
typedef struct tremor_inject_totals {
  unsigned long long delays; /* number of delays */
  double requested_s;        /* sum of requested_us, seconds */
  double spent_s;            /* sum of spent_us, seconds: the time this process lost to planted delays */
} tremor_inject_totals;

/* Fills *out with the totals so far; returns 1, or 0 when out is NULL. */
int tremor_inject_get_totals(tremor_inject_totals* out);

#define TREMOR_INJECT_RECORD_COUNT_SYMBOL "tremor_inject_record_count"
#define TREMOR_INJECT_COPY_RECORDS_SYMBOL "tremor_inject_copy_records"
#define TREMOR_INJECT_IS_ACTIVE_SYMBOL "tremor_inject_is_active"
#define TREMOR_INJECT_SUSPEND_SYMBOL "tremor_inject_suspend"
#define TREMOR_INJECT_GET_TOTALS_SYMBOL "tremor_inject_get_totals"
/* Exported by the profiler: the index of the segment this process is in (the
 * number of boundaries it has closed), -1 before MPI_Init or after finalize. */
#define TREMOR_CURRENT_SEGMENT_SYMBOL "tremor_current_segment"

typedef size_t (*tremor_inject_record_count_fn)(void);
typedef int (*tremor_inject_copy_records_fn)(tremor_inject_record*, size_t);
typedef int (*tremor_inject_is_active_fn)(void);
typedef void (*tremor_inject_suspend_fn)(void);
typedef int (*tremor_inject_get_totals_fn)(tremor_inject_totals*);
typedef long long (*tremor_current_segment_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TREMOR_INJECT_API_H */
