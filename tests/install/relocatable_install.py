#!/usr/bin/env python3
"""Relocatable install: install the build into a prefix that is
neither /usr nor /usr/local, move the whole prefix elsewhere, and use it from
a clean environment (env -i: no LD_LIBRARY_PATH, PATH without the prefix):

- every installed ELF program and library has a RUNPATH relative to itself
  ($ORIGIN...) and no absolute one;
- a C program built with PREFIX/bin/mmpicc, with mpicc + pkg-config, with
  CMake find_package(mmpi); a Fortran program with PREFIX/bin/mmpif90 and with
  the documented mpif90 line under -Wl,--as-needed; each run 1+1 by the
  installed zipper-run --local, every rank's answer checked;
- MMPI_MPICC / MMPI_MPIF90 still choose the underlying wrapper;
- PREFIX/bin/zipper-tune --help, and the installed osu_latency run 1+1.

  relocatable_install.py BUILD_DIR SOURCE_DIR
Exit 0 on success, 77 (skipped) without pkg-config / mpif90, 1 with the reason.
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

PORT = 7493  # its own, so that it never meets another test's zipperd


def run(cmd, env, cwd, timeout=300, check=True):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def check_runpaths(prefix, env):
    problems, n = [], 0
    for d in ("bin", "lib", "libexec"):
        for root, _, files in os.walk(os.path.join(prefix, d)):
            for f in files:
                p = os.path.join(root, f)
                if os.path.islink(p) or not elf(p) or p.endswith(".a"):
                    continue
                out = run(["readelf", "-d", p], env, prefix).stdout
                rpaths = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines()
                          if "(RUNPATH)" in line or "(RPATH)" in line]
                needs_mmpi = "libmmpi" in out
                n += 1
                if "(RPATH)" in out:
                    problems.append(f"{p}: RPATH instead of RUNPATH")
                if needs_mmpi and not any(r.startswith("$ORIGIN") for r in rpaths):
                    problems.append(f"{p}: needs libmmpi but has no $ORIGIN RUNPATH ({rpaths})")
                for r in rpaths:
                    for part in r.split(":"):
                        if not part.startswith("$ORIGIN"):
                            problems.append(f"{p}: absolute RUNPATH entry {part}")
    if problems:
        raise SystemExit("FAIL: " + "\n".join(problems))
    print(f"RUNPATH: {n} ELF files, each relative ($ORIGIN) where it needs libmmpi")


def job(prefix, prog, env, cwd, expect):
    """Runs prog 1+1 with the installed zipper-run --local; checks each rank's line."""
    r = run([os.path.join(prefix, "bin", "zipper-run"), "--local", "--port", str(PORT),
             "-x", "1", "-y", "1", "--timeout", "120", "--", prog], env, cwd)
    for rank, got in ((0, 1007), (1, 7)):
        line = f"{expect} rank {rank} of 2 got {got}"
        if line not in r.stdout:
            raise SystemExit(f"FAIL: {prog}: no '{line}'\n{r.stdout}{r.stderr}")
    print(f"ran 1+1: {os.path.basename(prog)}")


def main():
    build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    here = os.path.join(src, "tests", "install")
    for tool in ("pkg-config", "mpicc", "readelf", "cmake"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not installed")
            return 77
    have_fortran = shutil.which("mpif90") is not None and shutil.which("gfortran") is not None
    with tempfile.TemporaryDirectory(prefix="zipper-prefix.") as tmp:
        first = os.path.join(tmp, "opt", "zipper", "0.1")
        clean = {"PATH": "/usr/bin:/bin", "HOME": tmp, "OMPI_ALLOW_RUN_AS_ROOT": "1",
                 "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "TMPDIR": tmp}
        run(["cmake", "--install", build, "--prefix", first], dict(os.environ), tmp)
        # Move it: nothing may depend on the path it was installed to.
        prefix = os.path.join(tmp, "moved", "zipper 0.1")
        os.makedirs(os.path.dirname(prefix))
        os.rename(first, prefix)
        print(f"installed, then moved to '{prefix}'")
        check_runpaths(prefix, clean)
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        shutil.copy(os.path.join(here, "hello.c"), work)
        shutil.copy(os.path.join(here, "hello.f90"), work)
        b = os.path.join(prefix, "bin")
        libdir = run(["pkg-config", "--variable=libdir", "mmpi"],
                     dict(clean, PKG_CONFIG_PATH=""), work, check=False)
        if libdir.returncode == 0:
            raise SystemExit("FAIL: pkg-config finds an mmpi outside the prefix")
        pc_dirs = [os.path.join(r, d) for r, ds, _ in os.walk(prefix) for d in ds
                   if d == "pkgconfig"]
        pc_env = dict(clean, PKG_CONFIG_PATH=":".join(pc_dirs))
        # C: the wrapper, pkg-config, CMake.
        run([os.path.join(b, "mmpicc"), "-O2", "hello.c", "-o", "hello_mmpicc"], clean, work)
        flags = shlex.split(run(["pkg-config", "--cflags", "--libs", "mmpi"], pc_env, work).stdout)
        lib = shlex.split(run(["pkg-config", "--variable=libdir", "mmpi"], pc_env, work).stdout)[0]
        run(["mpicc", "hello.c", "-o", "hello_pkgconfig", *flags, f"-Wl,-rpath,{lib}"], pc_env,
            work)
        run(["cmake", "-S", os.path.join(here, "user_project"), "-B", "cm",
             f"-DCMAKE_PREFIX_PATH={prefix}"], clean, work)
        run(["cmake", "--build", "cm"], clean, work)
        progs = [("hello_mmpicc", "hello-c"), ("hello_pkgconfig", "hello-c"),
                 ("cm/hello_cmake", "hello-c")]
        # MMPI_MPICC picks the underlying wrapper: a wrapper that says it ran.
        fake = os.path.join(work, "fake-mpicc")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho fake-mpicc-ran\nexec mpicc \"$@\"\n")
        os.chmod(fake, 0o755)
        r = run([os.path.join(b, "mmpicc"), "hello.c", "-o", "hello_fake"],
                dict(clean, MMPI_MPICC=fake), work)
        if "fake-mpicc-ran" not in r.stdout:
            raise SystemExit("FAIL: mmpicc ignored MMPI_MPICC")
        if have_fortran:
            run([os.path.join(b, "mmpif90"), "hello.f90", "-o", "hello_mmpif90"], clean, work)
            inc = os.path.join(prefix, "include")
            # docs/fortran.md's line, with Debian's --as-needed spelled out.
            run(["mpif90", "-Wl,--as-needed", f"-I{inc}", "hello.f90", "-o", "hello_f_docs",
                 f"-L{lib}", "-lmmpi_mpifh", "-lmmpi", f"-Wl,-rpath,{lib}"], clean, work)
            r = run([os.path.join(b, "mmpif90"), "--version"],
                    dict(clean, MMPI_MPIF90="/bin/echo"), work)
            if "--version" not in r.stdout:
                raise SystemExit("FAIL: mmpif90 ignored MMPI_MPIF90")
            progs += [("hello_mmpif90", "hello-f"), ("hello_f_docs", "hello-f")]
        else:
            print("Fortran: no mpif90/gfortran, the Fortran builds are left out")
        for prog, expect in progs:
            job(prefix, os.path.join(work, prog), clean, work, expect)
        r = run([os.path.join(b, "zipper-tune"), "--help"], clean, work)
        if "Usage" not in r.stdout and "usage" not in r.stdout.lower():
            raise SystemExit(f"FAIL: zipper-tune --help printed no usage\n{r.stdout}")
        print("zipper-tune --help: OK")
        osu = os.path.join(prefix, "libexec", "zipper", "osu_latency")
        r = run([os.path.join(b, "zipper-run"), "--local", "--port", str(PORT), "-x", "1", "-y",
                 "1", "--timeout", "120", "--", osu, "-m", "8:8", "-i", "20", "-x", "2"],
                clean, work)
        if not any(line.split()[:1] == ["8"] for line in r.stdout.splitlines()):
            raise SystemExit(f"FAIL: osu_latency printed no 8-byte row\n{r.stdout}{r.stderr}")
        print("installed osu_latency 1+1: OK")
    print("PASS relocatable_install")
    return 0


if __name__ == "__main__":
    sys.exit(main())
