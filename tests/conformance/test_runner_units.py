#!/usr/bin/env python3
"""The conformance runner's planning without building or running anything:
splits per entry, and runs that are listed as not run at some splits."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mpich_conformance  # noqa: E402
from mpich_suite import allowed  # noqa: E402


class Splits(unittest.TestCase):
    def test_sample_has_both_uneven_splits(self):
        self.assertEqual(mpich_conformance.splits_for(4, "sample"),
                         [(4, (1, 3)), (4, (2, 2)), (4, (3, 1))])

    def test_even(self):
        self.assertEqual(mpich_conformance.splits_for(5, "even"), [(5, (2, 3))])


class NotRunAtSplit(unittest.TestCase):
    def test_win_shared_create_needs_two_ranks_per_node(self):
        for prog in ("rma/win_shared_create_allocshm", "rma/win_shared_create_no_allocshm"):
            for split in ((1, 3), (3, 1), (1, 1)):
                why = allowed.not_run_at_split(prog, split)
                self.assertIn(f"at {split[0]}+{split[1]}", why)
                self.assertIn("MPI_Win_create", why)
            self.assertEqual(allowed.not_run_at_split(prog, (2, 2)), "")

    def test_other_programs_run_at_every_split(self):
        for prog in ("rma/win_shared_create", "rma/win_shared_noncontig", "coll/bcasttest"):
            self.assertEqual(allowed.not_run_at_split(prog, (1, 3)), "")


if __name__ == "__main__":
    unittest.main()
