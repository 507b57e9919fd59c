// Catch2's main for the unit-test programs, listing each case name on one
// line however long it is: catch_discover_tests reads that list, and a name
// wrapped at the console width would become two CTest entries.
#define CATCH_CONFIG_CONSOLE_WIDTH 200
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
