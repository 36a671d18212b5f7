"""zipper-run: launch one zipper MPI job as two mpirun jobs joined by zipperd.

The package behind deploy/zipper-run and deploy/zipper-emulate (see
docs/launch-contract.md), one concept per module, each importing only the
ones below it (tests/launcher/test_zipper_run_units.py checks the order):

- small parts: errors (PROG, Fatal, say), shell_quote, integers, cpus,
  processes (signals, SIGTERM-then-SIGKILL, exit statuses), addresses
  (forwarder addresses), probe (is a listener a zipperd?), port_holder,
  locate (finding helper programs), version;
- the emulation: emulation_topology (names and addresses), emulation_shell,
  emulation_cgroups, emulation_lock, emulation_build (namespaces, bridges,
  shaping) and emulation_cli (zipper-emulate's command line); netns_rsh;
- a run: mpirun (the two cluster commands), site_keys, options (the command
  line), zipperd (start and stop forwarders), supervise (run, forward
  signals, propagate the exit status);
- --slurm: slurm_site (the site file), slurm_allocations (what Slurm
  gave), slurm_options, slurm_secrets (job secret, per-job host keys),
  slurm_plan (where the forwarders are), slurm_srun (the srun steps),
  slurm_bridge (the per-job zipperd step on a bridge node), slurm_launch;
- main.
"""
