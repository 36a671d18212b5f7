"""--profile and --rank-map, the same in every mode (docs/placement.md):
validate() for options.validate and slurm_options.validate, rank_env() for
the ranks' environment (mpirun.build, slurm_srun.rank_env)."""

from . import profile, rank_map
from .errors import UsageError


def validate(o):
    """The profile's path made absolute and checked, the rank map read, and
    -x/-y taken from the map or checked against it; UsageError/Fatal."""
    if o.profile:
        o.profile = profile.resolve(o.profile)
    if not o.rank_map:
        return
    o.rank_map_sites = rank_map.read(o.rank_map)
    for flag, attr, cluster in (("-x", "np_low", 0), ("-y", "np_high", 1)):
        count = str(len(o.rank_map_sites[cluster]))
        given = getattr(o, attr)
        if not given:
            setattr(o, attr, count)
        elif given != count:
            raise UsageError(f"{flag} {given}, but the rank map {o.rank_map} puts {count} rank(s) "
                             f"in cluster {'AB'[cluster]}")
    rank_map.env_value(o.rank_map_sites)  # refused now when too long for the environment


def rank_env(o):
    """MMPI_PROFILE and MMPI_RANK_MAP for every rank."""
    env = {}
    if o.profile:
        env["MMPI_PROFILE"] = o.profile
    if o.rank_map_sites:
        env["MMPI_RANK_MAP"] = rank_map.env_value(o.rank_map_sites)
    return env
