// Input of lower-groups-to-sched.mlir: phase 0 is local but lists barrier groups.
"builtin.module"() ({
  "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "direct", src = "A", dst = "B", nprocs = 2 : i64, line = 5 : i64, stage = -1 : i64, phase_sync = ["local"], send_offsets = array<i64: 0, 2>, sends = array<i64: 0, 1, 16, 0, 1, 0, -1, 1, 0, 16, 1, 0, 0, -1>, recv_offsets = array<i64: 0, 2>, recvs = array<i64: 0, 1, 16, 0, 1, 0, -1, 1, 0, 16, 1, 0, 0, -1>, barrier_offsets = array<i64: 0, 1>, barrier_sizes = array<i64: 2>, barrier_members = array<i64: 0, 1>} : () -> ()
}) : () -> ()
