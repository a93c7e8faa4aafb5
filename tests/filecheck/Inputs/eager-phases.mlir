"builtin.module"() ({
  "sched.compute"() {label = "k", first = 0 : i64, nprocs = 2 : i64, cost_s = 2.500000e-04 : f64, line = 4 : i64, stage = -1 : i64} : () -> ()
  "sched.schedule"() {collective = 0 : i64, kind = "alltoall", algorithm = "direct", src = "A", dst = "B", nprocs = 2 : i64, line = 5 : i64, stage = -1 : i64, phase_sync = ["eager", "local"], send_offsets = array<i64: 0, 2, 4>, sends = array<i64: 0, 0, 16, 0, 0, 0, -1, 1, 1, 16, 1, 1, 0, -1, 0, 1, 16, 0, 1, 0, -1, 1, 0, 16, 1, 0, 0, -1>, recv_offsets = array<i64: 0, 2, 4>, recvs = array<i64: 0, 0, 16, 0, 0, 0, -1, 1, 1, 16, 1, 1, 0, -1, 0, 1, 16, 0, 1, 0, -1, 1, 0, 16, 1, 0, 0, -1>, barrier_offsets = array<i64: 0, 0, 0>, barrier_sizes = array<i64>, barrier_members = array<i64>} : () -> ()
}) : () -> ()
