// The main of the unit-test programs (Catch2's implementation: catch_session.cpp).
#include "catch_session.hpp"

int main(int argc, char* argv[]) { return run_catch_session(argc, argv); }
