"""The one table of intercepted calls (docs/design.md: one table per concept).

Each MPI entry: (name, C parameter list, kind, byte rule). generate_wrappers.py
turns it into the profiler's PMPI wrappers and call-id enum, the injector's
MPI wrapper list and docs/intercepted_calls.md.

kind decides which feature a successful call increments:
  send / isend / recv / irecv / sendrecv   point-to-point (blocking / nonblocking)
  persistent_send / persistent_recv        *_init: remembered, counted at MPI_Start
  start / startall                         starts persistent requests
  complete                                 Wait*/Test*/Probe*/Cancel: time only
  boundary:<class> / coll:<class>          collectives; boundary ones close a segment
                                           when their communicator spans the world
  rma                                      one-sided
  io_open / io_close / io_read / io_write  MPI-IO
  time / io_time                           time only (no feature), inside MPI / inside I/O
  request_free / comm_free / type_free     time only; drop what is cached per handle
The byte rule is a C++ expression pair "sent ; received" evaluated after a
successful call with helpers from wrapper_support.hpp (type_bytes, sum_counts,
typed_sum, comm_size, comm_rank, is_root, in_place).

The kind also decides the injector's family (injector_family below), the
TREMOR_INJECT_CALLS group whose calls libtremor-inject may delay.
"""

BUF = "const void *buf, int count, MPI_Datatype datatype"
RBUF = "void *buf, int count, MPI_Datatype datatype"
P2P_BYTES = "type_bytes(count, datatype)"

MPI_CALLS = [
    # ---- point-to-point, blocking
    ("MPI_Send", f"{BUF}, int dest, int tag, MPI_Comm comm", "send", (P2P_BYTES, "0")),
    ("MPI_Ssend", f"{BUF}, int dest, int tag, MPI_Comm comm", "send", (P2P_BYTES, "0")),
    ("MPI_Bsend", f"{BUF}, int dest, int tag, MPI_Comm comm", "send", (P2P_BYTES, "0")),
    ("MPI_Rsend", f"{BUF}, int dest, int tag, MPI_Comm comm", "send", (P2P_BYTES, "0")),
    ("MPI_Recv", f"{RBUF}, int source, int tag, MPI_Comm comm, MPI_Status *status", "recv", ("0", "received_bytes(status, datatype)")),
    ("MPI_Sendrecv", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status",
     "sendrecv", ("type_bytes(sendcount, sendtype)", "received_bytes(status, recvtype)")),
    ("MPI_Sendrecv_replace", f"{RBUF}, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status",
     "sendrecv", (P2P_BYTES, "received_bytes(status, datatype)")),
    ("MPI_Mrecv", f"{RBUF}, MPI_Message *message, MPI_Status *status", "recv", ("0", "received_bytes(status, datatype)")),
    # ---- point-to-point, nonblocking
    ("MPI_Isend", f"{BUF}, int dest, int tag, MPI_Comm comm, MPI_Request *request", "isend", (P2P_BYTES, "0")),
    ("MPI_Issend", f"{BUF}, int dest, int tag, MPI_Comm comm, MPI_Request *request", "isend", (P2P_BYTES, "0")),
    ("MPI_Ibsend", f"{BUF}, int dest, int tag, MPI_Comm comm, MPI_Request *request", "isend", (P2P_BYTES, "0")),
    ("MPI_Irsend", f"{BUF}, int dest, int tag, MPI_Comm comm, MPI_Request *request", "isend", (P2P_BYTES, "0")),
    ("MPI_Irecv", f"{RBUF}, int source, int tag, MPI_Comm comm, MPI_Request *request", "irecv", ("0", P2P_BYTES)),
    ("MPI_Imrecv", f"{RBUF}, MPI_Message *message, MPI_Request *request", "irecv", ("0", P2P_BYTES)),
    # ---- persistent
    ("MPI_Send_init", f"{BUF}, int dest, int tag, MPI_Comm comm, MPI_Request *request", "persistent_send", (P2P_BYTES, "0")),
    ("MPI_Ssend_init", f"{BUF}, int dest, int tag, MPI_Comm comm, MPI_Request *request", "persistent_send", (P2P_BYTES, "0")),
    ("MPI_Bsend_init", f"{BUF}, int dest, int tag, MPI_Comm comm, MPI_Request *request", "persistent_send", (P2P_BYTES, "0")),
    ("MPI_Rsend_init", f"{BUF}, int dest, int tag, MPI_Comm comm, MPI_Request *request", "persistent_send", (P2P_BYTES, "0")),
    ("MPI_Recv_init", f"{RBUF}, int source, int tag, MPI_Comm comm, MPI_Request *request", "persistent_recv", ("0", P2P_BYTES)),
    ("MPI_Start", "MPI_Request *request", "start", None),
    ("MPI_Startall", "int count, MPI_Request array_of_requests[]", "startall", None),
    ("MPI_Request_free", "MPI_Request *request", "request_free", None),
    # ---- completion and probing: time only
    ("MPI_Wait", "MPI_Request *request, MPI_Status *status", "complete", None),
    ("MPI_Waitall", "int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]", "complete", None),
    ("MPI_Waitany", "int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status", "complete", None),
    ("MPI_Waitsome", "int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]", "complete", None),
    ("MPI_Test", "MPI_Request *request, int *flag, MPI_Status *status", "complete", None),
    ("MPI_Testall", "int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]", "complete", None),
    ("MPI_Testany", "int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status", "complete", None),
    ("MPI_Testsome", "int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]", "complete", None),
    ("MPI_Probe", "int source, int tag, MPI_Comm comm, MPI_Status *status", "complete", None),
    ("MPI_Iprobe", "int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status", "complete", None),
    ("MPI_Mprobe", "int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status", "complete", None),
    ("MPI_Improbe", "int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status", "complete", None),
    ("MPI_Cancel", "MPI_Request *request", "complete", None),
    # ---- collectives that can close a segment (when the communicator spans the world)
    ("MPI_Barrier", "MPI_Comm comm", "boundary:all_to_all", ("0", "0")),
    ("MPI_Allreduce", "const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm",
     "boundary:all_to_all", ("type_bytes(count, datatype)", "type_bytes(count, datatype)")),
    ("MPI_Allgather", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm",
     "boundary:all_to_all", ("in_place(sendbuf) ? 0 : type_bytes(sendcount, sendtype)", "type_bytes(recvcount, recvtype) * comm_size(comm)")),
    ("MPI_Allgatherv", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm",
     "boundary:all_to_all", ("in_place(sendbuf) ? 0 : type_bytes(sendcount, sendtype)", "type_bytes(sum_counts(recvcounts, comm_size(comm)), recvtype)")),
    ("MPI_Alltoall", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm",
     "boundary:all_to_all", ("in_place(sendbuf) ? 0 : type_bytes(sendcount, sendtype) * comm_size(comm)", "type_bytes(recvcount, recvtype) * comm_size(comm)")),
    ("MPI_Alltoallv", "const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm",
     "boundary:all_to_all", ("in_place(sendbuf) ? 0 : type_bytes(sum_counts(sendcounts, comm_size(comm)), sendtype)", "type_bytes(sum_counts(recvcounts, comm_size(comm)), recvtype)")),
    ("MPI_Alltoallw", "const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm",
     "boundary:all_to_all", ("in_place(sendbuf) ? 0 : typed_sum(sendcounts, sendtypes, comm_size(comm))", "typed_sum(recvcounts, recvtypes, comm_size(comm))")),
    ("MPI_Reduce_scatter", "const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm",
     "boundary:all_to_all", ("type_bytes(sum_counts(recvcounts, comm_size(comm)), datatype)", "type_bytes(recvcounts[comm_rank(comm)], datatype)")),
    ("MPI_Reduce_scatter_block", "const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm",
     "boundary:all_to_all", ("type_bytes(recvcount, datatype) * comm_size(comm)", "type_bytes(recvcount, datatype)")),
    # ---- other blocking collectives: features only
    ("MPI_Bcast", "void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm",
     "coll:one_to_all", ("is_root(root, comm) ? type_bytes(count, datatype) : 0", "is_root(root, comm) ? 0 : type_bytes(count, datatype)")),
    ("MPI_Scatter", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm",
     "coll:one_to_all", ("is_root(root, comm) ? type_bytes(sendcount, sendtype) * comm_size(comm) : 0", "in_place(recvbuf) || root == MPI_ROOT ? 0 : type_bytes(recvcount, recvtype)")),
    ("MPI_Scatterv", "const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm",
     "coll:one_to_all", ("is_root(root, comm) ? type_bytes(sum_counts(sendcounts, comm_size(comm)), sendtype) : 0", "in_place(recvbuf) || root == MPI_ROOT ? 0 : type_bytes(recvcount, recvtype)")),
    ("MPI_Reduce", "const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm",
     "coll:all_to_one", ("root == MPI_ROOT ? 0 : type_bytes(count, datatype)", "is_root(root, comm) ? type_bytes(count, datatype) : 0")),
    ("MPI_Gather", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm",
     "coll:all_to_one", ("in_place(sendbuf) || root == MPI_ROOT ? 0 : type_bytes(sendcount, sendtype)", "is_root(root, comm) ? type_bytes(recvcount, recvtype) * comm_size(comm) : 0")),
    ("MPI_Gatherv", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm",
     "coll:all_to_one", ("in_place(sendbuf) || root == MPI_ROOT ? 0 : type_bytes(sendcount, sendtype)", "is_root(root, comm) ? type_bytes(sum_counts(recvcounts, comm_size(comm)), recvtype) : 0")),
    ("MPI_Scan", "const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm",
     "coll:all_to_all", ("type_bytes(count, datatype)", "type_bytes(count, datatype)")),
    ("MPI_Exscan", "const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm",
     "coll:all_to_all", ("type_bytes(count, datatype)", "type_bytes(count, datatype)")),
    # ---- nonblocking collectives: features only, never boundaries
    ("MPI_Ibarrier", "MPI_Comm comm, MPI_Request *request", "coll:all_to_all", ("0", "0")),
    ("MPI_Ibcast", "void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request",
     "coll:one_to_all", ("is_root(root, comm) ? type_bytes(count, datatype) : 0", "is_root(root, comm) ? 0 : type_bytes(count, datatype)")),
    ("MPI_Iallreduce", "const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("type_bytes(count, datatype)", "type_bytes(count, datatype)")),
    ("MPI_Ireduce", "const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_one", ("root == MPI_ROOT ? 0 : type_bytes(count, datatype)", "is_root(root, comm) ? type_bytes(count, datatype) : 0")),
    ("MPI_Iallgather", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("in_place(sendbuf) ? 0 : type_bytes(sendcount, sendtype)", "type_bytes(recvcount, recvtype) * comm_size(comm)")),
    ("MPI_Iallgatherv", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("in_place(sendbuf) ? 0 : type_bytes(sendcount, sendtype)", "type_bytes(sum_counts(recvcounts, comm_size(comm)), recvtype)")),
    ("MPI_Ialltoall", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("in_place(sendbuf) ? 0 : type_bytes(sendcount, sendtype) * comm_size(comm)", "type_bytes(recvcount, recvtype) * comm_size(comm)")),
    ("MPI_Ialltoallv", "const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("in_place(sendbuf) ? 0 : type_bytes(sum_counts(sendcounts, comm_size(comm)), sendtype)", "type_bytes(sum_counts(recvcounts, comm_size(comm)), recvtype)")),
    ("MPI_Igather", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_one", ("in_place(sendbuf) || root == MPI_ROOT ? 0 : type_bytes(sendcount, sendtype)", "is_root(root, comm) ? type_bytes(recvcount, recvtype) * comm_size(comm) : 0")),
    ("MPI_Iscatter", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request",
     "coll:one_to_all", ("is_root(root, comm) ? type_bytes(sendcount, sendtype) * comm_size(comm) : 0", "in_place(recvbuf) || root == MPI_ROOT ? 0 : type_bytes(recvcount, recvtype)")),
    ("MPI_Ireduce_scatter_block", "const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("type_bytes(recvcount, datatype) * comm_size(comm)", "type_bytes(recvcount, datatype)")),
    ("MPI_Iscan", "const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("type_bytes(count, datatype)", "type_bytes(count, datatype)")),
    ("MPI_Igatherv", "const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_one", ("in_place(sendbuf) || root == MPI_ROOT ? 0 : type_bytes(sendcount, sendtype)", "is_root(root, comm) ? type_bytes(sum_counts(recvcounts, comm_size(comm)), recvtype) : 0")),
    ("MPI_Iscatterv", "const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request",
     "coll:one_to_all", ("is_root(root, comm) ? type_bytes(sum_counts(sendcounts, comm_size(comm)), sendtype) : 0", "in_place(recvbuf) || root == MPI_ROOT ? 0 : type_bytes(recvcount, recvtype)")),
    ("MPI_Ialltoallw", "const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("in_place(sendbuf) ? 0 : typed_sum(sendcounts, sendtypes, comm_size(comm))", "typed_sum(recvcounts, recvtypes, comm_size(comm))")),
    ("MPI_Ireduce_scatter", "const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("type_bytes(sum_counts(recvcounts, comm_size(comm)), datatype)", "type_bytes(recvcounts[comm_rank(comm)], datatype)")),
    ("MPI_Iexscan", "const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request",
     "coll:all_to_all", ("type_bytes(count, datatype)", "type_bytes(count, datatype)")),
    # ---- one-sided
    ("MPI_Put", "const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win",
     "rma", ("type_bytes(origin_count, origin_datatype)", "0")),
    ("MPI_Get", "void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win",
     "rma", ("0", "type_bytes(origin_count, origin_datatype)")),
    ("MPI_Accumulate", "const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win",
     "rma", ("type_bytes(origin_count, origin_datatype)", "0")),
    ("MPI_Get_accumulate", "const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win",
     "rma", ("type_bytes(origin_count, origin_datatype)", "type_bytes(result_count, result_datatype)")),
    ("MPI_Fetch_and_op", "const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win",
     "rma", ("type_bytes(1, datatype)", "type_bytes(1, datatype)")),
    ("MPI_Compare_and_swap", "const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win",
     "rma", ("type_bytes(1, datatype)", "type_bytes(1, datatype)")),
    ("MPI_Rput", "const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request",
     "rma", ("type_bytes(origin_count, origin_datatype)", "0")),
    ("MPI_Rget", "void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request",
     "rma", ("0", "type_bytes(origin_count, origin_datatype)")),
    ("MPI_Win_fence", "int assert, MPI_Win win", "rma", ("0", "0")),
    ("MPI_Win_flush", "int rank, MPI_Win win", "rma", ("0", "0")),
    ("MPI_Win_flush_all", "MPI_Win win", "rma", ("0", "0")),
    ("MPI_Win_flush_local", "int rank, MPI_Win win", "rma", ("0", "0")),
    ("MPI_Win_flush_local_all", "MPI_Win win", "rma", ("0", "0")),
    ("MPI_Win_lock", "int lock_type, int rank, int assert, MPI_Win win", "rma", ("0", "0")),
    ("MPI_Win_unlock", "int rank, MPI_Win win", "rma", ("0", "0")),
    ("MPI_Win_lock_all", "int assert, MPI_Win win", "rma", ("0", "0")),
    ("MPI_Win_unlock_all", "MPI_Win win", "rma", ("0", "0")),
    # ---- MPI-IO
    ("MPI_File_open", "MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh", "io_open", ("0", "0")),
    ("MPI_File_close", "MPI_File *fh", "io_close", ("0", "0")),
]

# MPI-IO data access: every variant shares one shape, so they are listed by suffix.
_IO_READ = [("read", ""), ("read_all", ""), ("read_shared", ""), ("read_ordered", ""),
            ("read_at", "MPI_Offset offset, "), ("read_at_all", "MPI_Offset offset, ")]
for suffix, offset in _IO_READ:
    MPI_CALLS.append((f"MPI_File_{suffix}", f"MPI_File fh, {offset}void *buf, int count, MPI_Datatype datatype, MPI_Status *status",
                      "io_read", ("0", "type_bytes(count, datatype)")))
    MPI_CALLS.append((f"MPI_File_{suffix.replace('read', 'write')}", f"MPI_File fh, {offset}const void *buf, int count, MPI_Datatype datatype, MPI_Status *status",
                      "io_write", ("type_bytes(count, datatype)", "0")))
for suffix, offset in [("iread", ""), ("iread_shared", ""), ("iread_at", "MPI_Offset offset, "),
                       ("iread_all", ""), ("iread_at_all", "MPI_Offset offset, ")]:
    MPI_CALLS.append((f"MPI_File_{suffix}", f"MPI_File fh, {offset}void *buf, int count, MPI_Datatype datatype, MPI_Request *request",
                      "io_read", ("0", "type_bytes(count, datatype)")))
    MPI_CALLS.append((f"MPI_File_{suffix.replace('read', 'write')}", f"MPI_File fh, {offset}const void *buf, int count, MPI_Datatype datatype, MPI_Request *request",
                      "io_write", ("type_bytes(count, datatype)", "0")))
for suffix in ("read_all_begin", "read_ordered_begin"):
    MPI_CALLS.append((f"MPI_File_{suffix}", "MPI_File fh, void *buf, int count, MPI_Datatype datatype",
                      "io_read", ("0", "type_bytes(count, datatype)")))
    MPI_CALLS.append((f"MPI_File_{suffix.replace('read', 'write')}", "MPI_File fh, const void *buf, int count, MPI_Datatype datatype",
                      "io_write", ("type_bytes(count, datatype)", "0")))
MPI_CALLS.append(("MPI_File_read_at_all_begin", "MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype", "io_read", ("0", "type_bytes(count, datatype)")))
MPI_CALLS.append(("MPI_File_write_at_all_begin", "MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype", "io_write", ("type_bytes(count, datatype)", "0")))
for suffix in ("read_all_end", "read_ordered_end", "read_at_all_end"):
    MPI_CALLS.append((f"MPI_File_{suffix}", "MPI_File fh, void *buf, MPI_Status *status", "io_time", None))
    MPI_CALLS.append((f"MPI_File_{suffix.replace('read', 'write')}", "MPI_File fh, const void *buf, MPI_Status *status", "io_time", None))
MPI_CALLS += [
    ("MPI_File_sync", "MPI_File fh", "io_time", None),
    # Collective or file-level MPI-IO calls: timed as I/O, and the collectives
    # ROMIO makes inside them (on a duplicate of the file's communicator) are
    # nested, so they never look like the application's segment boundaries.
    ("MPI_File_set_size", "MPI_File fh, MPI_Offset size", "io_time", None),
    ("MPI_File_preallocate", "MPI_File fh, MPI_Offset size", "io_time", None),
    ("MPI_File_get_size", "MPI_File fh, MPI_Offset *size", "io_time", None),
    ("MPI_File_set_atomicity", "MPI_File fh, int flag", "io_time", None),
    ("MPI_File_seek", "MPI_File fh, MPI_Offset offset, int whence", "io_time", None),
    ("MPI_File_seek_shared", "MPI_File fh, MPI_Offset offset, int whence", "io_time", None),
    ("MPI_File_set_info", "MPI_File fh, MPI_Info info", "io_time", None),
    ("MPI_File_delete", "const char *filename, MPI_Info info", "io_time", None),
    ("MPI_File_set_view", "MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info", "io_time", None),
    # ---- communicator construction: time inside MPI only. Wrapped so that the
    # I/O Open MPI makes inside them (PMIx/event-fd reads and writes of 8 bytes in
    # MPI_Intercomm_create, test/coverage communicators test) is nested in an MPI
    # call and not counted as the application's file I/O.
    ("MPI_Comm_dup", "MPI_Comm comm, MPI_Comm *newcomm", "time", None),
    ("MPI_Comm_split", "MPI_Comm comm, int color, int key, MPI_Comm *newcomm", "time", None),
    ("MPI_Comm_create", "MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm", "time", None),
    ("MPI_Intercomm_create", "MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm", "time", None),
    ("MPI_Intercomm_merge", "MPI_Comm intercomm, int high, MPI_Comm *newintracomm", "time", None),
    # ---- communicator bookkeeping: decisions cached per communicator are dropped here
    ("MPI_Comm_free", "MPI_Comm *comm", "comm_free", None),
    ("MPI_Comm_disconnect", "MPI_Comm *comm", "comm_free", None),
    # ---- datatype bookkeeping: cached type sizes are dropped here
    ("MPI_Type_free", "MPI_Datatype *datatype", "type_free", None),
]


def injector_family(kind):
    """The TREMOR_INJECT_CALLS family under which libtremor-inject may delay a
    call of this kind, or None: handle bookkeeping and communicator
    construction move no data and, like MPI_Init/MPI_Finalize, are never delayed."""
    if kind in ("send", "isend", "recv", "irecv", "sendrecv", "persistent_send", "persistent_recv",
                "start", "startall", "complete"):
        return "p2p"
    if kind.startswith(("boundary:", "coll:")):
        return "coll"
    if kind == "rma":
        return "rma"
    if kind.startswith("io_"):
        return "mpiio"
    if kind in ("time", "request_free", "comm_free", "type_free"):
        return None
    raise ValueError(f"unknown kind {kind}")


# POSIX I/O: (name, return type, parameters, kind, bytes expression on success).
# Wrapped through dlsym(RTLD_NEXT); I/O issued inside MPI or Tremor is not counted.
POSIX_CALLS = [
    ("creat", "int", "const char *path, mode_t mode", "io_open", "0"),
    ("creat64", "int", "const char *path, mode_t mode", "io_open", "0"),
    ("close", "int", "int fd", "io_close", "0"),
    ("read", "ssize_t", "int fd, void *buf, size_t count", "io_read", "result"),
    ("write", "ssize_t", "int fd, const void *buf, size_t count", "io_write", "result"),
    ("pread", "ssize_t", "int fd, void *buf, size_t count, off_t offset", "io_read", "result"),
    ("pread64", "ssize_t", "int fd, void *buf, size_t count, off64_t offset", "io_read", "result"),
    ("pwrite", "ssize_t", "int fd, const void *buf, size_t count, off_t offset", "io_write", "result"),
    ("pwrite64", "ssize_t", "int fd, const void *buf, size_t count, off64_t offset", "io_write", "result"),
    ("readv", "ssize_t", "int fd, const struct iovec *iov, int iovcnt", "io_read", "result"),
    ("writev", "ssize_t", "int fd, const struct iovec *iov, int iovcnt", "io_write", "result"),
    ("fopen", "FILE *", "const char *path, const char *mode", "io_open", "0"),
    ("fopen64", "FILE *", "const char *path, const char *mode", "io_open", "0"),
    ("fclose", "int", "FILE *stream", "io_close", "0"),
    ("fread", "size_t", "void *ptr, size_t size, size_t nmemb, FILE *stream", "io_read", "result * size"),
    ("fwrite", "size_t", "const void *ptr, size_t size, size_t nmemb, FILE *stream", "io_write", "result * size"),
]
# The open family takes an optional mode (variadic): (name, fixed parameters). The
# profiler's wrappers are written out in posix_open.cpp; the injector's come from here.
POSIX_VARIADIC = [
    ("open", "const char *path, int flags"),
    ("open64", "const char *path, int flags"),
    ("openat", "int dirfd, const char *path, int flags"),
    ("openat64", "int dirfd, const char *path, int flags"),
]
