"""FireWorks end to end against Arches (driven by tests/clients.rs).

Runs the real FireWorks command-line tools with a mongomock store (no MongoDB):
`lpad reset`, `lpad add_scripts` (two Fireworks with a ScriptTask each),
`qlaunch singleshot` and `qlaunch rapidfire --nlaunches 1 --maxjobs_queue 10`
with a `_fw_q_type: MOAB` queue adapter, so both submissions go through our
`msub` (and rapidfire first asks our `showq -w user=<login>`). The submitted
jobs run `rlaunch singleshot`. mongomock's file store cannot be shared by
concurrent processes, so after each submission this script waits, with
FireWorks' own queue count (`showq -w user=<login>`), until the queue is back
to its size before the submission; then it reads the Firework states and
prints one JSON line:
{"states": [...], "njobs_before": N, "njobs_after": N, "user": "...", "outputs": [...]}.
Usage: python fireworks_e2e.py <work_dir>  (cwd and PATH set by the caller)
"""

import getpass
import glob
import json
import os
import subprocess
import sys
import time

TIMEOUT_S = 120


def run(*argv: str) -> str:
    """Runs a FireWorks CLI tool, failing loudly with its output."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def fw_states() -> list:
    """States of all Fireworks, in Firework id order."""
    out = run("lpad", "get_fws", "-d", "less")
    # lpad may print log lines (e.g. optional-extra warnings) before the JSON.
    lines = out.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(("[", "{"))), None)
    if start is None:
        sys.exit(f"lpad get_fws printed no JSON:\n{out}")
    docs = json.loads("\n".join(lines[start:]))
    if isinstance(docs, dict):
        docs = [docs]
    return [d["state"] for d in sorted(docs, key=lambda d: d["fw_id"])]


def main() -> None:
    work = os.path.abspath(sys.argv[1])
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    store = os.path.join(work, "mongomock.json")
    with open(store, "w") as f:
        f.write("{}")
    os.environ["MONGOMOCK_SERVERSTORE_FILE"] = store
    rlaunch = os.path.join(os.path.dirname(sys.executable), "rlaunch")
    with open("my_qadapter.yaml", "w") as f:
        f.write(
            "_fw_name: CommonAdapter\n"
            "_fw_q_type: MOAB\n"
            f"rocket_launch: {rlaunch} singleshot\n"
            f"pre_rocket: export MONGOMOCK_SERVERSTORE_FILE={store}\n"
            "nodes: 1\n"
            "ppn: 1\n"
            "walltime: '00:05:00'\n"
            "job_name: fw_e2e\n"
        )

    from fireworks.user_objects.queue_adapters.common_adapter import CommonAdapter

    adapter = CommonAdapter(q_type="MOAB")
    njobs_before = adapter.get_njobs_in_queue()

    def drain() -> None:
        """Waits until the user's queue is back to its size before our submissions."""
        deadline = time.time() + TIMEOUT_S
        while adapter.get_njobs_in_queue() != njobs_before:
            if time.time() > deadline:
                sys.exit(f"queue never drained back to {njobs_before} jobs")
            time.sleep(0.5)

    run("lpad", "reset", "--password", time.strftime("%Y-%m-%d"))
    run("lpad", "add_scripts", "echo hello-from-fw > out.txt", "-n", "hello")
    run("qlaunch", "-q", "my_qadapter.yaml", "singleshot")
    drain()
    run("lpad", "add_scripts", "echo again-from-fw > out.txt", "-n", "again")
    run("qlaunch", "-q", "my_qadapter.yaml", "rapidfire", "--nlaunches", "1", "--maxjobs_queue", "10")
    drain()
    states = fw_states()

    outputs = sorted(
        open(p).read().strip() for p in glob.glob(os.path.join(work, "**", "out.txt"), recursive=True)
    )
    njobs_after = adapter.get_njobs_in_queue()
    print(
        json.dumps(
            {
                "states": states,
                "njobs_before": njobs_before,
                "njobs_after": njobs_after,
                "user": getpass.getuser(),
                "outputs": outputs,
            }
        )
    )


if __name__ == "__main__":
    main()
