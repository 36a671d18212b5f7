#!/usr/bin/env python3
"""Error paths of capi/gen (classification and bindings), on a copy of the
source tree. usage: test_gen_api.py MPI_H SOURCE_ROOT"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

MPI_H, ROOT = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(ROOT, "capi", "gen"))
import classify  # noqa: E402
import gen_c  # noqa: E402
import gen_fortran  # noqa: E402
import gen_transparent  # noqa: E402
from mpi_protos import parse_mpi_h  # noqa: E402

PROTOS = parse_mpi_h(MPI_H)


class GenApiTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gen_api_test.")
        for d in ("capi", "client", "collectives"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(self.tmp, d))
        self.cls = os.path.join(self.tmp, "capi", "gen", "classification.txt")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, fn):
        with open(self.cls) as f:
            lines = f.read().splitlines()
        with open(self.cls, "w") as f:
            f.write("\n".join(fn(lines)) + "\n")

    def handwrite(self, code):
        with open(os.path.join(self.tmp, "capi", "handwritten_test.c"), "w") as f:
            f.write(code)

    def classify(self):
        return classify.classify(PROTOS, self.cls, self.tmp)

    def test_tree_as_is(self):
        entries, extra = self.classify()
        self.assertEqual(len(entries), len(PROTOS))
        self.assertEqual(extra, [])
        by = {e.name: e for e in entries}
        self.assertEqual(by["Send"].status, "implemented")
        self.assertEqual(by["Type_vector"].status, "passthrough")
        self.assertEqual(by["Win_create"].status, "implemented")  # one-sided
        self.assertEqual(by["Win_set_name"].status, "passthrough")
        self.assertEqual(by["Open_port"].status, "unsupported")
        self.assertIn("dynamic process management", by["Open_port"].reason)
        self.assertIn("Aint_add", by)  # a macro in Open MPI, a function in MPI-3.1
        self.assertNotIn("Address", by)  # removed in MPI-3.0
        self.assertNotIn("Type_struct", by)

    def test_unclassified(self):
        self.edit(lambda ls: [l for l in ls if not l.startswith("Type_vector ")])
        with self.assertRaisesRegex(classify.ClassificationError, "MPI_Type_vector: not classified"):
            self.classify()

    def test_classified_twice(self):
        self.edit(lambda ls: ls + ["Type_vector unsupported \"twice\""])
        with self.assertRaisesRegex(classify.ClassificationError, "MPI_Type_vector classified twice"):
            self.classify()

    def test_unknown_function_and_status(self):
        self.edit(lambda ls: ls + ["Not_a_function passthrough", "Wtick maybe"])
        with self.assertRaises(classify.ClassificationError) as cm:
            self.classify()
        self.assertIn("MPI_Not_a_function is not an MPI-3.1 function", str(cm.exception))
        self.assertIn("unknown status 'maybe'", str(cm.exception))

    def test_unsupported_needs_reason(self):
        self.edit(lambda ls: [("Close_port unsupported" if l.startswith("Close_port ") else l)
                              for l in ls])
        with self.assertRaisesRegex(classify.ClassificationError, "needs a \"reason\""):
            self.classify()

    def test_handwritten_but_classified(self):
        self.handwrite("int MMPI_Type_size(MPI_Datatype t, int* s)\n{ return 0; }\n")
        with self.assertRaisesRegex(classify.ClassificationError,
                                    "MPI_Type_size: hand-written in capi/handwritten_test.c"):
            self.classify()

    def test_planned_then_implemented(self):
        # A function being written: a planned line gives an unsupported twin.
        self.edit(lambda ls: [("Comm_join planned" if l.startswith("Comm_join ") else l)
                              for l in ls])
        entries, _ = self.classify()
        self.assertEqual({e.name: e for e in entries}["Comm_join"].status, "planned")
        src = gen_c.source(PROTOS, entries)
        self.assertIn('"MMPI_Comm_join", "not yet implemented"', src)
        self.assertIn("= MMPI_Comm_join(", gen_fortran.source(PROTOS, entries))
        # Once hand-written, the planned line is stale: the generator fails
        # until the line goes.
        done = PROTOS["Comm_join"]
        self.handwrite(f"{done.ret} MMPI_{done.name}({done.c_params()}) {{\n  return 0;\n}}\n")
        with self.assertRaisesRegex(classify.ClassificationError,
                                    "MPI_Comm_join: hand-written in capi/handwritten_test.c but "
                                    "a stale 'planned' line"):
            self.classify()
        self.edit(lambda ls: [l for l in ls if not l.startswith("Comm_join ")])
        entries, _ = self.classify()
        self.assertEqual({e.name: e for e in entries}["Comm_join"].status, "implemented")
        self.assertNotIn(" MMPI_Comm_join(", gen_c.source(PROTOS, entries))

    def test_generated_twins(self):
        entries, _ = self.classify()
        src = gen_c.source(PROTOS, entries)
        self.assertIn("{ return MPI_Type_vector(count, blocklength, stride, oldtype, newtype); }",
                      src)
        self.assertIn('mmpi_report_unsupported("MMPI_Open_port", "dynamic process', src)
        # A window's errors go to the window's handler.
        self.assertIn('mmpi_win_err_raise(win, rc_, "MMPI_Win_fence")', src)
        # MMPI_Send's body is hand-written (mmpi_impl_Send): the generated
        # MMPI_Send only raises its error on the communicator's handler.
        self.assertIn("  const int rc_ = mmpi_impl_Send(buf, count, datatype, dest, tag, comm);\n"
                      "  return rc_ == MPI_SUCCESS ? rc_ : mmpi_err_raise(mmpi_err_of_comm(comm), "
                      "rc_, \"MMPI_Send\");\n", src)
        # A request's communicator is taken before the call may free it.
        self.assertIn("  const mmpi_err_target t_ = mmpi_err_of_request(*request);\n"
                      "  const int rc_ = mmpi_impl_Wait(request, status);\n", src)
        # Pass-throughs on a communicator raise on it too; others do not.
        self.assertIn("mmpi_err_raise(mmpi_err_of_comm(comm), rc_, \"MMPI_Comm_set_attr\")", src)
        self.assertNotIn("MMPI_Init(", src)  # hand-written, no wrapper
        impl = gen_c.impl_header(PROTOS, entries)
        self.assertIn("int mmpi_impl_Send(", impl)
        self.assertNotIn("mmpi_impl_Init(", impl)
        hdr = gen_c.header(PROTOS, entries)
        declared = re.findall(r"^[\w ]+\bMMPI_(\w+)\(", hdr, re.M)
        self.assertEqual(sorted(declared), sorted(PROTOS))  # every function, once

    def test_weights_take_the_sentinels(self):
        # Dist-graph weights are declared as pointers: a program passing
        # MPI_UNWEIGHTED ((int *) 2) or MPI_WEIGHTS_EMPTY compiles without
        # GCC 12's -Wstringop-overread, which an array parameter draws.
        entries, _ = self.classify()
        hdr = gen_c.header(PROTOS, entries)
        cc = shutil.which("gcc") or shutil.which("cc")
        if cc is None:
            self.skipTest("no C compiler")
        with open(os.path.join(self.tmp, "mmpi_generated.h"), "w") as f:
            f.write(hdr)
        prog = os.path.join(self.tmp, "weights.c")
        with open(prog, "w") as f:
            f.write('#include "mmpi_generated.h"\n'
                    "int f(MPI_Comm c, MPI_Comm* d) {\n"
                    "  int s[1] = {0};\n"
                    "  return MMPI_Dist_graph_create_adjacent(c, 1, s, MPI_UNWEIGHTED, 1, s,\n"
                    "             MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, d) +\n"
                    "         MMPI_Dist_graph_create(c, 1, s, s, s, MPI_UNWEIGHTED,\n"
                    "             MPI_INFO_NULL, 0, d);\n"
                    "}\n")
        r = subprocess.run([cc, "-O2", "-Wall", "-Werror", "-I", os.path.dirname(MPI_H), "-c",
                            prog, "-o", os.devnull], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue("const int* sourceweights" in hdr, "weights declared as arrays")

    def test_fortran_unknown_argument_type(self):
        # A hand-written MMPI_Comm_spawn would need argv (char*[]) converted.
        self.edit(lambda ls: [l for l in ls if not l.startswith("Comm_spawn ")])
        self.handwrite("int MMPI_Comm_spawn(const char* c, char* argv[], int n, MPI_Info i,\n"
                       "    int root, MPI_Comm comm, MPI_Comm* ic, int e[]) { return 0; }\n")
        entries, _ = self.classify()
        with self.assertRaisesRegex(gen_fortran.BindingError,
                                    r"MPI_Comm_spawn: no Fortran conversion for 'char \*argv\[\]'"):
            gen_fortran.source(PROTOS, entries)


    def test_transparent_layer(self):
        entries, _ = self.classify()
        src = gen_transparent.c_source(PROTOS)
        # Every communicator in is translated, every one out translated back.
        self.assertIn("return MMPI_Send(buf, count, datatype, dest, tag, mmpit_comm_in(comm));",
                      src)
        self.assertIn("if (newcomm != NULL) *newcomm = mmpit_comm_out(*newcomm);", src)
        self.assertIn("MPI_Comm comm_z = mmpit_comm_in(*comm);", src)  # Comm_free: in and out
        defined = set(re.findall(r"^[\w ]+\bMPI_(\w+)\(", src, re.M))
        self.assertEqual(defined | gen_transparent.HANDWRITTEN,
                         set(PROTOS) - {"Aint_add", "Aint_diff"})
        # A function whose callback receives a communicator must be hand-written.
        saved = set(gen_transparent.HANDWRITTEN)
        gen_transparent.HANDWRITTEN.discard("Comm_create_keyval")
        try:
            with self.assertRaisesRegex(gen_transparent.TransparentError,
                                        "MPI_Comm_create_keyval takes a callback"):
                gen_transparent.c_source(PROTOS)
        finally:
            gen_transparent.HANDWRITTEN |= saved
        # Fortran: four manglings of every bound routine, communicators translated.
        fsrc = gen_transparent.fortran_source(PROTOS, entries, gen_fortran.source(PROTOS, entries))
        for alias in ("mpi_send_", "mpi_send__", "MPI_SEND"):
            self.assertIn(f"MMPIT_ALIAS(mpi_send, {alias})", fsrc)
        self.assertIn("MPI_Fint comm_z = mmpit_fcomm_in(*comm);", fsrc)
        self.assertNotIn("void mpi_init(", fsrc)  # hand-written (transparent_init.c)
        hdr = gen_transparent.pmpi_header(PROTOS)
        self.assertIn("#define MPI_Send PMPI_Send\n", hdr)
        # Data-moving collectives go through the profile's counting wrappers.
        self.assertIn("#define MPI_Ibcast mmpi_traffic_Ibcast\n", hdr)
        self.assertIn('__attribute__((visibility("hidden"))) int mmpi_traffic_Ibcast(', hdr)
        self.assertIn("#define MPI_Barrier PMPI_Barrier\n", hdr)  # moves no data
        self.assertNotIn("MPI_Aint_add", hdr)  # a macro in Open MPI



MPICH_H = "/usr/include/x86_64-linux-gnu/mpich/mpi.h"


@unittest.skipUnless(os.path.exists(MPICH_H), "MPICH 4's mpi.h is not installed (libmpich-dev)")
class MpichTest(unittest.TestCase):
    """MPICH 4's headers give the same MPI-3.1 set (docs/mpi.md); its handle
    conversions are macros; the transparent layer refuses what lies beyond."""

    def tearDown(self):
        parse_mpi_h(MPI_H)  # the module's macro table back to this build's MPI

    def test_same_functions_and_refusals(self):
        import mpi_protos
        mp = parse_mpi_h(MPICH_H)
        self.assertEqual(set(mp), set(PROTOS))
        self.assertIn("Comm_c2f", mpi_protos.MACRO_FUNCTIONS)
        self.assertNotIn("Aint_add", mpi_protos.MACRO_FUNCTIONS)  # a function in MPICH
        self.assertEqual(mp["File_iread"].params[-1].ctype, "MPI_Request*")  # not MPIO_Request
        src = gen_transparent.c_source(mp)
        for refused in ("Isendrecv", "Send_c", "Allreduce_init", "Psend_init", "Session_init",
                        "Comm_create_from_group"):
            self.assertIn(f'return mmpit_refuse("MPI_{refused}", &reported);', src)
        for local in ("Type_contiguous_c", "T_source_get_num", "Comm_c2f"):
            self.assertNotIn(f"MPI_{local}(", src)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
