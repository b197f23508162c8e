//! Documentation data shared by the man pages, `docs/commands.md` and the
//! tests: usage examples per command and the exit-status text.

/// `(command line, what it does)` examples for a command.
pub fn examples(name: &str) -> &'static [(&'static str, &'static str)] {
    match name {
        "msub" => &[
            (
                "msub job.sh",
                "Submit job.sh; prints an empty line and the job id.",
            ),
            (
                "msub -l nodes=2:ppn=4,walltime=1:00:00 -N sim job.sh",
                "Request 8 processors on 2 nodes for one hour.",
            ),
            (
                "msub -q batch -A proj1 -j oe -o /tmp/out < job.sh",
                "Submit a script read from standard input.",
            ),
            (
                "msub --xml job.sh",
                "Print <Data><job JobID=\"...\"/></Data> instead of the id.",
            ),
            ("msub -K job.sh", "Wait until the job completes."),
            (
                "msub -t myarray[1-100]%5 job.sh",
                "A job array of 100 sub-jobs, at most 5 running at once; each sees PBS_ARRAYID and writes myarray.o<id>-<index>.",
            ),
            (
                "msub -W depend=afterokarray:17[] job.sh",
                "Start once every sub-job of array 17 completed successfully.",
            ),
            ("msub job.sh in.dat 4", "Run job.sh with the arguments in.dat and 4 (also -F \"in.dat 4\")."),
        ],
        "showq" => &[
            (
                "showq",
                "Active, eligible and blocked jobs with cluster usage.",
            ),
            ("showq -w user=$USER", "Only your own jobs."),
            ("showq -t", "Every sub-job of a job array on its own line."),
            (
                "showq -r",
                "Active jobs with partition, xfactor, group and master host.",
            ),
            (
                "showq -c --xml",
                "Recently completed jobs as XML, with exit codes.",
            ),
        ],
        "checkjob" => &[
            ("checkjob 17", "Full status of job 17."),
            ("checkjob -v 17 18", "Verbose status of two jobs."),
            ("checkjob --xml 17", "The job as Moab XML."),
            ("checkjob -A 17", "One line of ATTRIBUTE=VALUE; pairs, for scripts."),
            ("checkjob -q high -r system.1 17", "May job 17 use QoS high and reservation system.1?"),
        ],
        "checknode" => &[
            (
                "checknode n01",
                "State, resources and reservations of node n01.",
            ),
            ("checknode --xml ALL", "Every node as Moab XML."),
        ],
        "canceljob" | "mdel" => &[
            ("canceljob 17", "Cancel job 17; prints job '17' cancelled."),
            ("canceljob 17 18 19", "Cancel several jobs."),
        ],
        "mjobctl" => &[
            ("mjobctl -c 17", "Cancel job 17."),
            ("mjobctl -c 17[3]", "Cancel sub-job 3 of array 17 (17 or 17[] is the whole array)."),
            ("mjobctl -m depend=afterok:12 17", "Make job 17 wait for job 12's success."),
            ("mjobctl -h user 17", "Place a user hold on job 17."),
            ("mjobctl -u all 17", "Release every hold of job 17."),
            (
                "mjobctl -m wclimit=2:00:00 17",
                "Change the wall-clock limit of job 17.",
            ),
            ("mjobctl -q diag ALL --format=xml", "Every job as Moab XML."),
        ],
        "releasehold" => &[
            ("releasehold 17", "Release the user hold of job 17."),
            ("releasehold -a 17", "Release every hold of job 17."),
        ],
        "sethold" => &[
            ("sethold 17", "Place a user hold on job 17."),
            ("sethold -b 17", "Place a batch hold on job 17."),
        ],
        "runjob" => &[
            ("runjob 17", "Start job 17 now."),
            (
                "runjob -x 17",
                "Start job 17 now, ignoring policies and reservations.",
            ),
        ],
        "mdiag" => &[
            ("mdiag -S", "Scheduler status."),
            ("mdiag -p", "Priority breakdown of queued jobs."),
            ("mdiag -n --xml", "Every node as Moab XML."),
            ("mdiag -j 17 --xml", "Job 17 as Moab XML."),
            ("mdiag -b", "Why blocked jobs are blocked."),
            ("mdiag -f", "Fairshare usage per user, group, account, QoS and class and interval."),
        ],
        "mschedctl" => &[
            ("mschedctl -p", "Pause scheduling."),
            ("mschedctl -f all", "Start a new statistics period (showstats, mdiag -f)."),
            ("mschedctl -r", "Resume scheduling."),
            (
                "mschedctl -m config \"RESERVATIONDEPTH 4\"",
                "Change a parameter at run time.",
            ),
            ("mschedctl -k", "Stop the daemon."),
        ],
        "showbf" => &[
            ("showbf", "Resources free right now, per partition."),
            (
                "showbf -d 2:00:00 -n 2",
                "Windows of at least two nodes lasting two hours.",
            ),
        ],
        "showstart" => &[
            ("showstart 17", "Estimated start of job 17."),
            (
                "showstart 16@1:00:00",
                "When a 16-processor one-hour job could start.",
            ),
        ],
        "showres" => &[
            ("showres", "Every reservation."),
            (
                "showres -n",
                "Reserved nodes, one line per node and reservation.",
            ),
        ],
        "showstats" => &[
            ("showstats", "Scheduler statistics of the period (jobs, queue time, utilization, backfill, wall-clock accuracy)."),
            ("showstats -u alice", "Running and completed work of user alice."),
            ("showstats -f WCACCURACY", "Wall-clock accuracy by job size and requested wall time."),
            ("showstats --xml", "The statistics as Moab XML."),
        ],
        "mrsvctl" => &[
            (
                "mrsvctl -c -h n01,n02 -s +1:00:00 -d 2:00:00 -a USER==alice",
                "Reserve two nodes for alice in one hour, for two hours.",
            ),
            ("mrsvctl -r system.1", "Release reservation system.1."),
        ],
        "setspri" => &[
            ("setspri 10 17", "Give job 17 system priority 10 (above every job without one)."),
            ("setspri 0 17", "Clear job 17's system priority."),
            ("setspri -r 100000 17", "Add 100000 to job 17's system priority."),
        ],
        "releaseres" => &[("releaseres system.1 bob.2", "Release two reservations.")],
        "setres" => &[
            (
                "setres -u john:mary -s +24:00:00 -d 8:00:00 TASKS==2",
                "Reserve two processors for john and mary in 24 hours, for 8 hours (john.1).",
            ),
            (
                "setres -s 8:00:00_06/20 -e 17:00:00_06/22 ALL",
                "Reserve every node for maintenance (system.N).",
            ),
            ("setres -g staff 'node00[3-6]'", "Reserve node003-node006 for group staff."),
        ],
        "resetstats" => &[("resetstats", "Start the statistics afresh (as mschedctl -f all).")],
        "mshow" => &[
            (
                "mshow -a -w minprocs=4,duration=2:00:00",
                "When and where 4 processors are free for two hours now.",
            ),
            (
                "mshow -a -w minprocs=4,duration=2:00:00 --flags=future",
                "The same, also windows that open later.",
            ),
            ("mshow -a -w gres=gpu,duration=30:00 --format=xml", "GPU windows as Moab XML."),
        ],
        "showhist" => &[
            ("showhist 17", "The record of completed job 17 (also as showhist.moab.pl 17)."),
            (
                "showhist.moab.pl -n 5 17 | grep 'Exit Code' | awk '{print $NF}'",
                "Job 17's exit code, if it ended in the last 5 days.",
            ),
        ],
        "mcredctl" => &[
            ("mcredctl -q config user:alice", "alice's configuration and usage (as mdiag -u alice)."),
            (
                "mcredctl -q accessfrom user:alice --format=xml",
                "The accounts, QoS and classes alice may use, as Moab XML.",
            ),
        ],
        "showstate" => &[("showstate", "Active jobs and where they run, with the node problems found.")],
        "showconfig" => &[
            ("showconfig", "Major parameters and those not at their default."),
            ("showconfig -v | grep RESERVATION", "Every parameter, filtered."),
        ],
        _ => &[],
    }
}

/// The EXIT STATUS text of every client.
pub const EXIT_STATUS: &str = "0 on success. 1 on any error: the daemon cannot be reached \
(ERROR:    cannot connect to Moab server '<socket>' (<reason>)), the client timed out, the daemon \
rejected the request, or an argument is invalid. Error messages go to standard error.";

/// The ENVIRONMENT text of every client.
pub const ENVIRONMENT: &str = "MOAB_SOCKET: the daemon's Unix socket. MOABHOMEDIR: the home \
directory holding moab.sock (default ~/.arches). With neither set and no ~/.arches/moab.sock, \
the system service's socket /run/arches/moab.sock. TZ: time zone of printed dates.";
