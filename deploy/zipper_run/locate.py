"""Finding zipper-run's helper programs (zipperd, zipper-netns-rsh, ...)."""

import os
import shutil

from .errors import Fatal


def find_bin(name, opt, envname, self_dir):
    """Locate a helper: option > environment variable > next to zipper-run > PATH.

    Returns the absolute resolved path, or None if it is not found at all.
    Raises Fatal if the one the user chose explicitly is unusable.
    """
    envval = os.environ.get(envname, "")
    if opt:
        p, src = opt, f"--{name}"
    elif envval:
        p, src = envval, f"${envname}"
    elif os.path.isfile(os.path.join(self_dir, name)) and os.access(os.path.join(self_dir, name), os.X_OK):
        p, src = os.path.join(self_dir, name), self_dir
    else:
        p = shutil.which(name)
        if not p:
            return None
        src = "PATH"
    if "/" not in p:
        found = shutil.which(p)
        if not found:
            raise Fatal(f"{name} (from {src}) not found in PATH")
        p = found
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        raise Fatal(f"{name}: '{p}' (from {src}) is not an executable file")
    return os.path.realpath(p)
