"""vsc-tools-lib (PyPI vsc-tools-lib-gjbex) parses Arches text output.

Feeds our plain `showq` and `checkjob` output, saved to files by
tests/clients.rs, to vsc-tools-lib's ShowqParser and CheckjobParser and prints
one JSON line:
{"showq": {"active": [{"id", "username", "state", "procs"}...], ...},
 "checkjob": {"account": ..., "holds": [...]}}.
Usage: python vsc_parse.py <showq.txt> <checkjob.txt>
"""

import json
import sys

from vsc.moab.checkjob import CheckjobParser
from vsc.moab.job import JobStatus
from vsc.moab.showq import ShowqParser


def main() -> None:
    with open(sys.argv[1]) as f:
        sections = ShowqParser().parse_file(f)
    showq = {
        name: [
            {"id": j.id, "username": j.username, "state": j.state, "procs": j.procs}
            for j in jobs
        ]
        for name, jobs in sections.items()
    }
    with open(sys.argv[2]) as f:
        checkjob_text = f.read()
    job = JobStatus(id="0", username="", state="", procs="", time="", date="")
    CheckjobParser().parse(job, checkjob_text)
    print(json.dumps({"showq": showq, "checkjob": {"account": job.account, "holds": job.holds}}))


if __name__ == "__main__":
    main()
