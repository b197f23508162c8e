"""dask-jobqueue end to end against Arches (driven by tests/clients.rs).

Starts a MoabCluster whose scheduler listens on 127.0.0.1, scales to two worker
jobs (submitted with our `msub`), computes a sum of squares on them, closes the
cluster (our `canceljob`) and prints one JSON line:
{"result": <int>, "job_ids": [...], "workers": <int>, "job_script": "..."}.
Usage: python dask_e2e.py <log_directory> [<resource_spec>]
"""

import json
import sys

from dask.distributed import Client
from dask_jobqueue import MoabCluster


def main() -> None:
    log_dir = sys.argv[1]
    # Unset: dask-jobqueue's default PBS-Pro "select=" resource line.
    resource_spec = sys.argv[2] if len(sys.argv) > 2 else None
    cluster = MoabCluster(
        cores=1,
        memory="1GB",
        processes=1,
        walltime="00:05:00",
        queue=None,
        resource_spec=resource_spec,
        job_name="dask-e2e",
        log_directory=log_dir,
        scheduler_options={"host": "127.0.0.1"},
        worker_extra_args=["--host", "127.0.0.1"],
        death_timeout=60,
    )
    script = cluster.job_script()
    cluster.scale(2)
    client = Client(cluster)
    client.wait_for_workers(2, timeout=120)
    job_ids = sorted(job.job_id for job in cluster.workers.values())
    workers = len(client.scheduler_info()["workers"])
    futures = client.map(lambda x: x * x, range(10))
    result = client.submit(sum, futures).result(timeout=60)
    client.close()
    cluster.close()
    print(json.dumps({"result": result, "job_ids": job_ids, "workers": workers, "job_script": script}))


if __name__ == "__main__":
    main()
