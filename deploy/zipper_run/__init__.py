"""zipper-run: launch one zipper MPI job as two mpirun jobs joined by zipperd.

The package behind deploy/zipper-run (see docs/launch-contract.md):
options (the command line), addresses (forwarder addresses), emulation
(namespaces, CPU pinning, cgroups), probe (is a listener a zipperd?),
zipperd (start and stop forwarders), mpirun (the two cluster commands),
supervise (run, forward signals, propagate the exit status), main.
"""
