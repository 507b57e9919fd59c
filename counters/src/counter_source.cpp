// Choosing the counter source: parse TREMOR_COUNTERS, try each PAPI event in
// order on the opening thread, fall back to thread CPU time with reasons.
#include "tremor/counters/counter_source.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>
#include <optional>

#include <papi.h>

namespace tremor::counters {

// Builds sources; a struct so CounterSource can befriend it.
struct SourceFactory {
  static CounterSource papi(int event_code, std::uint32_t generation, std::string event, std::string unit) {
    CounterSource source;
    source.kind_ = CounterKind::papi;
    source.papi_event_code_ = event_code;
    source.papi_generation_ = generation;
    source.events_ = {std::move(event)};
    source.unit_ = std::move(unit);
    return source;
  }
  static CounterSource thread_cputime() {
    CounterSource source;
    source.events_ = {"CLOCK_THREAD_CPUTIME_ID"};
    return source;
  }
  static CounterSource thread_cputime_with_switch_records() {
    CounterSource source;
    source.events_ = {"CLOCK_THREAD_CPUTIME_ID", "PERF_RECORD_SWITCH"};
    source.clock_period_ns_ = clock_read_period_ns;
    source.tells_own_blocking_ = detail::preemption_is_flagged();
    return source;
  }
  static CounterSource thread_oncpu() {
    CounterSource source;
    source.kind_ = CounterKind::thread_oncpu;
    source.events_ = {"PERF_RECORD_SWITCH"};
    source.clock_period_ns_ = detail::never_read_clock;
    source.tells_own_blocking_ = detail::preemption_is_flagged();
    return source;
  }
};

std::string_view CounterSource::name() const noexcept { return to_string(kind_); }

namespace {

// PAPI copies names into fixed buffers; refuse anything that could not fit.
constexpr std::size_t max_event_name_length = PAPI_HUGE_STR_LEN - 1;
// Bounds the time spent on a silly spec; each try costs a few syscalls.
constexpr std::size_t max_events_tried = 32;

std::mutex papi_init_mutex;
bool papi_initialised = false;
// Every successful open gets its own generation, so threads notice a new source.
std::atomic<std::uint32_t> next_generation{1};

unsigned long calling_thread_id() { return static_cast<unsigned long>(pthread_self()); }

std::string papi_error(std::string_view step, int code) { return std::string(step) + ": " + PAPI_strerror(code); }

// Empty on success, otherwise why PAPI cannot be used at all.
std::string initialise_papi() {
  const std::lock_guard lock(papi_init_mutex);
  if (papi_initialised) return {};
  // The application may have initialised PAPI itself; share its instance.
  if (PAPI_is_initialized() == PAPI_NOT_INITED) {
    const int version = PAPI_library_init(PAPI_VER_CURRENT);
    if (version < 0) return papi_error("PAPI_library_init", version);
    if (version != PAPI_VER_CURRENT) return "PAPI_library_init: header and library versions differ";
  }
  if (const int rc = PAPI_thread_init(&calling_thread_id); rc != PAPI_OK) return papi_error("PAPI_thread_init", rc);
  papi_initialised = true;
  return {};
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

std::string unit_of(int event_code, const std::string& event) {
  PAPI_event_info_t info{};
  if (PAPI_get_event_info(event_code, &info) == PAPI_OK && info.units[0] != '\0') return info.units;
  if (event.starts_with("PAPI_") && event.ends_with("_INS")) return "instructions";
  return "count";
}

// Adds, starts and reads `event` in a scratch event set on this thread: the
// three steps a thread's lazy event set will repeat. Rejection reason on failure.
std::optional<std::string> try_event(const std::string& event, int& code_out) {
  if (event.size() > max_event_name_length)
    return "name longer than " + std::to_string(max_event_name_length) + " characters";
  int code = 0;
  if (const int rc = PAPI_event_name_to_code(event.c_str(), &code); rc != PAPI_OK)
    return papi_error("PAPI_event_name_to_code", rc);
  int event_set = PAPI_NULL;
  if (const int rc = PAPI_create_eventset(&event_set); rc != PAPI_OK) return papi_error("PAPI_create_eventset", rc);
  std::optional<std::string> reason;
  if (const int rc = PAPI_add_event(event_set, code); rc != PAPI_OK) {
    reason = papi_error("PAPI_add_event", rc);
  } else if (const int start_rc = PAPI_start(event_set); start_rc != PAPI_OK) {
    reason = papi_error("PAPI_start", start_rc);
  } else {
    long long value = 0;
    if (const int read_rc = PAPI_read(event_set, &value); read_rc != PAPI_OK) reason = papi_error("PAPI_read", read_rc);
    PAPI_stop(event_set, &value);
  }
  PAPI_cleanup_eventset(event_set);
  PAPI_destroy_eventset(&event_set);
  if (!reason) code_out = code;
  return reason;
}

std::string explain(const OpenedCounterSource& opened) {
  std::string text = "counter source: " + std::string(opened.source.name()) + " (" + opened.source.events().front() +
                     ", unit " + opened.source.unit() + ")";
  if (opened.rejections.empty()) return text;
  text += "; rejected: ";
  for (std::size_t i = 0; i < opened.rejections.size(); ++i) {
    if (i != 0) text += "; ";
    text += opened.rejections[i].event + " (" + opened.rejections[i].reason + ")";
  }
  return text;
}

// The fallback, with context-switch records between clock reads when allowed.
void choose_thread_cputime(OpenedCounterSource& opened, CounterOptions options, bool clock_every_read) {
  opened.source = SourceFactory::thread_cputime();
  if (clock_every_read) return;
  if (!options.switch_records) {
    opened.switch_records_note = "context-switch records off: more ranks than CPUs on this node";
  } else if (std::string reason = detail::probe_oncpu_source(); !reason.empty()) {
    opened.switch_records_note = "context-switch records unavailable (" + reason + ")";
  } else {
    opened.source = SourceFactory::thread_cputime_with_switch_records();
  }
}

OpenedCounterSource open_or_throw(std::string_view spec, CounterOptions options) {
  OpenedCounterSource opened;
  const std::vector<std::string> requested = parse_counter_spec(spec);
  std::string papi_unusable;
  bool papi_tried = false;
  bool chosen = false;
  bool oncpu_tried = false;
  bool clock_every_read = false;
  for (std::size_t i = 0; i < requested.size() && !chosen; ++i) {
    const std::string& event = requested[i];
    if (equals_ignoring_case(event, "cputime")) break;
    if (equals_ignoring_case(event, "cputime_syscall")) {
      clock_every_read = true;
      break;
    }
    // Only when named: it counts a VM's steal time as the thread's (see the header).
    if (equals_ignoring_case(event, "oncpu")) {
      if (oncpu_tried) continue;
      oncpu_tried = true;
      if (std::string reason = detail::probe_oncpu_source(); !reason.empty()) {
        opened.rejections.push_back({event, std::move(reason)});
        continue;
      }
      opened.source = SourceFactory::thread_oncpu();
      chosen = true;
      break;
    }
    if (i == max_events_tried) {
      opened.rejections.push_back(
          {event, "not tried: only the first " + std::to_string(max_events_tried) + " events are tried"});
      break;
    }
    if (!papi_tried) {
      papi_unusable = initialise_papi();
      papi_tried = true;
      if (papi_unusable.empty()) detail::release_calling_thread_event_set();
    }
    if (!papi_unusable.empty()) {
      opened.rejections.push_back({event, papi_unusable});
      continue;
    }
    int code = 0;
    if (std::optional<std::string> reason = try_event(event, code)) {
      opened.rejections.push_back({event, std::move(*reason)});
      continue;
    }
    const std::uint32_t generation = next_generation.fetch_add(1, std::memory_order_relaxed);
    opened.source = SourceFactory::papi(code, generation, event, unit_of(code, event));
    chosen = true;
  }
  if (!chosen) choose_thread_cputime(opened, options, clock_every_read);
  if (!opened.rejections.empty()) {
    opened.explanation = explain(opened);
  } else if (requested.empty()) {
    opened.explanation = explain(opened) + "; TREMOR_COUNTERS names no event";
  }
  return opened;
}

}  // namespace

std::vector<std::string> parse_counter_spec(std::string_view spec) {
  const auto is_blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  const auto trim = [&](std::string_view text) {
    while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    return text;
  };
  std::vector<std::string> items;
  std::string_view rest = spec;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (items.empty() && trim(spec).empty()) return parse_counter_spec(default_counter_spec);
  return items;
}

OpenedCounterSource open_counter_source(std::string_view spec, CounterOptions options) noexcept {
  try {
    return open_or_throw(spec, options);
  } catch (...) {
    // Only allocation can throw here; the default source needs none.
    OpenedCounterSource opened;
    try {
      opened.source = SourceFactory::thread_cputime();
      opened.explanation = "counter source: thread_cputime (could not evaluate TREMOR_COUNTERS: out of memory)";
    } catch (...) {
    }
    return opened;
  }
}

}  // namespace tremor::counters
