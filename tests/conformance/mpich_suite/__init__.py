"""The MPICH test suite (test/mpi) run natively and across the clusters through
zipper (zipper-run --local --transparent): testlist parsing, building with
plain mpicc in a copy, running, and the per-directory tables."""
