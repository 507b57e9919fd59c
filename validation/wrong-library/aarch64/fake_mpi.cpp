// A stand-in for the program's MPI library: its PMPI_Send returns a sum that
// weighs each of its ten arguments differently (the last two travel on the
// stack on AArch64), so a forwarding entry that moved a register or the stack
// gives another number. Its MPI_Send must never be reached: the program finds
// the forwarding entries' MPI_Send first.
extern "C" int PMPI_Send(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9) {
  return a0 + 2 * a1 + 3 * a2 + 4 * a3 + 5 * a4 + 6 * a5 + 7 * a6 + 8 * a7 + 9 * a8 + 10 * a9;
}
extern "C" int MPI_Send(int, int, int, int, int, int, int, int, int, int) { return -1; }
