"""Bokhari's machines (seed 003_f18cb429ce0a4177.txt): Paragon, SP2, CS-2 and the hypercube."""
