// Input of verify-schedule.mlir: processor 1's send to 0 in phase 1 has no receive.
"builtin.module"() ({
  "sched.schedule"() {collective = 0 : i64, kind = "sparse", algorithm = "direct", src = "A", dst = "B", nprocs = 2 : i64, line = 5 : i64, stage = -1 : i64, phase_sync = ["local", "barrier"], send_offsets = array<i64: 0, 1, 2>, sends = array<i64: 0, 1, 16, 0, 1, 0, -1, 1, 0, 16, 1, 0, 0, -1>, recv_offsets = array<i64: 0, 1, 1>, recvs = array<i64: 0, 1, 16, 0, 1, 0, -1>, barrier_offsets = array<i64: 0, 0, 0>, barrier_sizes = array<i64>, barrier_members = array<i64>} : () -> ()
}) : () -> ()
