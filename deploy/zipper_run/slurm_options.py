"""The command-line options of `zipper-run --slurm` (options.validate hands them here)."""

from . import addresses, placement_options
from .errors import UsageError
from .integers import is_posint, is_u64, is_uint

DEFAULT_WAIT = "300"


def validate(o):
    """Options of --slurm mode (called by options.validate); UsageError on misuse."""
    placement_options.validate(o)
    for name, v in (("-x/--np-low", o.np_low), ("-y/--np-high", o.np_high)):
        if v and not is_posint(v):
            raise UsageError(f"{name} must be a positive integer, got '{v}'")
    if not o.program:
        raise UsageError("no PROGRAM given (put it after '--')")
    for name, v in (("--timeout", o.timeout), ("--grace", o.grace)):
        if not is_uint(v):
            raise UsageError(f"{name} must be a whole number of seconds, got '{v}'")
    o.slurm_wait = o.slurm_wait or DEFAULT_WAIT
    if not is_posint(o.slurm_wait):
        raise UsageError(f"--slurm-wait must be a positive number of seconds, got '{o.slurm_wait}'")
    if not is_posint(o.zipperd_wait):
        raise UsageError(f"--zipperd-wait must be a positive integer, got '{o.zipperd_wait}'")
    if o.job_id and not is_u64(o.job_id):
        raise UsageError(f"--job-id must be a decimal u64, got '{o.job_id}'")
    for j in (o.slurm_job_a, o.slurm_job_b):
        if j and not is_posint(j):
            raise UsageError(f"--slurm-job-a/-b must be a Slurm job id, got '{j}'")
    if o.slurm_cancel_on_failure and not o.slurm_job_b:
        raise UsageError("--slurm-cancel-on-failure is for two allocations: give --slurm-job-b too")
    if (o.slurm_conf_a or o.slurm_job_a) and not o.slurm_job_b:
        raise UsageError("--slurm-job-a/--slurm-conf-a are for two allocations: give --slurm-job-b too")
    for bad, flag in ((o.hostfile_a or o.hostfile_b, "--hostfile-a/-b"), (o.zipper_host, "--zipper-host"),
                      (o.nodes_a or o.nodes_b, "--nodes-a/-b"), (o.zippers, "--zippers"),
                      (o.standalone, "--standalone"), (o.port, "--port")):
        if bad:
            raise UsageError(f"{flag} does not go with --slurm (Slurm gives the nodes, the site "
                             "configuration the bridge nodes)")
    if bool(o.forwarder_a) != bool(o.forwarder_b):
        raise UsageError("--forwarder-a and --forwarder-b go together")
    if o.forwarder_a:
        o.fwd_a = addresses.parse_list(o.forwarder_a)
        o.fwd_b = addresses.parse_list(o.forwarder_b)
        if not o.fwd_a or not o.fwd_b or len(o.fwd_a) != len(o.fwd_b):
            raise UsageError("--forwarder-a/-b must be lists of the same number of HOST:PORT")
    return o
