"""Backends beyond the built-in simulator: SimGrid (simgrid.py) and real MPI processes (mpi.py).

Both run the same compiled Plan as runtime/interpreter.py: simgrid.py on SimGrid's flow
model (docs/backends.md), mpi.py on Open MPI processes through mpi4py, moving real bytes.
"""
