# SPDX-License-Identifier: GPL-2.0
"""Unit tests of tools/setup/mq-deadline-wrap on a made-up source with
the anchors it changes: the one change of dispatch and the new name are
made, and a source without deadline_from_pos() (6.1) or whose anchors
moved is refused with exit 3, writing nothing."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "mq-deadline-wrap")

SOURCE = """static inline struct request *deadline_from_pos(struct dd_per_prio *per_prio,
				enum dd_data_dir data_dir, sector_t pos)
{
}

	next_rq = deadline_next_request(dd, per_prio, data_dir);
	if (deadline_check_fifo(per_prio, data_dir) || !next_rq) {
		/*
		 * A deadline has expired, the last request was in the other
		 * direction, or we have run out of higher-sectored requests.
		 * Start again from the request with the earliest expiry time.
		 */
		rq = deadline_fifo_request(dd, per_prio, data_dir);
	} else {
		rq = next_rq;
	}

static struct elevator_type mq_deadline = {
	.elevator_name = "mq-deadline",
	.elevator_alias = "deadline",
	.elevator_owner = THIS_MODULE,
};
MODULE_ALIAS("mq-deadline-iosched");
MODULE_DESCRIPTION("MQ deadline IO scheduler");
"""


class Wrap(unittest.TestCase):
    def run_tool(self, text):
        d = tempfile.mkdtemp()
        src, out = os.path.join(d, "mq-deadline.c"), os.path.join(d, "out.c")
        with open(src, "w") as f:
            f.write(text)
        r = subprocess.run([sys.executable, TOOL, src, out],
                           capture_output=True, text=True)
        made = open(out).read() if os.path.exists(out) else None
        return r, made

    def test_the_one_change_and_the_name(self):
        r, made = self.run_tool(SOURCE)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("} else if (!next_rq) {", made)
        self.assertIn("rq = deadline_from_pos(per_prio, data_dir, 0);", made)
        self.assertIn("if (deadline_check_fifo(per_prio, data_dir)) {", made)
        self.assertIn('.elevator_name = "deadline-wrap",', made)
        self.assertNotIn(".elevator_alias", made)
        self.assertIn('MODULE_ALIAS("deadline-wrap-iosched");', made)
        # the expired case still goes to the earliest deadline
        self.assertEqual(made.count("deadline_fifo_request("), 1)

    def test_refused_without_a_position(self):
        r, made = self.run_tool(SOURCE.replace("deadline_from_pos(", "other("))
        self.assertEqual(r.returncode, 3)
        self.assertIn("no deadline_from_pos()", r.stderr)
        self.assertIsNone(made)

    def test_refused_when_an_anchor_moved(self):
        r, made = self.run_tool(SOURCE.replace("|| !next_rq) {", "|| !next) {"))
        self.assertEqual(r.returncode, 3)
        self.assertIn("anchor found 0 times", r.stderr)
        self.assertIsNone(made)


if __name__ == "__main__":
    unittest.main()
