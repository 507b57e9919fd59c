// Runs the Catch2 session of a unit-test program. Catch2's implementation
// (catch_session.cpp, the tremor_catch_session object library) is compiled
// once for all of them; Catch::Session itself is only declared there.
#pragma once

int run_catch_session(int argc, char* argv[]);
