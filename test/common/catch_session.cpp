// Catch2's implementation, without a main, compiled once and linked into
// every unit-test program (tremor_catch_session). Case names are listed on one
// line however long they are: catch_discover_tests reads that list, and a name
// wrapped at the console width would become two CTest entries.
#define CATCH_CONFIG_CONSOLE_WIDTH 200
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_session.hpp"

int run_catch_session(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
